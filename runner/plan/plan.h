// A stress plan as plain values: what cluster, which jobs, what to break when, how to heal, what to expect.
//
// LoadPlan (runner/plan/plan_loader.h) fills these from YAML once; ValidatePlan (runner/spec/validate.h) checks
// them against the catalogue, the injector table and the topology. After that a Plan is not modified.
// Every value keeps the file position it came from, so later checks can still name file:line:column.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/source_pos.h"
#include "core/units.h"

namespace rackchaos::runner {

// A scalar from the plan with where it was written.
struct PlanValue {
  std::string text;
  SourcePos pos;
};

// cluster.regions[]: a region of consecutive racks (rack names run on across regions: r01..).
struct RegionPlan {
  std::string name;
  int racks = 0;
  int spare_racks = -1;  // spares.racks; -1 = the cluster's spares.racks
  SourcePos pos, spares_pos;
};

struct ClusterSpec {
  std::string model = "gb200-nvl72";  // a catalogue model name
  int racks = 1;                      // with regions: their sum
  SourcePos racks_pos;                // where `racks` was written (line 0 = absent)
  std::vector<RegionPlan> regions;    // empty = one region without a name (no region components)
  SourcePos regions_pos;
  int region_link_gbytes_per_s = 50;  // each region to the next, for checkpoint copies [guess]
  int region_link_background_percent = 0;  // of that link, taken by other traffic (0: the copies have it all)
  int object_store_gbytes_per_s = 1000;  // each region's object store read capacity [guess]
  int spare_trays = 0;                // per rack: the last N compute trays are kept free as hot spares
  int spare_racks = 0;                // spares.racks: the last N racks, for jobs whose NVLink domain is lost
  int fabric_tiers = 2;               // fabric.tiers: 2 (leaves, spines) or 3 (+ super-spines)
  SourcePos spares_pos;
  std::string inventory;              // site inventory path for real racks; empty = simulated
  std::string nvlink_mode;            // "full" or "adaptive" overrides the model's NMX partition mode
  SourcePos pos;
};

struct JobSpec {
  std::string name;
  int gpus = 0;
  int tp = 1, pp = 1, dp = 0, ep = 1;  // dp = 0: derived as gpus / (tp * pp)
  bool has_parallelism = false;        // declared: placed and timed by its groups (cluster/job.h)
  SourcePos parallelism_pos;
  // collectives.{tp,dp,ep,pp}: percent of a step each kind of group spends in exposed collectives;
  // -1 = the default (cluster::JobConfig).
  int tp_pct = -1, dp_pct = -1, ep_pct = -1, pp_pct = -1;
  SourcePos collectives_pos;
  int input_mb_per_s = 0;  // what each GPU reads from its tray's storage path at full speed; 0 = none
  SourcePos input_pos;
  bool input_from_object_store = false;  // input_from: object_store (default: cache)
  PlanValue region;                      // region: a cluster.regions name; empty = the first with room
  Duration step_time = Duration::Seconds(10);          // compute per step at full speed
  Duration checkpoint_interval = Duration::Minutes(30);
  Duration checkpoint_write = Duration::Seconds(30);   // until the local store acknowledges
  Duration checkpoint_blocking{};                      // of the write, training stops this long
  Duration checkpoint_copy{};                          // then to another region; 0 = not modelled
  int checkpoint_size_gb = 0;                          // size_gb: copy = size / region link (no copy_time)
  SourcePos checkpoint_pos;
  SourcePos checkpoint_interval_pos, checkpoint_write_pos, checkpoint_blocking_pos;  // line 0: not set
  Duration restart_overhead = Duration::Minutes(5);    // scheduling, loading, warm-up before the next step
  Duration collective_timeout = Duration::Minutes(10); // NCCL watchdog default (600,000 ms)
  int min_gpus = 0;                                    // elastic.min_gpus; 0 = not elastic
  SourcePos elastic_pos;
  SourcePos pos;
};

struct FaultSpec {
  std::string kind;                 // an injector name
  SourcePos kind_pos;
  PlanValue target;                 // a selector, e.g. "r01.tray07.gpu2", "r01.tray[01-04]"
  std::string pick = "one";         // one | all | count:N | percent:P
  SourcePos pick_pos;
  Time at{};
  std::optional<Duration> duration; // `for:` — reverted after this long; absent = stays until the end
  SourcePos at_pos, for_pos;
  std::map<std::string, PlanValue> params;  // injector-specific, validated by the injector
  SourcePos pos;
};

struct HealerSpec {
  std::string policy = "default";   // a shipped policy name or a path to a policy YAML
  SourcePos pos;
};

// Random failures over a window, drawn from a failure catalogue's per-component rates.
struct ChaosSpec {
  std::string catalogue;            // "llama3" or a catalogue file (relative to the plan); empty = no chaos
  double scale = 1;                 // multiplies every rate (stress a short run, or slow it: 0.5)
  // `chaos.rates`: a class (gpu, nic, node) or a cause of the catalogue, by name, with its own rate per
  // component-hour (written per component-day or as an MTBF). Checked against the catalogue by validation.
  struct Rate {
    std::string name;
    double per_hour = 0;
    SourcePos pos;
  };
  std::vector<Rate> rates;
  Time from{};
  std::optional<Time> until;        // default: the plan's duration
  bool one_per_domain = false;      // at most one chaos fault active at once per NVLink domain (rack)
  std::optional<Duration> min_gap;  // at least this long between two chaos faults, cluster-wide
  int gpu_percent = 100, nic_percent = 100, node_percent = 100;  // per class, on top of scale
  SourcePos from_pos, until_pos;
  SourcePos pos;
};

// Live abort conditions (`safety.abort`): the run stops as soon as what the monitoring observes crosses
// one of them, every fault is reverted and the verdict is 'aborted'. Absent = no limit.
struct AbortSpec {
  std::optional<int> gpus_offline;     // GPUs on compute trays whose heartbeats stopped, more than N
  std::optional<int> gpu_temperature;  // any GPU temperature sample above N degrees C
  std::optional<int> jobs_down;        // jobs that ran and are now hung, restarting, failed or requeued, more than N
  std::optional<int> faults_at_once;   // faults applied at once, more than N
  SourcePos pos;
  bool any() const { return gpus_offline || gpu_temperature || jobs_down || faults_at_once; }
};

// Limits a plan puts on itself (`safety:`). Checked statically by ValidatePlan (runner/spec/safety.h) and,
// for max_faults_at_once, again while running: a fault that would exceed it is skipped and recorded.
struct SafetySpec {
  std::optional<int> max_faults_at_once;
  std::optional<int> max_gpus_impaired;  // worst case over time of the GPUs served by the active faults' targets
  std::optional<std::vector<PlanValue>> allow;  // fault kinds the plan may use; absent = any
  AbortSpec abort;
  SourcePos pos;
};

struct Expectation {
  std::string text;                 // e.g. "ttr.max < 30m"
  bool continuous = false;          // also checked while running; a failure stops the run (aborted)
  SourcePos pos;
  bool allow_empty = false;         // a metric with no data (no fault, no job to measure) passes
};

struct Plan {
  std::string path;                 // as given on the command line
  std::string text;                 // the file's bytes, stored with the report
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::optional<Duration> duration; // simulated horizon; default: last fault's end + 1h
  SourcePos duration_pos;
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
  std::vector<FaultSpec> faults;
  ChaosSpec chaos;
  HealerSpec healer;
  SafetySpec safety;
  std::vector<Expectation> expect;
};

}  // namespace rackchaos::runner
