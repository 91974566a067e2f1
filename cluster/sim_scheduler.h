// Scheduler: synchronous training jobs on the simulated cluster. Placement (with cluster/placement.h),
// progress, step time, hangs, checkpoints and their far copies, requeues and restarts, step reports.
// It owns the jobs and the seats (cluster/sim_job.h) every other part reads.
//
// - Progress is analytic between events: steps advance at 1 / step time while running. A step lasts as
//   long as its slowest participant: compute at the slowest GPU's speed plus the exposed collectives of
//   each kind of group over its slowest link (fabric), plus the data stall when its slowest tray reads
//   too slowly (storage); shrunk, the same global batch takes gpus / placed longer (sim_step.cpp).
// - A lost GPU, tray, NIC link, NVLink domain, spine path or object store hangs the job until the healer
//   acts or the collective timeout fires; a restart goes back to the last acknowledged checkpoint, after
//   the restart overhead, on the first free trays (sim_jobs.cpp). A requeued job that gets back all its
//   trays but a few touches only those (sim_restart.cpp).
// - A failure during a restart fails the restart, charged to that failure: a lost part stalls it (the job
//   hangs as a running one would, and when the part is back the restart starts over), a crashed process
//   fails the job (the healer's requeue starts it over).
// - Checkpoints: a snapshot every interval of training, counted once the region's checkpoint store
//   acknowledges it, then copied to the next region in the background (sim_checkpoints.cpp). Training
//   stops for the blocking part of each write (the job stays running, at speed 0 in its events).
// - Step reports: while some rank is off nominal speed, every period, listing those ranks (sim_step.cpp).
//
// Uses every other part: nodes (trays usable, GPUs on the bus), thermal (jobs' reference trajectories,
// GPU speed), fabric (what links do to a step; the region link), storage (data stalls, lost input, the
// checkpoint store), regions (which are down). They call back RefreshJob, PlaceQueuedJobs, NoteGpu and
// TouchTray after a change, and the checkpoint calls for stores that fail. Not thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cluster/sim_context.h"
#include "cluster/sim_job.h"

namespace rackchaos::cluster {

class Fabric;
class Nodes;
class RegionHealth;
class Storage;
class Thermal;

class Scheduler {
 public:
  // `step_jitter`: the step reports' stream; `report_phases`: each job's report phase, job by job.
  Scheduler(SimContext& ctx, Rng step_jitter, Rng report_phases, Nodes& nodes, Thermal& thermal, Fabric& fabric,
            Storage& storage, RegionHealth& regions);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // ---- what the other parts read
  const SeatMap& seats() const { return seats_; }
  const std::vector<SimJob>& jobs() const { return jobs_; }
  // GPUs dead, slower than nominal, or with NVLink ports down: per-event work stays proportional to
  // what is abnormal, not to the GPUs in a job.
  const std::set<ComponentId>& odd_gpus() const { return odd_gpus_; }
  int restarts_in_place() const { return restarts_in_place_; }
  double JobSteps(JobId job) const;  // at the clock's now

  // ---- jobs (sim_jobs.cpp)
  // Adds a job (CheckJob's rules); placed by the next PlaceQueuedJobs. Returns its id.
  Result<JobId> AddJob(const JobConfig& config);
  // Places every queued job that fits now, in id order, then grows shrunk jobs back where trays allow.
  void PlaceQueuedJobs();
  Status RequeueJob(JobId job, const std::string& reason);
  // The processes on a GPU die: the job using it fails at once.
  Status CrashProcesses(ComponentId gpu, FaultId cause);

  // ---- after a change (sim_step.cpp, sim_restart.cpp)
  // Re-derives a running or hung job's condition from its GPUs and links.
  void RefreshJob(JobId job);
  // Keep the indexes current after a change to a GPU (odd GPUs), or to a tray's presence, boot or drain
  // (usable trays, free counts, the jobs' lost seats).
  void NoteGpu(ComponentId gpu);
  void TouchTray(ComponentId tray);
  // The free-tray counts TouchTray keeps in step, recounted from the trays themselves: "" when they
  // agree, else what differs. O(trays): for tests.
  std::string RecountFreeTrays() const;

  // ---- checkpoints (sim_checkpoints.cpp)
  // A store holding the job's newest acknowledged checkpoint is gone (a tray's cache, or its region's
  // checkpoint store with `part` the store): that checkpoint, its copy and the write in flight are
  // lost; the job keeps running, its next restart goes back to the far copy.
  void LoseLocalCheckpoint(JobId job, ComponentId part, FaultId cause);
  // The far region went down or its checkpoint store failed: the copies landing there are cut off.
  void FarCopiesLost(int region, FaultId cause);
  // ... and is back: the copies waiting for it start.
  void FarStoreBack(int region);
  // A copy on the region link has landed (sim_region_link.h).
  void FarCopyLanded(JobId job);

 private:
  // sim_jobs.cpp
  bool Place(SimJob& job);
  bool GrowFits(const SimJob& job) const;
  void StartAfterOverhead(SimJob& job, const std::string& detail);
  void GrowShrunkJobs();
  void BackToQueue(SimJob& job, const std::string& detail);
  void StopForRequeue(SimJob& job, const std::string& detail);
  void StartRunning(SimJob& job);
  void Advance(SimJob& job);
  void SetJobState(SimJob& job, JobState state, FaultId cause, const std::string& detail, Duration lost = {});
  void StopTimers(SimJob& job);
  void OnCollectiveTimeout(JobId id);
  void ReleaseTrays(SimJob& job);
  void ReleaseOwed();  // the crashed job's trays (owed_job_), as CrashProcesses would have released them
  // sim_step.cpp
  // What stops a job's collectives now (a lost GPU, tray, NIC link, domain, spine path or object store),
  // and the domain bandwidth and spine share its step runs at otherwise.
  struct Blockage {
    bool hard = false, fatal = false;  // fatal: a lost GPU or tray or domain, only a restart helps
    FaultId cause = kNoFault;
    std::string why;
    double domain_bw = 1, spine_share = 1;
    FaultId domain_cause = kNoFault, spine_cause = kNoFault;
  };
  Blockage FindBlockage(const SimJob& job);
  void StallRestart(SimJob& job, const Blockage& b);
  void OnStepReport(JobId id);
  // sim_restart.cpp
  // Seats `job` (kNoJob: nobody) on the tray in slot k and keeps the jobs' lost_seats and the trays'
  // carry current. A tray left by a job must have its carry settled first. O(1) but for lost seats.
  void SeatJob(size_t k, JobId job, int gpus);
  // RequeueJob's fast path; false (nothing changed) when the job does not qualify.
  // `owed`: the job crashed at this instant and still holds the trays it released as far as anyone saw.
  bool RestartInPlace(SimJob& job, const std::string& detail, bool owed = false);
  bool DomainLost(const SimJob& job) const;  // some rack of its trays lost its NVLink domain
  void NoteSpareRackUse(const SimJob& job);
  // sim_checkpoints.cpp
  void ScheduleCheckpoint(SimJob& job);
  void OnCheckpoint(JobId id);
  void BlockForCheckpoint(SimJob& job);  // training stops for checkpoint_blocking, then EndBlock
  void EndBlock(JobId id);
  bool CheckpointWriteFails(SimJob& job);                  // the region's checkpoint store cannot acknowledge
  void ChargeUnsafeWork(SimJob& job, JobChanged& change);  // a restart's rework the failed store added
  void CopyCheckpoint(JobId id);                           // starts the far copy of the acknowledged checkpoint
  void FarCopyDone(JobId id);
  bool CopiesOverLink(const SimJob& job) const;
  void CancelLinkCopy(SimJob& job);
  int FarRegion(const SimJob& job) const;  // where its copies go: the next region (-1 with fewer than two)
  bool FarStoreDown(int region) const;     // a copy to it cannot land: the region or its checkpoint store is down

  SimContext& ctx_;
  const Topology& topo_;
  VirtualClock& clock_;
  const SimOptions& opt_;
  Nodes& nodes_;
  Thermal& thermal_;
  Fabric& fabric_;
  Storage& storage_;
  RegionHealth& regions_;
  Rng jitter_rng_;
  Rng report_phases_;
  std::vector<SimJob> jobs_;
  SeatMap seats_;
  std::set<ComponentId> odd_gpus_;
  int restarts_in_place_ = 0;
  JobId owed_job_ = kNoJob;  // crashed at this instant, its release not taken yet (SimContext::OweRelease)
};

}  // namespace rackchaos::cluster
