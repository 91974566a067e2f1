// Healer policies: detection thresholds, correlation, circuit breaker and remediation choices, as YAML.
// Three ship in the binary (conservative, default, aggressive); a path loads a site's own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/topology.h"
#include "core/status.h"
#include "core/units.h"

namespace rackchaos::healer {

// How long a repair of each component class takes (a part swapped by a technician), keyed as in the
// policy's `repair:` section.
struct RepairTimes {
  Duration gpu = Duration::Hours(4);
  Duration tray = Duration::Hours(4);
  Duration nic = Duration::Hours(2);
  Duration cooling = Duration::Hours(2);
  Duration switch_tray = Duration::Hours(4);
  Duration power = Duration::Hours(2);
  Duration rack = Duration::Hours(16);
  Duration Of(const std::string& cls) const;
};

// A rank persistently off the rest in one series of its step reports (slow_link: send times; the
// straggler fields below are the same test on compute times).
struct OutlierTest {
  Duration window = Duration::Minutes(5);
  int min_reports = 3;
  double mad_threshold = 6;
  double min_slowdown = 0.05;
  Duration min_excess{};  // and slower than the median by at least this much
};

struct Policy {
  std::string name;
  std::string description;
  int heartbeat_missed_beats = 3;
  Duration straggler_window = Duration::Minutes(5);
  int straggler_min_reports = 3;
  double straggler_mad_threshold = 6;
  double straggler_min_slowdown = 0.05;
  OutlierTest slow_link{Duration::Minutes(5), 3, 6, 1.0, Duration::Millis(10)};
  double thermal_temperature_c = 85;
  int thermal_samples = 2;
  double thermal_flow_drop = 0.3;
  // The clock detector (off unless a policy turns it on): a GPU whose power cap holds its SM clock below
  // clock_min_fraction of its maximum for clock_samples polls in a row.
  bool clock_enabled = false;
  double clock_min_fraction = 0.9;
  int clock_samples = 2;
  Duration correlation_window = Duration::Seconds(20);
  int shared_domain_min_trays = 3;
  double breaker_max_share = 0.2;
  Duration breaker_window = Duration::Hours(1);
  bool restart_jobs = true;
  bool gpu_reset = true;
  bool reboot = true;                             // reboot a node whose Xid asks for it, then diagnose
  Duration reboot_wait = Duration::Minutes(10);   // from the reboot to the diagnostic
  bool shrink = false;  // a requeued elastic job may restart on fewer GPUs (down to min_gpus), then grow back
  bool wait_for_repair = false;  // after a failed diagnostic, wait the class's repair time, not `recheck`
  RepairTimes repair;
  Duration recheck = Duration::Minutes(10);
  Duration burn_in = Duration::Minutes(30);  // after a repair: hold this long, diagnose again (0 = none)
};

// The repair class of an isolated domain's kind: "gpu", "tray", "nic", "cooling", "switch_tray",
// "power" or "rack" (the keys of `repair:`).
const char* RepairClassOf(cluster::Kind domain_kind);

// The bounds of every number a policy holds (issue 26): the loader refuses a value outside them naming
// the range, the "Valid ranges" table of docs/policies.md is generated from them (a test checks), and
// sweep grid keys that set a policy value keep them. Durations in seconds, fractions in [0, 1].
struct PolicyBound {
  enum class Kind { kInt, kNumber, kDuration, kFraction };
  std::string_view key;  // dotted, as in the YAML: "detectors.straggler.window"
  Kind kind;
  double min, max;       // inclusive
};
const std::vector<PolicyBound>& PolicyBounds();
// The bound of `key`; a programmer error (abort) when the table has none.
const PolicyBound& PolicyBoundOf(std::string_view key);
// "a whole number from 1 to 1000", "a duration from 1s to 1d", "a fraction from 0% to 100%".
std::string DescribeBound(const PolicyBound& bound);

std::vector<std::string> ShippedPolicyNames();
// The YAML text of a shipped policy (every key commented), or nullptr for an unknown name.
const char* ShippedPolicyText(const std::string& name);
// A shipped policy by name, or a YAML file when `name_or_path` ends in .yaml/.yml or contains '/'.
Result<Policy> LoadPolicy(const std::string& name_or_path);
Result<Policy> ParsePolicy(const std::string& yaml_text, const std::string& origin);

}  // namespace rackchaos::healer
