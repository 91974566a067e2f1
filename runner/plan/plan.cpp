// Plan values and the table of plan keys (declared in runner/plan/plan_loader.h). The table lives beside the
// structs it describes; plan_loader.cpp reads YAML against it and docs are generated from it.
#include "runner/plan/plan.h"

#include "runner/plan/plan_loader.h"

namespace rackchaos::runner {

namespace {

using T = KeyInfo::Type;
constexpr bool kRequired = true;
constexpr bool kOptional = false;
// Duration bounds are in microseconds (Duration::us).
constexpr int64_t kMilli = 1000, kSecond = 1000 * kMilli, kDay = 86400 * kSecond;

// Bounds: 100000 racks of 72 GPUs is already far beyond any real cluster; the caps keep arithmetic
// (tp * pp * dp) comfortably inside int64. Durations: ten years of simulated time at most; a zero where
// the simulator repeats something (a step, a checkpoint) or ends a fault at once is refused.
const std::vector<KeyInfo> kKeys = {
    {"", "name", T::kString, kRequired, 0, 0, "", "quickstart", "A short name for the plan, used in reports."},
    {"", "description", T::kString, kOptional, 0, 0, "", "\"one GPU link flaps\"", "Free text for humans."},
    {"", "seed", T::kUint64, kOptional, 0, 0, "1", "42",
     "Seed of the random generator; the same seed replays the same run."},
    {"", "duration", T::kDuration, kOptional, kSecond, 3650 * kDay, "last fault's end + 1h", "6h", "Simulated horizon."},
    {"", "cluster", T::kMap, kOptional, 0, 0, "", "{model: gb200-nvl72, racks: 1}", "What hardware to run on."},
    {"", "workload", T::kMap, kOptional, 0, 0, "", "{jobs: [{name: pretrain, gpus: 64}]}",
     "The training jobs that run on it."},
    {"", "faults", T::kList, kOptional, 0, 0, "[]", "[{at: 30m, kind: link_down, target: r01.tray03.gpu2}]",
     "Faults injected at given times."},
    {"", "chaos", T::kMap, kOptional, 0, 0, "", "{catalogue: llama3, scale: 10}",
     "Random failures drawn from a failure catalogue's per-component rates."},
    {"", "healer", T::kMap, kOptional, 0, 0, "", "{policy: default}", "How the self-healing loop behaves."},
    {"", "safety", T::kMap, kOptional, 0, 0, "", "{max_faults_at_once: 2, max_gpus_impaired: 8}",
     "Limits the plan puts on itself; a plan that could break them is refused before it runs."},
    {"", "expect", T::kList, kOptional, 0, 0, "[]", "[\"ttr.max < 30m\"]",
     "Gates checked after the run: each a string, or a map {gate, continuous, allow_empty} to also check it while "
     "running or to let it pass with no data."},

    {"cluster", "model", T::kString, kOptional, 0, 0, "gb200-nvl72", "gb200-nvl72", "A catalogue model name."},
    {"cluster", "racks", T::kInt, kOptional, 1, 100000, "1", "2", "How many racks of the model."},
    {"cluster", "spare_trays", T::kInt, kOptional, 0, 1000, "0", "2",
     "Per rack: the last N compute trays are kept free as hot spares."},
    {"cluster", "nvlink_mode", T::kString, kOptional, 0, 0, "the model's (full)", "adaptive",
     "NVLink partition mode of every rack: full (a lost switch tray makes the domain UNHEALTHY) or adaptive "
     "(every GPU keeps (S-1)/S of its NVLink bandwidth)."},
    {"cluster", "inventory", T::kString, kOptional, 0, 0, "", "sites/lab.yaml",
     "A site inventory for real racks; absent = simulated."},
    {"cluster", "spares", T::kMap, kOptional, 0, 0, "no spare racks", "{racks: 1}",
     "Spare capacity beyond the hot spare trays: whole racks kept free for jobs whose NVLink domain is lost."},
    {"cluster", "regions", T::kList, kOptional, 0, 0, "one region without a name", "[{name: east, racks: 600}]",
     "Regions of consecutive racks, in order (rack names run on across them: r01..). Each region is a component "
     "above its racks with an object store (east.objstore) and a checkpoint store (east.ckptstore); jobs run inside "
     "one region. Instead of racks (or equal to their sum)."},
    {"cluster", "region_link_gbytes_per_s", T::kInt, kOptional, 1, 100000, "50 [guess: 4 x 100G wavelengths]", "25",
     "Bandwidth of the link from each region to the next, for the background checkpoint copy "
     "(workload.jobs[].checkpoint.size_gb). The copies in flight over it share it equally."},
    {"cluster", "region_link_background_percent", T::kInt, kOptional, 0, 99, "0 (the copies have the link)", "30",
     "Share of each region link taken by other traffic (replication, data loading, users): the checkpoint copies "
     "share the rest. 0 keeps a plan's results as without it; there is no published figure, measure your own."},
    {"cluster", "object_store_gbytes_per_s", T::kInt, kOptional, 1, 10000000, "1000 [guess: no published figure]",
     "200",
     "Read capacity of each region's object store, shared by the jobs streaming from it "
     "(workload.jobs[].input_from: object_store): beyond it they stall on data."},
    {"cluster", "fabric", T::kMap, kOptional, 0, 0, "two tiers", "{tiers: 3}",
     "The scale-out fabric above the leaves (docs/failure-domains.md)."},
    {"cluster.fabric", "tiers", T::kInt, kRequired, 2, 3, "", "3",
     "2: leaves and spines (ceil(leaves / 2) spines, every leaf to every spine); 3: pods of 72 leaves (18 leaf "
     "groups of an NVL72 cluster with 4 rails) each with 72 spines, under ceil(spines / 2) super-spines. "
     "A spine then carries its pod's traffic, a super-spine the traffic between pods."},
    {"cluster.regions[]", "name", T::kString, kRequired, 0, 0, "", "east",
     "The region's name: a lowercase word (letters, digits, '-', '_'), not a component's name such as r01."},
    {"cluster.regions[]", "racks", T::kInt, kRequired, 1, 100000, "", "600", "How many racks the region holds."},
    {"cluster.regions[]", "spares", T::kMap, kOptional, 0, 0, "the cluster's spares", "{racks: 1}",
     "The region's spare racks (its last N), for jobs whose NVLink domain is lost; they try their own region first."},
    {"cluster.regions[].spares", "racks", T::kInt, kRequired, 0, 100000, "", "1",
     "The region's last N racks are its spare racks (fewer than its racks)."},
    {"cluster.spares", "racks", T::kInt, kRequired, 0, 100000, "", "1",
     "The last N racks are spare racks: a job requeued from a lost NVLink domain (switch tray UNHEALTHY, CDU or "
     "pumps, power beyond the shelves' redundancy) moves there when regular trays and hot spares are short; "
     "any other job waits. Each move is a spare_rack action in the report. Simulated runs only."},

    {"workload", "jobs", T::kList, kOptional, 0, 0, "[]", "[{name: pretrain, gpus: 64}]", "Jobs, by name."},

    {"workload.jobs[]", "name", T::kString, kRequired, 0, 0, "", "pretrain", "Unique job name."},
    {"workload.jobs[]", "gpus", T::kInt, kRequired, 1, 10000000, "", "64", "GPUs the job needs."},
    {"workload.jobs[]", "parallelism", T::kMap, kOptional, 0, 0, "tp=pp=ep=1, dp=gpus/(tp*pp)", "{tp: 4, pp: 4, dp: 4}",
     "Tensor, pipeline, data and expert parallel degrees; tp*pp*dp = gpus, ep divides dp, tp*ep GPUs fit in one "
     "NVLink domain. Declared: TP and EP groups are placed inside one NVLink domain, PP and DP across domains; "
     "DP and PP use NVLink when all their groups stay inside one domain, the NICs when some cross; each kind "
     "of group's collectives run over the slowest link of its groups; a group of one rank has none."},
    {"workload.jobs[]", "collectives", T::kMap, kOptional, 0, 0, "tp 10, dp 5 (ep 10, pp 0 with parallelism)",
     "{tp: 8, ep: 15}",
     "Percent of a step at full speed each kind of parallel group spends in collectives not hidden behind compute."},
    {"workload.jobs[]", "input_mb_per_s", T::kInt, kOptional, 0, 1000000, "0 (no input)", "2000",
     "MB/s each GPU reads from its tray's storage path at full speed (the NVMe cache, or the object store when "
     "the cache is lost). The loader prefetches during a step; a read slower than the step stalls it (docs/jobs.md)."},
    {"workload.jobs[]", "region", T::kString, kOptional, 0, 0, "the first region with room", "west",
     "With cluster.regions: the region the job is placed in first (it moves to another only when its own is "
     "down or full)."},
    {"workload.jobs[]", "input_from", T::kString, kOptional, 0, 0, "cache", "object_store",
     "Where the input is read: cache (each tray's NVMe cache) or object_store (streamed from the region's object "
     "store at the catalogue's object_store rate, so object_store_degrade and object_store_fail reach every rank)."},
    {"workload.jobs[]", "step_time", T::kDuration, kOptional, kMilli, kDay, "10s", "6s", "Compute per step at full speed."},
    {"workload.jobs[]", "checkpoint", T::kMap, kOptional, 0, 0, "", "{interval: 30m, write_time: 40s}",
     "How often the job checkpoints, how long a write takes and how much of it stops training."},
    {"workload.jobs[]", "restart_overhead", T::kDuration, kOptional, 0, 7 * kDay, "5m", "5m",
     "Scheduling, loading and warm-up before the first step after a restart."},
    {"workload.jobs[]", "collective_timeout", T::kDuration, kOptional, kSecond, kDay, "10m", "10m",
     "NCCL watchdog: a stuck collective fails the job after this long."},
    {"workload.jobs[]", "elastic", T::kMap, kOptional, 0, 0, "not elastic", "{min_gpus: 32}",
     "The job can run on fewer GPUs at the same global batch: with the healer's remediation.shrink, a "
     "requeue that finds too few trays free restarts it on whole free trays (at least min_gpus) until "
     "trays return (simulator only)."},

    {"workload.jobs[].parallelism", "tp", T::kInt, kOptional, 1, 10000000, "1", "4", "Tensor parallel degree."},
    {"workload.jobs[].parallelism", "pp", T::kInt, kOptional, 1, 10000000, "1", "4", "Pipeline parallel degree."},
    {"workload.jobs[].parallelism", "dp", T::kInt, kOptional, 1, 10000000, "gpus/(tp*pp)", "4",
     "Data parallel degree."},
    {"workload.jobs[].parallelism", "ep", T::kInt, kOptional, 1, 10000000, "1", "1", "Expert parallel degree."},

    {"workload.jobs[].collectives", "tp", T::kInt, kOptional, 0, 99, "10", "8",
     "Tensor-parallel all-reduce over NVLink (a job without parallelism: all its NVLink traffic)."},
    {"workload.jobs[].collectives", "dp", T::kInt, kOptional, 0, 99, "5", "5",
     "Data-parallel all-reduce: over NVLink when every DP group sits in one NVLink domain, else over the "
     "scale-out NICs (a job without parallelism: all its scale-out traffic)."},
    {"workload.jobs[].collectives", "ep", T::kInt, kOptional, 0, 99, "10", "15",
     "MoE all-to-all of the expert groups over NVLink; needs parallelism with ep > 1."},
    {"workload.jobs[].collectives", "pp", T::kInt, kOptional, 0, 99, "0", "3",
     "Pipeline sends between stages (0: hidden behind compute): over NVLink when every pipeline stays in one "
     "NVLink domain, else over the scale-out NICs; needs parallelism with pp > 1."},

    {"workload.jobs[].elastic", "min_gpus", T::kInt, kRequired, 1, 10000000, "", "4",
     "The fewest GPUs it runs on: at most gpus, a multiple of the model's GPUs per tray."},

    {"workload.jobs[].checkpoint", "interval", T::kDuration, kOptional, kSecond, 365 * kDay, "30m", "30m",
     "Training time between one checkpoint's snapshot and the next (the blocking part of a write is not "
     "counted). Longer than write_time: a snapshot cancels the write still in flight."},
    {"workload.jobs[].checkpoint", "write_time", T::kDuration, kOptional, 0, kDay, "30s", "40s",
     "From the snapshot until the local store acknowledges the checkpoint (it counts from then on). Training "
     "goes on during it (asynchronous checkpointing), except for its blocking part."},
    {"workload.jobs[].checkpoint", "blocking", T::kDuration, kOptional, 0, kDay, "0s (fully asynchronous)", "20s",
     "The first part of each write, during which training stops (the copy of the state out of GPU memory; "
     "blocking = write_time for a synchronous checkpoint): 0 to write_time. It is what a checkpoint costs "
     "(docs/jobs.md), and what Young's and Daly's optimum intervals trade against rework."},
    {"workload.jobs[].checkpoint", "copy_time", T::kDuration, kOptional, 0, 30 * kDay, "0s (the local ack is durable)", "15m",
     "After the local acknowledgement, the background copy to another region (checkpoint size / cross-region "
     "bandwidth, e.g. 4 TB at 40 GB/s: 100s). A tray's local store lost (cache_fail) before it is done loses that "
     "checkpoint: the next restart goes back to the newest complete far copy."},
    {"workload.jobs[].checkpoint", "size_gb", T::kInt, kOptional, 1, 100000000, "none", "4000",
     "The checkpoint's size: with regions and no copy_time, the far copy takes size_gb / "
     "cluster.region_link_gbytes_per_s. A region_outage before it is done loses that checkpoint."},

    {"faults[]", "at", T::kDuration, kRequired, 0, 3650 * kDay, "", "30m", "When to inject, from the start of the run."},
    {"faults[]", "kind", T::kString, kRequired, 0, 0, "", "link_down", "An injector name (the injector table; `rackchaos list injectors` prints every one)."},
    {"faults[]", "target", T::kSelector, kRequired, 0, 0, "", "r01.tray03.gpu2",
     "Which components: a name (`r01.tray03.gpu2`, a port `r01.tray03.gpu2.nvlink5`), a range or glob "
     "(`r01.tray[01-04]`, `r*.tray*.gpu*`) or an attribute (`kind=gpu`). The model pads rack numbers to two "
     "digits (`r01`..`r99`) and to three from 100 racks on (`r001`..`r120` on 120 racks), trays to two (`tray03`); a target "
     "may use any padding: `r1`, `r01` and `r001` name the same rack at any cluster size (a selector that "
     "matches nothing as written is matched by number), and reports show the model's names."},
    {"faults[]", "pick", T::kPick, kOptional, 0, 0, "one", "all", "How many of the matched components."},
    {"faults[]", "for", T::kDuration, kOptional, kMilli, 3650 * kDay, "until the end", "20m", "Revert the fault after this long."},
    {"faults[]", "params", T::kMap, kOptional, 0, 0, "", "{opening: 15%}",
     "Injector-specific scalars, checked by the injector."},

    {"chaos", "catalogue", T::kString, kRequired, 0, 0, "", "llama3",
     "A failure catalogue: llama3 (Meta, The Llama 3 Herd of Models, Table 5: 419 interruptions in 54 days on "
     "16,384 GPUs), burn-in (the same counts, with Weibull shapes 0.7 for GPUs and 0.8 for nodes: infant "
     "mortality, a [guess]), or a catalogue file relative to the plan (a path ending in .yaml; "
     "docs/catalogue.md, `rackchaos catalogue fit`)."},
    {"chaos", "scale", T::kNumber, kOptional, 0, 1000000, "1", "2.5",
     "Multiplies every failure rate, to stress a short run (or below 1 to slow it)."},
    {"chaos", "from", T::kDuration, kOptional, 0, 3650 * kDay, "0s", "1h", "When random failures start."},
    {"chaos", "until", T::kDuration, kOptional, kSecond, 3650 * kDay, "the plan's duration", "7d", "When random failures stop."},
    {"chaos", "one_per_domain", T::kBool, kOptional, 0, 0, "false", "true",
     "At most one chaos fault active at once per NVLink domain (a rack): a draw that lands while another is "
     "active in its rack is dropped."},
    {"chaos", "min_gap", T::kDuration, kOptional, 0, 365 * kDay, "none", "30m",
     "At least this long between two chaos faults anywhere in the cluster: a draw sooner after the last one is dropped."},
    {"chaos", "classes", T::kMap, kOptional, 0, 0, "100 each", "{gpu: 200, nic: 100, node: 0}",
     "Each component class's failure rate as a percentage of the catalogue's (on top of scale): weight what a "
     "burn-in stresses; 0 turns a class off."},
    {"chaos.classes", "gpu", T::kInt, kOptional, 0, 1000000, "100", "200",
     "Percent of the catalogue's GPU failure rates (faulty GPU, HBM, SRAM, GSP, thermal, SDC)."},
    {"chaos.classes", "nic", T::kInt, kOptional, 0, 1000000, "100", "100",
     "Percent of the catalogue's network failure rates (switch/cable, NIC)."},
    {"chaos.classes", "node", T::kInt, kOptional, 0, 1000000, "100", "0",
     "Percent of the catalogue's node failure rates (host maintenance, software, SSD, PSU, CPU, memory, ...)."},
    {"chaos", "rates", T::kMap, kOptional, 0, 0, "the catalogue's", "{gpu: {per_day: 0.002}, \"faulty GPU\": {mtbf: 1500d}}",
     "Sets rates the catalogue gives: a class (gpu, nic, node; its causes keep their proportions) or one cause "
     "by its name, each as per_day or mtbf. Causes first, then classes; scale and classes apply on top."},
    {"chaos.rates.NAME", "per_day", T::kNumber, kOptional, 0, 1000, "", "0.002",
     "Failures per component-day (per GPU, NIC or compute tray of the class)."},
    {"chaos.rates.NAME", "mtbf", T::kDuration, kOptional, 60 * kSecond, 1000 * 3650 * kDay, "", "1500d", "Mean time between failures of one component."},

    {"healer", "policy", T::kString, kOptional, 0, 0, "default", "default",
     "A shipped policy name or a path to a policy YAML."},

    {"safety", "max_faults_at_once", T::kInt, kOptional, 1, 1000000, "no limit", "2",
     "At run time a fault that would make more than N active at once is skipped (and recorded as a safety action)."},
    {"safety", "max_gpus_impaired", T::kInt, kOptional, 0, 10000000, "no limit", "8",
     "Refuse the plan if the faults that can be active at once could impair more GPUs than this "
     "(the GPUs each target serves, summed, worst case over time)."},
    {"safety", "abort", T::kMap, kOptional, 0, 0, "", "{gpus_offline: 8, gpu_temperature: 95}",
     "Live abort conditions: as soon as what the monitoring observes crosses one, the run stops, every fault is "
     "reverted and the verdict is aborted (exit 1)."},
    {"safety", "allow", T::kList, kOptional, 0, 0, "any kind", "[link_down, gpu_throttle]",
     "Fault kinds the plan may use (chaos included); any other kind is refused."},

    {"safety.abort", "gpus_offline", T::kInt, kOptional, 0, 10000000, "no limit", "8",
     "Abort when more than N GPUs are offline (on compute trays whose heartbeats stopped)."},
    {"safety.abort", "gpu_temperature", T::kInt, kOptional, 0, 1000, "no limit", "95",
     "Abort when a GPU temperature sample is above N degrees C."},
    {"safety.abort", "jobs_down", T::kInt, kOptional, 0, 1000000, "no limit", "0",
     "Abort when more than N jobs that had started are hung, restarting, failed or waiting to be placed again."},
    {"safety.abort", "faults_at_once", T::kInt, kOptional, 0, 1000000, "no limit", "3",
     "Abort when more than N faults are applied at once (max_faults_at_once skips the fault instead)."},

    {"expect[]", "gate", T::kString, kRequired, 0, 0, "", "\"blast.gpus.max <= 8\"", "METRIC OP VALUE, as a string item."},
    {"expect[]", "continuous", T::kBool, kOptional, 0, 0, "false", "true",
     "Also check the gate while running (every simulated minute; in real mode every healer.observe_period of "
     "the inventory, default 1s; on the metrics so far, a fault not yet "
     "detected or recovered counting as late as it already is); when it fails the run stops as aborted. Only "
     "upper bounds (< <=) on metrics that never decrease: ttd/tti/ttr.max, blast.*, gpu_hours_lost.*, "
     "healer.false_isolations."},
    {"expect[]", "allow_empty", T::kBool, kOptional, 0, 0, "false", "true",
     "The gate passes when its metric has no data: no fault had an effect or a time to measure (ttd, tti, ttr, "
     "blast, gpu_hours_lost) or no job ran (ettr, goodput). Without it such a gate says \"no data\" and fails, since "
     "it measured nothing; `rackchaos validate` warns about a gate that can only be empty (a plan with no "
     "faults and no chaos, or no jobs)."},
};

}  // namespace

const std::vector<KeyInfo>& PlanKeys() { return kKeys; }

std::string DescribeType(const KeyInfo& key) {
  switch (key.type) {
    case T::kString:
      return "a string";
    case T::kInt:
      return "an integer from " + std::to_string(key.min) + " to " + std::to_string(key.max);
    case T::kNumber:
      return "a number from " + std::to_string(key.min) + " to " + std::to_string(key.max) + " (decimals allowed)";
    case T::kUint64:
      return "an integer from 0 to 18446744073709551615";
    case T::kDuration:
      return "a duration from " + FormatDuration(Duration::Micros(key.min)) + " to " +
             FormatDuration(Duration::Micros(key.max)) + " with a unit (ms, s, m, h, d, w)";
    case T::kMap:
      return "a map";
    case T::kList:
      return "a list";
    case T::kSelector:
      return "a target selector";
    case T::kBool:
      return "true or false";
    case T::kPick:
      return "a pick mode (one, all, count:N, N%)";
  }
  return "a value";
}

}  // namespace rackchaos::runner
