// Storage: the data path jobs read from and the stores their checkpoints land in. Each tray's NVMe
// cache, and per region its object store and its checkpoint store (without regions: the caches only).
//
// - Input: each GPU reads its job's input (JobConfig::input_gbytes_per_s at full speed) from its tray's
//   cache at the catalogue's per-GPU rate; a tray whose cache is lost reads from its region's object
//   store instead, and a job with input_from: object_store streams from it. The data loader prefetches
//   the next batch while a step runs, so a step lasts at least as long as its slowest tray takes to
//   read one step's input (DataStallOf). A failed object store blocks the readers' loaders: their jobs
//   hang (InputLost). Nothing is logged; what a site sees is the starved ranks' longer compute phase
//   in the step reports (sim_storage.cpp), and the region's health probe.
// - The object store's read capacity (cluster.object_store_gbytes_per_s [guess]) is shared by the jobs
//   streaming from it, max-min fairly per GPU (sim_storage.cpp).
// - The checkpoint store acknowledges checkpoint writes; while it has failed, writes are not
//   acknowledged and the far copies landing in it are lost (the scheduler's checkpoints,
//   sim_checkpoints.cpp, read CheckpointStoreFailed).
// Every state here is held (cluster/holds.h): storage_degrade and cache_fail on one tray, two faults on
// one store; the worst value wins, the last release gives full rate back.
//
// Cost: the impaired trays only (never every tray of a job); a reader's start or stop refreshes the
// other readers of its region. Uses: the scheduler (its seats and jobs; RefreshJob, a lost cache's
// checkpoint shards, the far copies of a checkpoint store), regions (the health probe). Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cluster/holds.h"
#include "cluster/sim_context.h"
#include "cluster/sim_job.h"

namespace rackchaos::cluster {

class RegionHealth;
class Scheduler;

class Storage {
 public:
  Storage(SimContext& ctx, Scheduler& jobs, RegionHealth& regions);
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // ---- held states (the facade checked the target and the fraction)
  // A tray's cache at `fraction` (0, 1] of its read rate, or lost (0: its checkpoint shards go with it).
  void SetStorageRead(ComponentId tray, double fraction, FaultId cause);
  void ReleaseStorageRead(ComponentId tray, FaultId cause);
  // A region's object store at `fraction` [0, 1] of its rate, or its checkpoint store failed (below 1).
  void SetStoreRate(ComponentId store, double fraction, FaultId cause);
  void ReleaseStoreRate(ComponentId store, FaultId cause);
  bool CheckpointStoreFailed(int region) const { return stores_[static_cast<size_t>(region)].checkpoint_failed; }
  FaultId CheckpointStoreCause(int region) const { return stores_[static_cast<size_t>(region)].checkpoint_cause; }

  // ---- what a job gets
  struct DataStall {  // a job's read time per step at its slowest tray (0: no input)
    double read_s = 0;
    FaultId cause = kNoFault;
  };
  DataStall DataStallOf(const SimJob& job) const;
  // The fault of the failed object store the job's loader waits on; kNoFault when none.
  FaultId InputLost(const SimJob& job) const;
  // The ranks of a starved tray wait `stall_s` for their input before computing: listed in the report
  // like slow ranks, with jitter drawn from `jitter` (the step reports' stream) only while a job stalls.
  void AddStalledRanks(const SimJob& job, double stall_s, double nominal_compute, StepReport& report, Rng& jitter) const;
  // The job's state changed: if it started or stopped reading from its object store, the other
  // readers of its region get a new share.
  void ObjectStoreReadersChanged(const SimJob& job);

 private:
  struct StoragePath {  // a tray's cache at a fraction of its read rate, or lost (0)
    double fraction = 1;
    FaultId cause = kNoFault;
  };
  struct Stores {  // a region's, each at the worst hold's value and fault (store_holds_)
    double object_store = 1;
    FaultId object_cause = kNoFault;
    bool checkpoint_failed = false;
    FaultId checkpoint_cause = kNoFault;
  };
  // the trays' caches
  void ApplyStorageRead(ComponentId tray, const Holds<ComponentId>::State& state, FaultId cause, bool lost);
  double ReadRate(const StoragePath& s, ComponentId tray = kNoComponent) const;  // GB/s per GPU
  // each region's stores
  void ApplyStoreRate(ComponentId store, const Holds<ComponentId>::State& state, FaultId cause);
  double ObjectStoreShare(ComponentId tray) const;  // 1 without regions
  DataStall StreamStall(const SimJob& job) const;   // a job reading its input from the object store
  // Per GPU, what the job reads from its region's object store when the readers' demand exceeds its
  // capacity; nothing when it fits (each GPU then reads at the catalogue's rate).
  std::optional<double> ObjectStoreFairShare(const SimJob& job) const;

  SimContext& ctx_;
  const Topology& topo_;
  const SimOptions& opt_;
  Scheduler& jobs_;
  const SeatMap& seats_;
  const std::vector<SimJob>& job_list_;
  RegionHealth& regions_;
  std::map<ComponentId, StoragePath> storage_;  // trays whose storage path is impaired
  std::vector<Stores> stores_;                  // per region
  Holds<ComponentId> storage_holds_, store_holds_;
  std::set<JobId> reading_;  // jobs streaming from an object store, running or hung
};

}  // namespace rackchaos::cluster
