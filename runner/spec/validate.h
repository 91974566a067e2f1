// Plan validation against the world: the catalogue (model), the injector table (kinds, parameters,
// target kinds), the topology (selectors resolve, picks drawn from the seeded generator), the healer
// policy and the expectation grammar. The result is a RunSpec: everything a run needs, resolved.
// Errors keep the one-line "FILE:LINE:COL: what; what would be valid" form of the loader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/job.h"
#include "cluster/topology.h"
#include "healer/policy.h"
#include "injectors/injector.h"
#include "runner/spec/expect.h"
#include "runner/plan/plan.h"

namespace rackchaos::runner {

struct ResolvedFault {
  FaultId id = kNoFault;
  const injectors::Injector* injector = nullptr;
  cluster::Target target;
  injectors::Params params;
  Time at{};
  std::optional<Duration> duration;
  std::string selector;
  SourcePos pos;
};

struct RunSpec {
  uint64_t seed = 1;
  cluster::Topology topology;
  int spare_racks = 0;  // cluster.spares.racks (cluster::SimOptions::spare_racks); with regions their sum
  std::vector<int> region_spare_racks;  // per region (cluster::SimOptions::region_spare_racks)
  // With regions: cluster.region_link_gbytes_per_s and object_store_gbytes_per_s (cluster::SimOptions),
  // and the share of the link other traffic takes (region_link_background_percent / 100).
  double region_link_gbytes_per_s = 0, object_store_gbytes_per_s = 0, region_link_background = 0;
  std::vector<cluster::JobConfig> jobs;
  std::vector<ResolvedFault> faults;  // in injection order (time, then plan order)
  healer::Policy policy;
  Time horizon{};
  std::vector<Gate> gates;
  std::optional<int> max_faults_at_once;  // safety: at run time, a fault that would exceed it is skipped
  AbortSpec abort;                        // safety: live abort conditions (runner/engine/watch.h)
  // Valid but suspect, one line each with FILE:LINE:COL ("... can only be empty"): `validate` prints them.
  std::vector<std::string> warnings;
};

struct ValidateOptions {
  std::optional<uint64_t> seed;  // --seed overrides the plan's
  std::string healer_policy;     // --healer overrides the plan's
};

// Sets the model's NVLink partition mode from the plan's cluster.nvlink_mode ("" keeps the model's), and
// its scale-out fabric tiers from cluster.fabric.tiers.
Status ApplyNvlinkMode(const ClusterSpec& cluster, cluster::RackModel& model);

// The plan's regions as the topology takes them (empty without cluster.regions).
std::vector<cluster::RegionSpec> RegionSpecs(const ClusterSpec& cluster);

// Also runs the static safety check (runner/spec/safety.h) when the plan has a safety: section.
Result<RunSpec> ValidatePlan(const Plan& plan, const ValidateOptions& options);

}  // namespace rackchaos::runner
