// A synchronous training job as the simulator runs it.
#pragma once

#include <string>

#include "cluster/catalogue.h"
#include "core/status.h"
#include "core/units.h"

namespace rackchaos::cluster {

struct JobConfig {
  std::string name;
  int gpus = 0;
  // Elastic: after a requeue the job may restart on as few as min_gpus GPUs (whole trays) when the
  // healer's policy allows shrinking, at a fixed global batch; 0 = not elastic.
  int min_gpus = 0;
  int tp = 1, pp = 1, dp = 1, ep = 1;
  // The plan declared its parallelism: placement and collectives follow its groups (cluster/
  // placement.h). Ranks are numbered tp fastest, then dp, then pp (Megatron's order); an expert
  // group is `ep` consecutive data-parallel ranks, so a block of tp*ep consecutive ranks holds whole TP
  // and EP groups and is placed inside one NVLink domain. A group of one rank has no collective.
  // Without it the job is one bag of ranks: both shares below apply whatever the degrees.
  bool grouped = false;
  Duration step_time = Duration::Seconds(10);  // one step at full speed, collectives included
  // Shares of a nominal step spent in collectives that are exposed (not overlapped with compute):
  // tensor-parallel traffic over NVLink, data-parallel traffic over the scale-out NICs.
  double nvlink_share = 0.10;    // [guess] typical TP exposure for dense LLM training
  double scaleout_share = 0.05;  // [guess] DP all-reduce left after overlap
  // Grouped jobs only: the MoE all-to-all of the expert groups (over NVLink) and the pipeline's
  // activation sends between stages (over the scale-out NICs).
  double ep_share = 0;
  double pp_share = 0;
  // What each GPU reads from the storage path per second of a step at full speed (training samples); the
  // loader prefetches during the step, so a step lasts at least as long as its slowest tray's read.
  double input_gbytes_per_s = 0;
  // The input streams from the region's object store (sim_storage.h), not the trays' NVMe caches.
  bool input_from_object_store = false;
  // Its home region (an index into Topology::regions()): placed there first; -1 = the first with room.
  int region = -1;
  // A snapshot every checkpoint_interval of training; the store acknowledges it (the checkpoint counts)
  // checkpoint_write after the snapshot. Training stops for the first checkpoint_blocking of the write (the
  // copy out of GPU memory; the whole write when checkpointing is synchronous) and goes on during the rest
  // (asynchronous). CheckCheckpoint states the bounds.
  Duration checkpoint_interval = Duration::Minutes(30);
  Duration checkpoint_write = Duration::Seconds(30);
  Duration checkpoint_blocking{};
  // After the local store acknowledges a checkpoint it is copied to another region in the background
  // (checkpoint size / cross-region bandwidth). Losing a tray's local store (cache_fail) before the copy
  // is done loses that checkpoint: the job falls back to the newest complete far copy. 0 = not
  // modelled: the local acknowledgement is durable.
  Duration checkpoint_copy{};
  // checkpoint.size_gb: with SimOptions::region_link_gbytes_per_s, the copy shares the region's link
  // with the other copies in flight (checkpoint_copy is then its time alone).
  double checkpoint_size_gb = 0;
  Duration restart_overhead = Duration::Minutes(5);
  Duration collective_timeout = Duration::Minutes(10);  // NCCL watchdog default (600,000 ms)
};

// The exposed share of a nominal step each kind of group spends communicating: a grouped job's groups
// of one rank send nothing; an ungrouped job has TP (nvlink_share) and DP (scaleout_share) only.
struct CommShares {
  double tp = 0, dp = 0, ep = 0, pp = 0;
  double nvlink() const { return tp + ep; }
  double scaleout() const { return dp + pp; }
  double compute() const { return 1 - tp - dp - ep - pp; }  // this order: ungrouped jobs' old arithmetic
};
CommShares SharesOf(const JobConfig& job);  // placement_groups.cpp
// The checkpoint timings a job can run with: an interval longer than the write (the next snapshot cancels
// a write in flight, so with a shorter interval no checkpoint would ever be acknowledged) and blocking
// within the write (0 <= blocking <= write_time). Invalid names the range; `key` is then the key at fault:
// "interval" or "blocking" (sim_checkpoints.cpp).
Status CheckCheckpoint(const JobConfig& job, std::string& key);

// A grouped job's degrees and shares: tp*pp*dp = gpus, ep divides dp, tp*ep GPUs fit in one NVLink
// domain of `model`, shares below 100%. Invalid names what would be valid. Ok for ungrouped jobs.
Status CheckGroups(const JobConfig& job, const RackModel& model);

}  // namespace rackchaos::cluster
