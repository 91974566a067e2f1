// Plan validation against the world: the catalogue (model), the injector table (kinds, parameters,
// target kinds), the topology (selectors resolve, picks drawn from the seeded generator), the healer
// policy and the expectation grammar. The result is a RunSpec: everything a run needs, resolved.
// Errors keep the one-line "FILE:LINE:COL: what; what would be valid" form of the loader.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
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

// A built topology that any number of RunSpecs hold (a sweep's seeds of one cluster, issue 23), read-only:
// `spec.topology->racks()`, or passed where a `const cluster::Topology&` is asked. Copies share it.
class SharedTopology {
 public:
  SharedTopology() : held_(std::make_shared<Held>()) {}  // an empty topology
  explicit SharedTopology(cluster::Topology topology) : held_(std::make_shared<Held>()) {
    held_->topology = std::move(topology);
  }
  const cluster::Topology& operator*() const { return held_->topology; }
  const cluster::Topology* operator->() const { return &held_->topology; }
  operator const cluster::Topology&() const { return held_->topology; }  // NOLINT: read where a Topology is
  // `make()` for this topology and `key`, computed by the first holder that asks and kept for the others
  // (the digest of the component rows a simulated run stores: one per cluster, not one per seed).
  // Thread-safe.
  std::string Memo(const std::string& key, const std::function<std::string()>& make) const {
    std::lock_guard lock(held_->mu);
    auto it = held_->memo.find(key);
    if (it == held_->memo.end()) it = held_->memo.emplace(key, make()).first;
    return it->second;
  }

 private:
  struct Held {
    cluster::Topology topology;
    std::mutex mu;  // guards memo
    std::map<std::string, std::string> memo;
  };
  std::shared_ptr<Held> held_;
};

struct RunSpec {
  uint64_t seed = 1;
  SharedTopology topology;
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

// Topologies built by earlier validations in this process, by the cluster section that built them:
// a sweep validates each seed, and a later seed of the same cluster shares the first one's topology
// (about 0.08 s and 100 MB at 1,778 racks) instead of building its own. Keeps the last few clusters
// (a grid over cluster settings moves on from one to the next). Thread-safe.
class TopologyCache {
 public:
  // The topology cached for `key`, else `build()`'s (kept when it succeeded).
  Result<SharedTopology> Get(const std::string& key, const std::function<Result<cluster::Topology>()>& build);

 private:
  static constexpr size_t kKeep = 2;
  std::mutex mu_;
  std::vector<std::pair<std::string, SharedTopology>> kept_;  // newest last
};

struct ValidateOptions {
  std::optional<uint64_t> seed;  // --seed overrides the plan's
  std::string healer_policy;     // --healer overrides the plan's
  TopologyCache* topologies = nullptr;  // not owned; null: every validation builds its own
};

// Sets the model's NVLink partition mode from the plan's cluster.nvlink_mode ("" keeps the model's), and
// its scale-out fabric tiers from cluster.fabric.tiers.
Status ApplyNvlinkMode(const ClusterSpec& cluster, cluster::RackModel& model);

// The plan's regions as the topology takes them (empty without cluster.regions).
std::vector<cluster::RegionSpec> RegionSpecs(const ClusterSpec& cluster);

// Also runs the static safety check (runner/spec/safety.h) when the plan has a safety: section.
Result<RunSpec> ValidatePlan(const Plan& plan, const ValidateOptions& options);

}  // namespace rackchaos::runner
