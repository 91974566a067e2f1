// Checkpoints of the simulated jobs (cluster/sim_scheduler.h), from the snapshot to the far copy.
//
// - A snapshot every checkpoint interval of training; it counts once the region's checkpoint store
//   acknowledges the write (checkpoint_write later). Training stops for the write's first
//   checkpoint_blocking (the copy out of GPU memory: the job holds its GPUs and makes no progress, and its
//   events show it running at speed 0); the next interval starts when it goes on. A failure meanwhile
//   loses the snapshot like any write in flight. While that store has failed, a write is not
//   acknowledged and the job keeps training (asynchronous checkpointing, as Megatron's --async-save and
//   PyTorch DCP's async_save do: the save fails in the background, training goes on): its rework grows
//   until a later write succeeds, and a restart charges that part of it to the store's fault.
// - After the acknowledgement the checkpoint is copied to the next region, one copy at a time; a newer
//   acknowledged checkpoint (written meanwhile) is copied next. With a size it shares the region link
//   (sim_region_link.h), else it takes checkpoint_copy. When the far region goes down or its store
//   fails, the copies in flight to it are lost (physics `far_copy_lost` on that store, value the lost
//   checkpoint's steps): the far region keeps its older copy and no copy starts until it is back.
// - Losing the local store (a tray's cache, or the whole region) before the copy is done loses that
//   checkpoint: the job falls back to the newest far copy, with the running time since as rework.
#include <algorithm>

#include "cluster/sim_fabric.h"
#include "cluster/sim_region_health.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_storage.h"

namespace rackchaos::cluster {

void Scheduler::ScheduleCheckpoint(SimJob& job) {
  if (job.until_ckpt <= Duration{}) job.until_ckpt = job.cfg.checkpoint_interval;
  JobId id = job.id;
  job.segment_start = clock_.Now();
  job.ckpt_timer = clock_.CallAfter(job.until_ckpt, [this, id] { ctx_.SettleOwed(); OnCheckpoint(id); });
}

// A checkpoint snapshots progress now; it counts once the store acknowledges the write.
void Scheduler::OnCheckpoint(JobId id) {
  SimJob& j = jobs_[id];
  j.ckpt_timer = 0;
  Advance(j);
  j.pending_steps = j.steps;
  j.pending_running = j.running_since_ckpt;
  j.pending_total = j.running_total;
  j.until_ckpt = j.cfg.checkpoint_interval;
  if (j.cfg.checkpoint_blocking > Duration{}) BlockForCheckpoint(j);
  else ScheduleCheckpoint(j);
  if (j.ack_timer) clock_.Cancel(j.ack_timer);
  j.ack_timer = clock_.CallAfter(j.cfg.checkpoint_write, [this, id] {
    ctx_.SettleOwed();
    SimJob& job = jobs_[id];
    job.ack_timer = 0;
    if (CheckpointWriteFails(job)) return;  // not acknowledged, the job trains on
    job.ckpt_steps = job.pending_steps;
    Advance(job);
    job.running_since_ckpt -= job.pending_running;
    job.ack_total = job.pending_total;
    ctx_.Record(Checkpointed{id, job.ckpt_steps});
    if (job.cfg.checkpoint_copy > Duration{} && !job.copy_timer) CopyCheckpoint(id);
  });
}

// The blocked stretch is recorded as running at speed 0 with no cause: no fault's slowdown, and not
// productive time (healer/metrics.cpp). The healer sees nothing of it.
void Scheduler::BlockForCheckpoint(SimJob& j) {
  j.blocked = true;
  ctx_.Record(JobChanged{j.id, JobState::kRunning, j.steps, 0, 0, j.at.gpus, {}, kNoFault,
                         "checkpoint: training stops for " + FormatDuration(j.cfg.checkpoint_blocking), j.at.trays});
  const JobId id = j.id;
  j.block_timer = clock_.CallAfter(j.cfg.checkpoint_blocking, [this, id] { ctx_.SettleOwed(); EndBlock(id); });
}

void Scheduler::EndBlock(JobId id) {
  SimJob& j = jobs_[id];
  j.block_timer = 0;
  Advance(j);  // nothing trained meanwhile
  j.blocked = false;
  ctx_.Record(JobChanged{id, JobState::kRunning, j.steps, j.step_time_s, j.speed, j.at.gpus, {}, j.cause,
                         "checkpoint: training goes on", j.at.trays});
  ScheduleCheckpoint(j);
}

Status CheckCheckpoint(const JobConfig& job, std::string& key) {
  if (job.checkpoint_interval <= job.checkpoint_write) {
    key = "interval";
    return Status::Invalid("checkpoint.interval " + FormatDuration(job.checkpoint_interval) +
                           " is not longer than write_time " + FormatDuration(job.checkpoint_write) +
                           ": each snapshot would cancel the write before it, so no checkpoint would ever count; "
                           "make the interval longer than " + FormatDuration(job.checkpoint_write) +
                           " or the write shorter");
  }
  if (job.checkpoint_blocking < Duration{} || job.checkpoint_blocking > job.checkpoint_write) {
    key = "blocking";
    return Status::Invalid("checkpoint.blocking " + FormatDuration(job.checkpoint_blocking) +
                           " is out of range: 0 to write_time (" + FormatDuration(job.checkpoint_write) +
                           "): training stops for the first part of the write (all of it when blocking = "
                           "write_time, a synchronous checkpoint), so it is shorter than the interval too");
  }
  return Status::Ok();
}

// At the acknowledgement of a snapshot. A failed write leaves the work since the last acknowledged
// checkpoint unsafe: the part this snapshot would have kept is the store's rework at the next restart.
bool Scheduler::CheckpointWriteFails(SimJob& j) {
  if (topo_.regions().empty() || j.region < 0) return false;
  if (!storage_.CheckpointStoreFailed(j.region)) {
    j.unsafe_running = {};
    j.unsafe_cause = kNoFault;
    return false;
  }
  const FaultId store_cause = storage_.CheckpointStoreCause(j.region);
  j.unsafe_running = j.pending_running;
  j.unsafe_cause = store_cause;
  ctx_.Physics(topo_.regions()[static_cast<size_t>(j.region)].checkpoint_store, "checkpoint_write_failed", j.steps,
               store_cause);
  return true;
}

void Scheduler::ChargeUnsafeWork(SimJob& j, JobChanged& change) {
  if (change.lost_work <= Duration{} || j.unsafe_running <= Duration{}) return;
  change.store_lost_work = std::min(change.lost_work, j.unsafe_running);
  change.store_cause = j.unsafe_cause;
  j.unsafe_running = {};
  j.unsafe_cause = kNoFault;
}

bool Scheduler::CopiesOverLink(const SimJob& j) const {
  return opt_.region_link_gbytes_per_s > 0 && j.cfg.checkpoint_size_gb > 0 && j.region >= 0 &&
         static_cast<size_t>(j.region) < fabric_.region_links().size();
}

int Scheduler::FarRegion(const SimJob& j) const {
  const size_t n = topo_.regions().size();
  return n < 2 || j.region < 0 ? -1 : static_cast<int>((static_cast<size_t>(j.region) + 1) % n);
}

bool Scheduler::FarStoreDown(int region) const {
  return regions_.Down(region) || storage_.CheckpointStoreFailed(region);
}

void Scheduler::CopyCheckpoint(JobId id) {
  SimJob& j = jobs_[id];
  if (j.copy_on_link) return;  // the newer checkpoint follows when the copy in flight is done
  const int to = FarRegion(j);
  if (to >= 0 && FarStoreDown(to)) return;
  j.copy_to = to;
  j.copying_steps = j.ckpt_steps;
  j.copying_total = j.ack_total;
  if (CopiesOverLink(j)) {
    fabric_.region_links().Start(static_cast<size_t>(j.region), j.id, j.cfg.checkpoint_size_gb);
    j.copy_on_link = true;
    return;
  }
  j.copy_timer = clock_.CallAfter(j.cfg.checkpoint_copy, [this, id] {
    ctx_.SettleOwed();
    jobs_[id].copy_timer = 0;
    FarCopyDone(id);
  });
}

void Scheduler::CancelLinkCopy(SimJob& j) {
  if (!j.copy_on_link) return;
  j.copy_on_link = false;
  fabric_.region_links().Cancel(j.id);
}

void Scheduler::FarCopyLanded(JobId id) {
  ctx_.SettleOwed();  // the region link's timer (sim_region_link.h)
  jobs_[id].copy_on_link = false;
  FarCopyDone(id);
}

void Scheduler::FarCopyDone(JobId id) {
  SimJob& job = jobs_[id];
  job.remote_steps = job.copying_steps;
  job.remote_total = job.copying_total;
  if (job.ack_total > job.remote_total) CopyCheckpoint(id);
}

void Scheduler::LoseLocalCheckpoint(JobId id, ComponentId part, FaultId cause) {
  SimJob& j = jobs_[id];
  if (j.cfg.checkpoint_copy <= Duration{}) return;
  if (j.ack_timer) clock_.Cancel(j.ack_timer);  // the write in flight fails with the store
  j.ack_timer = 0;
  if (j.ack_total <= j.remote_total) return;  // the far region has the newest acknowledged checkpoint
  if (j.copy_timer) clock_.Cancel(j.copy_timer);
  j.copy_timer = 0;
  CancelLinkCopy(j);
  j.running_since_ckpt += j.ack_total - j.remote_total;
  j.ckpt_steps = j.remote_steps;
  j.ack_total = j.remote_total;
  ctx_.Physics(part, "checkpoint_lost", j.remote_steps, cause);
}

// The far region keeps what it had; the job's newest acknowledged checkpoint waits for FarStoreBack.
void Scheduler::FarCopiesLost(int region, FaultId cause) {
  const ComponentId store = topo_.regions()[static_cast<size_t>(region)].checkpoint_store;
  for (SimJob& j : jobs_) {
    if (j.copy_to != region || (!j.copy_timer && !j.copy_on_link)) continue;
    if (j.copy_timer) clock_.Cancel(j.copy_timer);
    j.copy_timer = 0;
    CancelLinkCopy(j);  // its share goes to the copies left on the link
    j.copy_to = -1;
    ctx_.Physics(store, "far_copy_lost", j.copying_steps, cause);
  }
}

void Scheduler::FarStoreBack(int region) {
  if (FarStoreDown(region)) return;  // the region is back but not its store, or the other way round
  for (SimJob& j : jobs_)
    if (j.cfg.checkpoint_copy > Duration{} && !j.copy_timer && !j.copy_on_link && j.ack_total > j.remote_total &&
        FarRegion(j) == region)
      CopyCheckpoint(j.id);
}

}  // namespace rackchaos::cluster
