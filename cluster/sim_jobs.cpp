// Synchronous training jobs on the simulated cluster: placement, progress, checkpoints, hangs, restarts.
//
// Progress is analytic between events: steps advance at 1 / step_time while running. A step lasts as
// long as its slowest participant: compute at the slowest GPU's speed plus exposed collectives over
// the slowest NVLink and scale-out paths.
#include <algorithm>
#include <bit>
#include <cmath>
#include <span>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

Result<JobId> SimBackend::AddJob(const JobConfig& config) {
  const RackModel& m = topo_.model();
  if (config.gpus < 1) return Status::Invalid("job '" + config.name + "' needs at least one GPU");
  if (config.gpus > static_cast<int>(topo_.gpus().size()))
    return Status::Invalid("job '" + config.name + "' asks for " + std::to_string(config.gpus) + " GPUs; the cluster has " +
                           std::to_string(topo_.gpus().size()));
  if (config.nvlink_share < 0 || config.scaleout_share < 0 || config.nvlink_share + config.scaleout_share >= 1)
    return Status::Invalid("job '" + config.name + "': collective shares must be >= 0 and sum below 1");
  RC_RETURN_IF_ERROR(CheckGroups(config, m));
  Job j;
  j.cfg = config;
  j.id = static_cast<JobId>(jobs_.size());
  j.until_ckpt = config.checkpoint_interval;
  j.region = config.region < static_cast<int>(topo_.regions().size()) ? config.region : -1;
  j.report_phase = Duration{static_cast<int64_t>(report_phases_.Below(static_cast<uint64_t>(opt_.step_report_period.us)))};
  jobs_.push_back(std::move(j));
  return jobs_.back().id;
}

void SimBackend::PlaceQueuedJobs() {
  for (Job& j : jobs_) {
    if (j.state != JobState::kQueued || !Place(j)) continue;
    if (!j.started_once) {  // the run starts with its jobs already in their stride
      j.started_once = true;
      StartRunning(j);
      continue;
    }
    std::string where = "placed on " + std::to_string(j.trays.size()) + " trays";
    if (j.placed_gpus < j.cfg.gpus) {
      j.shrink_cause = j.cause;
      where = "shrunk to " + std::to_string(j.placed_gpus) + " of " + std::to_string(j.cfg.gpus) + " GPUs, " + where;
      Record(ActionTaken{"shrink", kNoComponent, j.id, true, where + ": too few healthy trays free (remediation.shrink)"});
    }
    StartAfterOverhead(j, where);
  }
  GrowShrunkJobs();
}

void SimBackend::StartAfterOverhead(Job& j, const std::string& detail) {
  SetJobState(j, JobState::kRestarting, j.cause, detail);
  JobId id = j.id;
  j.start_timer = clock_.CallAfter(j.cfg.restart_overhead, [this, id] {
    jobs_[id].start_timer = 0;
    StartRunning(jobs_[id]);
  });
}

// A shrunk job grows back to its full size once enough trays are free: from its last checkpoint, with
// the restart overhead again. Queued jobs were placed first; the job's own trays count if healthy.
void SimBackend::GrowShrunkJobs() {
  if (!opt_.shrink_elastic) return;
  const int per_tray = topo_.model().gpus_per_tray;
  for (Job& j : jobs_) {
    if ((j.state != JobState::kRunning && j.state != JobState::kRestarting) || j.placed_gpus >= j.cfg.gpus) continue;
    size_t need = static_cast<size_t>((j.cfg.gpus + per_tray - 1) / per_tray), own = 0;
    for (ComponentId tray : j.trays) {
      const Tray& t = tray_[slot(tray)];
      own += t.present && !t.booting && !t.drained;
    }
    if (free_count_ + own < need) continue;
    std::string from = std::to_string(j.placed_gpus);
    if (j.cfg.grouped && !GrowFits(j)) {  // enough trays, not in whole blocks per domain: stay shrunk
      if (j.grow_note != free_count_)
        Record(ActionTaken{"grow", kNoComponent, j.id, false,
                           "stays at " + from + " of " + std::to_string(j.cfg.gpus) + " GPUs: " +
                               std::to_string(free_count_ + own) + " trays free but not in whole blocks of " +
                               std::to_string(j.cfg.tp * j.cfg.ep) + " GPUs (tp*ep) per NVLink domain"});
      j.grow_note = free_count_;
      continue;
    }
    j.cause = j.shrink_cause;  // the way back is still that fault's doing
    BackToQueue(j, "growing back from " + from + " GPUs: trays are free again");
    if (!Place(j)) continue;  // cannot happen: counted above
    std::string where = "grown back to " + std::to_string(j.placed_gpus) + " GPUs on " + std::to_string(j.trays.size()) + " trays";
    Record(ActionTaken{"grow", kNoComponent, j.id, true, where + " (was " + from + "), from the last checkpoint"});
    StartAfterOverhead(j, where);
    j.shrink_cause = kNoFault;
    j.grow_note = SIZE_MAX;
  }
}

// Takes the first free, healthy, undrained trays, regular ones before hot spares. The scheduler knows
// only what Slurm knows: drains and nodes that are down, not which GPU is secretly slow.
bool SimBackend::Place(Job& job) {
  const int per_tray = topo_.model().gpus_per_tray;
  size_t need = static_cast<size_t>((job.cfg.gpus + per_tray - 1) / per_tray);
  int gpus = job.cfg.gpus;
  const size_t usable = job.domain_lost ? free_count_ : free_count_ - free_spare_rack_;  // spare racks: see SimOptions
  if (usable < need) {  // an elastic job restarting under remediation.shrink takes the whole trays free
    size_t least = static_cast<size_t>((job.cfg.min_gpus + per_tray - 1) / per_tray);
    if (!opt_.shrink_elastic || job.cfg.min_gpus <= 0 || !job.started_once || usable < least) return false;
    need = usable;
    gpus = static_cast<int>(need) * per_tray;
    if (job.cfg.grouped) {  // whole sets of ep replicas, in whole blocks per domain (sim_parallel.cpp)
      gpus = ShrunkGroupedSize(job, gpus);
      if (gpus == 0) return false;
      need = static_cast<size_t>((gpus + per_tray - 1) / per_tray);
    }
  }
  // Regular trays, then hot spare trays; a job whose NVLink domain was lost goes to the spare racks first.
  size_t regular = 0;  // how many of them are regular trays (the rest are spares): sim_restart.cpp
  std::vector<ComponentId> trays;
  for (const auto& [lo, hi] : RegionWindows(job))  // sim_regions.cpp: the whole cluster without regions
    if (!(trays = PickTrays(job, gpus, need, free_, lo, hi, &regular)).empty()) break;  // sim_parallel.cpp
  if (trays.empty()) return false;  // free trays, but not in whole TP/EP blocks per domain: wait
  job.spare_trays = static_cast<int>(trays.size() - regular);
  job.trays = std::move(trays);
  job.placed_gpus = gpus;
  NoteGroupFabrics(job);
  if (!topo_.regions().empty()) job.region = topo_.RegionOf(job.trays.ids().front());
  if (job.domain_lost) NoteSpareRackUse(job);
  job.env = ThermalState{idle_steady_c_, clock_.Now(), idle_steady_c_, full_tau_s_};
  int left = gpus;
  for (ComponentId tray : job.trays) {
    SeatJob(slot(tray), job.id, std::min(left, per_tray));
    left -= std::min(left, per_tray);
  }
  return true;
}

void SimBackend::ReleaseTrays(Job& job) {
  std::vector<ComponentId> loud;
  for (ComponentId g : loud_gpus_)
    if (JobOfGpu(g) == job.id) loud.push_back(g);
  ThermalRelease(job);  // also gives the trays back (their seats and free_)
  job.trays = {};
  job.placed_gpus = 0;
  job.spare_trays = 0;
  for (ComponentId g : loud) UpdateThermal(g);
}

void SimBackend::StartRunning(Job& job) {
  job.state = JobState::kRunning;
  job.fatal = false;
  job.last_update = job.segment_start = clock_.Now();
  job.step_time_s = 0;  // forces RefreshJob to report the new speed
  RefreshJob(job.id);
  if (job.cfg.input_from_object_store) ObjectStoreReadersChanged(job);  // sim_region_link.cpp
}

void SimBackend::Advance(Job& job) {
  Time now = clock_.Now();
  if (job.state == JobState::kRunning && job.step_time_s > 0) {
    Duration dt = now - job.last_update;
    job.steps += dt.Seconds() / job.step_time_s;
    job.running_since_ckpt += dt;
    job.running_total += dt;
  }
  job.last_update = now;
}

void SimBackend::StopTimers(Job& job) {
  for (TimerId* t : {&job.ckpt_timer, &job.ack_timer, &job.timeout_timer, &job.start_timer, &job.report_timer}) {
    if (*t) clock_.Cancel(*t);
    *t = 0;
  }
}

void SimBackend::SetJobState(Job& job, JobState state, FaultId cause, const std::string& detail, Duration lost) {
  bool was_running = job.state == JobState::kRunning;
  if (was_running && state != JobState::kRunning) {
    job.until_ckpt -= clock_.Now() - job.segment_start;
    if (job.ckpt_timer) clock_.Cancel(job.ckpt_timer);
    if (job.ack_timer) clock_.Cancel(job.ack_timer);
    if (job.report_timer) clock_.Cancel(job.report_timer);
    job.ckpt_timer = job.ack_timer = job.report_timer = 0;
    job.step_time_s = 0;
  }
  job.state = state;
  job.cause = cause;
  JobChanged change{job.id, state, job.steps, job.step_time_s, state == JobState::kRunning ? job.speed : 0,
                    job.placed_gpus, lost, cause, detail, job.trays};
  ChargeUnsafeWork(job, change);  // sim_regions.cpp: a failed checkpoint store's share of the rework
  Record(std::move(change));
  Emit(JobStatus{job.id, state, job.trays, detail}, clock_.Now());
  if (was_running != (state == JobState::kRunning)) JobPowerChanged(job);
  if (job.cfg.input_from_object_store) ObjectStoreReadersChanged(job);  // sim_region_link.cpp, if it stopped
}

// Re-derives a running or hung job's condition from its GPUs and links after any change to them.
void SimBackend::RefreshJob(JobId id) {
  Job& j = jobs_[id];
  if (j.state != JobState::kRunning && j.state != JobState::kHung) return;
  Advance(j);
  const RackModel& m = topo_.model();
  // A lost GPU, tray or NIC link stops every collective: the job hangs. Only abnormal GPUs and trays
  // are looked at (the indexes are in id order, which is the job's rank order).
  FaultId hard_cause = kNoFault;
  bool hard = false, fatal = false;
  double domain_bw = 1;
  FaultId domain_cause = kNoFault;
  std::string why;
  for (ComponentId g : odd_gpus_) {
    if (GpuAlive(g) || JobOfGpu(g) != id) continue;
    const Tray& t = tray_[slot(topo_.TrayOf(g))];
    hard = fatal = true;
    hard_cause = !t.present ? t.presence_cause : gpu(g).failed ? gpu(g).fail_cause : gpu(g).thermal_cause;
    why = topo_.at(g).name + (t.present ? " fell off the bus" : " is gone");
    break;
  }
  for (auto it = nic_down_trays_.begin(); !hard && it != nic_down_trays_.end(); ++it) {
    if (seat_[slot(*it)].job != id) continue;
    const Tray& t = tray_[slot(*it)];
    for (size_t n = 0; n < t.nic_up.size(); ++n)
      if (!t.nic_up[n] && NicCarriesJob(j, *it, n)) {  // a rank whose groups stay in NVLink does not care
        hard = true;
        hard_cause = t.nic_cause[n];
        why = topo_.at(*it).name + ".nic" + std::to_string(n) + " link down";
        break;
      }
  }
  if (!hard && !impaired_racks_.empty()) {  // an NVLink domain without a partition stops its jobs
    DomainImpact(id, hard, domain_bw, domain_cause);
    if (hard) {
      fatal = true;
      hard_cause = domain_cause;
      why = "NVLink domain UNHEALTHY";
    }
  }
  FaultId spine_cause = kNoFault;  // sim_spines.cpp: cross-leaf traffic over the spines left
  const double spine_share = spines_lost_ || super_spines_lost_ ? SpineShare(j, spine_cause) : 1;
  if (!hard && spine_share <= 0) {
    hard = true;
    hard_cause = spine_cause;
    why = "no spine left between its leaf groups";
  }
  const FaultId input_cause = hard || region_.empty() ? kNoFault : InputLost(j);  // sim_regions.cpp
  if (input_cause != kNoFault) {
    hard = true;
    hard_cause = input_cause;
    why = "its data loader waits on a failed object store";
  }
  if (hard) {
    j.fatal = j.fatal || fatal;
    if (j.state == JobState::kRunning) {
      SetJobState(j, JobState::kHung, hard_cause, why);
      j.timeout_timer = clock_.CallAfter(j.cfg.collective_timeout, [this, id] { OnCollectiveTimeout(id); });
    }
    return;
  }
  if (j.state == JobState::kHung && j.fatal) return;
  // Slowest participant, slowest NVLink, and what caused each.
  double min_speed = 1, min_nvlink = 1;
  FaultId speed_cause = kNoFault, link_cause = kNoFault;
  bool slow_ranks = false;
  for (ComponentId g : odd_gpus_) {
    if (JobOfGpu(g) != id) continue;
    double s = GpuSpeed(g);
    slow_ranks = slow_ranks || s < 1 - 1e-12;
    if (s < min_speed - 1e-12) {
      min_speed = s;
      speed_cause = gpu(g).throttling ? gpu(g).thermal_cause : gpu(g).cap_cause;
    }
    double up = static_cast<double>(m.nvlink_links_per_gpu - std::popcount(gpu(g).nvlink_down)) / m.nvlink_links_per_gpu;
    if (up < min_nvlink - 1e-12) {
      min_nvlink = up;
      link_cause = gpu(g).link_cause;
    }
  }
  if (domain_bw < min_nvlink - 1e-12) {  // adaptive mode: every GPU of the domain at (S - lost) / S
    min_nvlink = domain_bw;
    link_cause = domain_cause;
  }
  // Each kind of group waits for its slowest link (sim_parallel.cpp); every rank is in one group of
  // each kind, so that is the slowest link among the job's ranks. The EP and PP terms come last: an
  // ungrouped job adds zeros and keeps its arithmetic bit for bit.
  const double nom = j.cfg.step_time.Seconds();
  const CommShares sh = SharesOf(j.cfg);
  const double compute = nom * sh.compute();
  SlowLinks slow = degraded_.empty() ? SlowLinks{} : SlowLinksOf(id);
  if (!j.cfg.grouped && spine_share < slow.nic) slow = {slow.nvlink, spine_share, spine_cause};  // sim_spines.cpp
  const double nvlink_bw = min_nvlink * slow.nvlink;
  // DP and PP: each kind at its slowest group, on the fabric each group uses (sim_parallel.cpp).
  // Ungrouped: DP over the NICs (and the spines).
  double dp_bw = slow.nic, pp_bw = slow.nic, dp_at = nom * sh.dp, pp_at = nom * sh.pp;  // at the ports' pace
  if (j.cfg.grouped) {
    const auto kinds = GroupLinksOf(j);  // each kind at the domains its own groups use
    dp_bw = kinds[kDp].bw;
    pp_bw = kinds[kPp].bw;
    dp_at = nom * sh.dp / kinds[kDp].ports;
    pp_at = nom * sh.pp / kinds[kPp].ports;
    for (const KindLinks& k : kinds)  // the slowest degraded link or spine share that some group waits on
      if (k.slow < std::min(slow.nvlink, slow.nic)) slow = {slow.nvlink, k.slow, k.cause};
  }
  double step = compute / min_speed + nom * sh.tp / nvlink_bw + nom * sh.dp / dp_bw + nom * sh.ep / nvlink_bw +
                nom * sh.pp / pp_bw;
  double compute_penalty = compute / min_speed - compute;
  double link_penalty = nom * sh.tp / min_nvlink - nom * sh.tp + (nom * sh.ep / min_nvlink - nom * sh.ep);
  if (j.cfg.grouped) link_penalty += dp_at - nom * sh.dp + (pp_at - nom * sh.pp);
  double slow_penalty =
      step - compute / min_speed - nom * sh.tp / min_nvlink - dp_at - nom * sh.ep / min_nvlink - pp_at;
  FaultId cause = compute_penalty >= link_penalty ? speed_cause : link_cause;
  if (slow_penalty > std::max(compute_penalty, link_penalty)) cause = slow.cause;
  if (compute_penalty < 1e-9 && link_penalty < 1e-9 && slow_penalty < 1e-9) cause = kNoFault;
  const DataStall data = DataStallOf(j);  // the loader prefetches during the step: only a longer read stalls
  j.stall_s = std::max(0.0, data.read_s - step);
  if (j.stall_s > 0) {
    step = data.read_s;
    if (j.stall_s > std::max({compute_penalty, link_penalty, slow_penalty})) cause = data.cause;
  }
  if (j.placed_gpus < j.cfg.gpus) {  // shrunk: the same global batch on fewer GPUs
    step *= static_cast<double>(j.cfg.gpus) / j.placed_gpus;
    if (cause == kNoFault) cause = j.shrink_cause;
  }
  slow_ranks = slow_ranks || slow.nvlink < 1 || slow.nic < 1 || j.stall_s > 0;
  bool resumed = j.state == JobState::kHung;
  if (resumed) {
    if (j.timeout_timer) clock_.Cancel(j.timeout_timer);
    j.timeout_timer = 0;
  }
  if (slow_ranks && !j.report_timer && !resumed)
    j.report_timer = clock_.CallAt(NextSlot(j.report_phase, opt_.step_report_period, clock_.Now()), [this, id] { OnStepReport(id); });
  if (!resumed && std::fabs(step - j.step_time_s) < 1e-9) return;
  bool first = j.step_time_s == 0 && !resumed;
  j.speed = nom / step;
  if (resumed) {
    j.state = JobState::kRunning;  // SetJobState below records it; timers restart here
    j.segment_start = clock_.Now();
  }
  j.step_time_s = step;
  j.cause = cause;
  Record(JobChanged{j.id, JobState::kRunning, j.steps, step, j.speed, j.placed_gpus, {}, cause,
                    resumed ? "collectives resumed" : (first ? "running" : "speed changed"), j.trays});
  if (resumed || first) {
    Emit(JobStatus{j.id, JobState::kRunning, j.trays, ""}, clock_.Now());
    ScheduleCheckpoint(j);
    if (slow_ranks && !j.report_timer)
      j.report_timer = clock_.CallAt(NextSlot(j.report_phase, opt_.step_report_period, clock_.Now()), [this, id] { OnStepReport(id); });
    JobPowerChanged(j);
  }
}

void SimBackend::ScheduleCheckpoint(Job& job) {
  if (job.until_ckpt <= Duration{}) job.until_ckpt = job.cfg.checkpoint_interval;
  JobId id = job.id;
  job.segment_start = clock_.Now();
  job.ckpt_timer = clock_.CallAfter(job.until_ckpt, [this, id] { OnCheckpoint(id); });
}

// A checkpoint snapshots progress now; it counts once the store acknowledges the write.
void SimBackend::OnCheckpoint(JobId id) {
  Job& j = jobs_[id];
  j.ckpt_timer = 0;
  Advance(j);
  j.pending_steps = j.steps;
  j.pending_running = j.running_since_ckpt;
  j.pending_total = j.running_total;
  j.until_ckpt = j.cfg.checkpoint_interval;
  ScheduleCheckpoint(j);
  if (j.ack_timer) clock_.Cancel(j.ack_timer);
  j.ack_timer = clock_.CallAfter(j.cfg.checkpoint_write, [this, id] {
    Job& job = jobs_[id];
    job.ack_timer = 0;
    if (CheckpointWriteFails(job)) return;  // sim_regions.cpp: not acknowledged, the job trains on
    job.ckpt_steps = job.pending_steps;
    Advance(job);
    job.running_since_ckpt -= job.pending_running;
    job.ack_total = job.pending_total;
    Record(Checkpointed{id, job.ckpt_steps});
    if (job.cfg.checkpoint_copy > Duration{} && !job.copy_timer) CopyCheckpoint(id);
  });
}

void SimBackend::OnCollectiveTimeout(JobId id) {
  Job& j = jobs_[id];
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

Status SimBackend::RequeueJob(JobId id, const std::string& reason) {
  if (id >= jobs_.size()) return Status::NotFound("no job " + std::to_string(id));
  Job& j = jobs_[id];
  if (j.state == JobState::kFinished) return Status::Invalid("job '" + j.cfg.name + "' has finished");
  if (j.state == JobState::kQueued) return Status::Ok();
  if (RestartInPlace(j, "requeued: " + reason)) return Status::Ok();  // sim_restart.cpp
  BackToQueue(j, "requeued: " + reason);
  PlaceQueuedJobs();
  return Status::Ok();
}

// Back to the queue from the last checkpoint; a job placed but not started yet (restarting) just gives
// its trays back.
void SimBackend::BackToQueue(Job& j, const std::string& detail) {
  StopForRequeue(j, detail);
  ReleaseTrays(j);
}

void SimBackend::StopForRequeue(Job& j, const std::string& detail) {
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

// Lists the ranks off nominal speed, each with its own jitter, and summarizes the others: their median
// and MAD as a sample of `bulk` ranks with Gaussian jitter would give them (the sample median's standard
// error is 1.2533 sigma / sqrt(n); MAD = 0.6745 sigma). Reports again one period later while some rank
// is listed, so a streak ends with one report that lists nobody.
void SimBackend::OnStepReport(JobId id) {
  Job& j = jobs_[id];
  j.report_timer = 0;
  if (j.state != JobState::kRunning) return;
  StepReport r;
  r.job = id;
  r.step_time_s = j.step_time_s;
  double nominal_compute = j.cfg.step_time.Seconds() * SharesOf(j.cfg).compute();
  if (j.placed_gpus < j.cfg.gpus) nominal_compute *= static_cast<double>(j.cfg.gpus) / j.placed_gpus;  // shrunk
  for (ComponentId g : odd_gpus_) {
    double s = GpuSpeed(g);
    if (JobOfGpu(g) != id || s >= 1 - 1e-12) continue;
    double noise = std::clamp(jitter_rng_.Normal(0, opt_.step_jitter), -0.2, 0.2);
    r.rank_gpus.push_back(g);
    r.compute_s.push_back(static_cast<float>(nominal_compute / std::max(s, 1e-6) * (1 + noise)));
  }
  AddStalledRanks(j, j.stall_s, nominal_compute, r);
  if (!degraded_.empty()) AddCommTimes(j, r);
  r.bulk_ranks = j.placed_gpus - static_cast<int64_t>(r.rank_gpus.size());
  if (r.bulk_ranks > 0) {
    double n = static_cast<double>(r.bulk_ranks), sigma = opt_.step_jitter;
    r.bulk_median_s = nominal_compute * (1 + std::clamp(jitter_rng_.Normal(0, 1.2533 * sigma / std::sqrt(n)), -0.2, 0.2));
    r.bulk_mad_s = nominal_compute * 0.6745 * sigma * std::max(0.0, 1 + jitter_rng_.Normal(0, 1.1 / std::sqrt(n)));
  }
  bool listed = !r.rank_gpus.empty();
  Emit(std::move(r), clock_.Now());
  if (listed) j.report_timer = clock_.CallAfter(opt_.step_report_period, [this, id] { OnStepReport(id); });
}

}  // namespace rackchaos::cluster
