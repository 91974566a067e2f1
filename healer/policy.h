// Healer policies: detection thresholds, correlation, circuit breaker and remediation choices, as YAML.
// Three ship in the binary (conservative, default, aggressive); a path loads a site's own.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace rackchaos::healer {

struct Policy {
  std::string name;
  std::string description;
  int heartbeat_missed_beats = 3;
  Duration straggler_window = Duration::Minutes(5);
  int straggler_min_reports = 3;
  double straggler_mad_threshold = 6;
  double straggler_min_slowdown = 0.05;
  double thermal_temperature_c = 85;
  int thermal_samples = 2;
  double thermal_flow_drop = 0.3;
  Duration correlation_window = Duration::Seconds(20);
  int shared_domain_min_trays = 3;
  double breaker_max_share = 0.2;
  Duration breaker_window = Duration::Hours(1);
  bool restart_jobs = true;
  bool gpu_reset = true;
  Duration recheck = Duration::Minutes(10);
};

std::vector<std::string> ShippedPolicyNames();
// The YAML text of a shipped policy (every key commented), or nullptr for an unknown name.
const char* ShippedPolicyText(const std::string& name);
// A shipped policy by name, or a YAML file when `name_or_path` ends in .yaml/.yml or contains '/'.
Result<Policy> LoadPolicy(const std::string& name_or_path);
Result<Policy> ParsePolicy(const std::string& yaml_text, const std::string& origin);

}  // namespace rackchaos::healer
