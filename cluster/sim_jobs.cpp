// Jobs on the simulated cluster (cluster/sim_scheduler.h): adding, placing, starting, stopping, failing
// and requeueing them. The trays come from cluster/placement.h's rule; the scheduler knows only what
// Slurm knows: drains and nodes that are down, not which GPU is secretly slow.
#include <algorithm>
#include <utility>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_region_health.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_storage.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

Scheduler::Scheduler(SimContext& ctx, Rng step_jitter, Rng report_phases, Nodes& nodes, Thermal& thermal,
                     Fabric& fabric, Storage& storage, RegionHealth& regions)
    : ctx_(ctx),
      topo_(ctx.topo()),
      clock_(ctx.clock()),
      opt_(ctx.opt()),
      nodes_(nodes),
      thermal_(thermal),
      fabric_(fabric),
      storage_(storage),
      regions_(regions),
      jitter_rng_(step_jitter),
      report_phases_(report_phases),
      seats_(ctx.topo(), ctx.opt().spare_racks, ctx.opt().region_spare_racks) {}

Result<JobId> Scheduler::AddJob(const JobConfig& config) {
  RC_RETURN_IF_ERROR(CheckJob(config, topo_));
  std::string key;
  RC_RETURN_IF_ERROR(CheckCheckpoint(config, key));
  SimJob j;
  j.cfg = config;
  j.id = static_cast<JobId>(jobs_.size());
  j.until_ckpt = config.checkpoint_interval;
  j.region = config.region < static_cast<int>(topo_.regions().size()) ? config.region : -1;
  j.report_phase = Duration{static_cast<int64_t>(report_phases_.Below(static_cast<uint64_t>(opt_.step_report_period.us)))};
  jobs_.push_back(std::move(j));
  thermal_.AddJob();
  return jobs_.back().id;
}

void Scheduler::PlaceQueuedJobs() {
  ctx_.SettleOwed();
  for (SimJob& j : jobs_) {
    if (j.state != JobState::kQueued || !Place(j)) continue;
    if (!j.started_once) {  // the run starts with its jobs already in their stride
      j.started_once = true;
      StartRunning(j);
      continue;
    }
    std::string where = "placed on " + std::to_string(j.at.trays.size()) + " trays";
    if (j.at.gpus < j.cfg.gpus) {
      j.shrink_cause = j.cause;
      where = "shrunk to " + std::to_string(j.at.gpus) + " of " + std::to_string(j.cfg.gpus) + " GPUs, " + where;
      ctx_.Record(ActionTaken{"shrink", kNoComponent, j.id, true, where + ": too few healthy trays free (remediation.shrink)"});
    }
    StartAfterOverhead(j, where);
  }
  GrowShrunkJobs();
}

void Scheduler::StartAfterOverhead(SimJob& j, const std::string& detail) {
  SetJobState(j, JobState::kRestarting, j.cause, detail);
  JobId id = j.id;
  j.start_timer = clock_.CallAfter(j.cfg.restart_overhead, [this, id] {
    ctx_.SettleOwed();
    jobs_[id].start_timer = 0;
    StartRunning(jobs_[id]);
  });
}

// A shrunk job grows back to its full size once enough trays are free: from its last checkpoint, with
// the restart overhead again. Queued jobs were placed first; the job's own trays count if usable.
void Scheduler::GrowShrunkJobs() {
  if (!opt_.shrink_elastic) return;
  const int per_tray = topo_.model().gpus_per_tray;
  for (SimJob& j : jobs_) {
    if ((j.state != JobState::kRunning && j.state != JobState::kRestarting) || j.at.gpus >= j.cfg.gpus) continue;
    const size_t free_count = seats_.pool().free_count();
    size_t need = static_cast<size_t>((j.cfg.gpus + per_tray - 1) / per_tray), own = 0;
    for (ComponentId tray : j.at.trays) own += nodes_.TrayUsable(tray);
    if (free_count + own < need) continue;
    std::string from = std::to_string(j.at.gpus);
    if (j.cfg.grouped && !GrowFits(j)) {  // enough trays, not in whole blocks per domain: stay shrunk
      if (j.grow_note != free_count)
        ctx_.Record(ActionTaken{"grow", kNoComponent, j.id, false,
                                "stays at " + from + " of " + std::to_string(j.cfg.gpus) + " GPUs: " +
                                    std::to_string(free_count + own) + " trays free but not in whole blocks of " +
                                    std::to_string(j.cfg.tp * j.cfg.ep) + " GPUs (tp*ep) per NVLink domain"});
      j.grow_note = free_count;
      continue;
    }
    j.cause = j.shrink_cause;  // the way back is still that fault's doing
    BackToQueue(j, "growing back from " + from + " GPUs: trays are free again");
    if (!Place(j)) continue;  // cannot happen: counted above
    std::string where = "grown back to " + std::to_string(j.at.gpus) + " GPUs on " + std::to_string(j.at.trays.size()) + " trays";
    ctx_.Record(ActionTaken{"grow", kNoComponent, j.id, true, where + " (was " + from + "), from the last checkpoint"});
    StartAfterOverhead(j, where);
    j.shrink_cause = kNoFault;
    j.grow_note = SIZE_MAX;
  }
}

// Whether a shrunk job would find its full size again, in whole blocks per domain, once it gives back
// its own trays (those that are present, booted and undrained).
bool Scheduler::GrowFits(const SimJob& job) const {
  TrayPool pool = seats_.pool();
  for (ComponentId tray : job.at.trays)
    if (nodes_.TrayUsable(tray)) pool.SetFree(topo_.TraySlot(tray), true);
  const int per_tray = topo_.model().gpus_per_tray;
  return !PickTrays(topo_, pool, job.cfg, job.domain_lost, job.cfg.gpus,
                    static_cast<size_t>((job.cfg.gpus + per_tray - 1) / per_tray))
              .empty();
}

bool Scheduler::Place(SimJob& job) {
  const PlaceAsk ask{job.cfg, job.region, job.domain_lost, opt_.shrink_elastic && job.started_once};
  auto seating = ChooseTrays(topo_, seats_.pool(), ask, regions_.down_flags());
  if (!seating) return false;
  const int per_tray = topo_.model().gpus_per_tray, gpus = seating->gpus;
  job.spare_trays = static_cast<int>(seating->trays.size() - seating->regular);  // sim_restart.cpp
  job.at.trays = std::move(seating->trays);
  job.at.gpus = gpus;
  job.at.kinds = GroupFabrics(topo_, job.cfg, job.at);
  if (!topo_.regions().empty()) job.region = topo_.RegionOf(job.at.trays.ids().front());
  if (job.domain_lost) NoteSpareRackUse(job);
  thermal_.JobPlaced(job.id);
  int left = gpus;
  for (ComponentId tray : job.at.trays) {
    SeatJob(topo_.TraySlot(tray), job.id, std::min(left, per_tray));
    left -= std::min(left, per_tray);
  }
  return true;
}

// The job leaves its trays: thermal keeps what it left on them, then they are free again (seats and
// free counts), then the GPUs that are not quiet are re-solved with no job on them.
void Scheduler::ReleaseTrays(SimJob& job) {
  const std::vector<ComponentId> loud = thermal_.LoudGpusOf(job.id);
  thermal_.LeaveTrays(job.id, job.at.trays);
  for (ComponentId tray : job.at.trays) SeatJob(topo_.TraySlot(tray), kNoJob, 0);
  job.at.trays = {};
  job.at.gpus = 0;
  job.spare_trays = 0;
  for (ComponentId g : loud) thermal_.UpdateThermal(g);
}

void Scheduler::StartRunning(SimJob& job) {
  job.state = JobState::kRunning;
  job.fatal = false;
  job.last_update = job.segment_start = clock_.Now();
  job.step_time_s = 0;  // forces RefreshJob to report the new speed
  RefreshJob(job.id);
  if (job.cfg.input_from_object_store) storage_.ObjectStoreReadersChanged(job);
}

void Scheduler::Advance(SimJob& job) {
  Time now = clock_.Now();
  if (job.state == JobState::kRunning && job.step_time_s > 0 && !job.blocked) {
    Duration dt = now - job.last_update;
    job.steps += dt.Seconds() / job.step_time_s;
    job.running_since_ckpt += dt;
    job.running_total += dt;
  }
  job.last_update = now;
}

void Scheduler::StopTimers(SimJob& job) {
  for (TimerId* t :
       {&job.ckpt_timer, &job.ack_timer, &job.timeout_timer, &job.start_timer, &job.report_timer, &job.block_timer}) {
    if (*t) clock_.Cancel(*t);
    *t = 0;
  }
}

void Scheduler::SetJobState(SimJob& job, JobState state, FaultId cause, const std::string& detail, Duration lost) {
  bool was_running = job.state == JobState::kRunning;
  if (was_running && state != JobState::kRunning) {
    // Blocked by a checkpoint, it has trained nothing since the snapshot: the next interval is whole.
    if (!job.blocked) job.until_ckpt -= clock_.Now() - job.segment_start;
    for (TimerId* t : {&job.ckpt_timer, &job.ack_timer, &job.report_timer, &job.block_timer}) {
      if (*t) clock_.Cancel(*t);
      *t = 0;
    }
    job.blocked = false;
    job.step_time_s = 0;
  }
  if (state != JobState::kHung) job.restart_stalled = false;
  job.state = state;
  job.cause = cause;
  JobChanged change{job.id, state, job.steps, job.step_time_s, state == JobState::kRunning ? job.speed : 0,
                    job.at.gpus, lost, cause, detail, job.at.trays};
  ChargeUnsafeWork(job, change);  // sim_checkpoints.cpp: a failed checkpoint store's share of the rework
  ctx_.Record(std::move(change));
  ctx_.Emit(JobStatus{job.id, state, job.at.trays, detail}, clock_.Now());
  if (was_running != (state == JobState::kRunning)) thermal_.JobPowerChanged(job.id);
  if (job.cfg.input_from_object_store) storage_.ObjectStoreReadersChanged(job);  // if it stopped
}

void Scheduler::OnCollectiveTimeout(JobId id) {
  SimJob& j = jobs_[id];
  j.timeout_timer = 0;
  Advance(j);
  Duration lost = j.running_since_ckpt;
  j.steps = j.ckpt_steps;
  j.running_since_ckpt = {};
  FaultId cause = j.cause;
  StopTimers(j);
  SetJobState(j, JobState::kFailed, cause, "NCCL watchdog timeout after " + FormatDuration(j.cfg.collective_timeout), lost);
  ReleaseTrays(j);
}

void Scheduler::ReleaseOwed() {
  SimJob& j = jobs_[std::exchange(owed_job_, kNoJob)];
  ReleaseTrays(j);
}

Status Scheduler::CrashProcesses(ComponentId gpu_id, FaultId cause) {
  ctx_.SettleOwed();
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  JobId id = seats_.JobOfGpu(gpu_id);
  if (id == kNoJob) return Status::Ok();  // nothing ran there
  SimJob& j = jobs_[id];
  // A crash during a restart fails it as it fails a running job; the healer's requeue starts it over.
  const bool restarting = j.state == JobState::kRestarting || j.restart_stalled;
  if (j.state != JobState::kRunning && j.state != JobState::kHung && j.state != JobState::kRestarting)
    return Status::Ok();
  ctx_.Physics(gpu_id, "process_crash", 0, cause);
  Advance(j);
  Duration lost = j.running_since_ckpt;
  j.steps = j.ckpt_steps;
  j.running_since_ckpt = {};
  j.until_ckpt = j.cfg.checkpoint_interval;
  StopTimers(j);
  SetJobState(j, JobState::kFailed, cause,
              "rank on " + topo_.at(gpu_id).name + " exited with an error" + (restarting ? " during the restart" : ""),
              lost);
  // Its release is owed (SimContext::OweRelease): the healer's requeue, the next thing to happen when it
  // answers the failure at once, restarts it in place on the trays it keeps; anything else first releases
  // them, at this same instant, as if here. A timer right after the failure's delivery settles it then.
  owed_job_ = id;
  ctx_.OweRelease([this] { ReleaseOwed(); });
  clock_.CallAt(clock_.Now(), [this] { ctx_.SettleOwed(); });
  return Status::Ok();
}

Status Scheduler::RequeueJob(JobId id, const std::string& reason) {
  if (id >= jobs_.size()) return Status::NotFound("no job " + std::to_string(id));
  SimJob& j = jobs_[id];
  if (j.state == JobState::kFinished) return Status::Invalid("job '" + j.cfg.name + "' has finished");
  if (j.state == JobState::kQueued) return Status::Ok();
  if (owed_job_ == id) {  // it crashed at this instant and nothing happened since: keep what it can
    owed_job_ = kNoJob;
    ctx_.Forgive();
    if (RestartInPlace(j, "requeued: " + reason, true)) return Status::Ok();
    ReleaseTrays(j);
  }
  ctx_.SettleOwed();
  if (RestartInPlace(j, "requeued: " + reason)) return Status::Ok();  // sim_restart.cpp
  BackToQueue(j, "requeued: " + reason);
  PlaceQueuedJobs();
  return Status::Ok();
}

// Back to the queue from the last checkpoint; a job placed but not started yet (restarting) just gives
// its trays back.
void Scheduler::BackToQueue(SimJob& j, const std::string& detail) {
  StopForRequeue(j, detail);
  ReleaseTrays(j);
}

void Scheduler::StopForRequeue(SimJob& j, const std::string& detail) {
  Duration lost{};
  if (j.state != JobState::kRestarting) {
    Advance(j);
    lost = j.running_since_ckpt;
    j.steps = j.ckpt_steps;
    j.running_since_ckpt = {};
    j.until_ckpt = j.cfg.checkpoint_interval;
  }
  StopTimers(j);
  SetJobState(j, JobState::kQueued, j.cause, detail, lost);
  j.domain_lost = opt_.spare_racks > 0 && DomainLost(j);
}

double Scheduler::JobSteps(JobId id) const {
  const SimJob& j = jobs_[id];
  double s = j.steps;
  if (j.state == JobState::kRunning && j.step_time_s > 0 && !j.blocked) s += (clock_.Now() - j.last_update).Seconds() / j.step_time_s;
  return s;
}

}  // namespace rackchaos::cluster
