// A job's step time and what its profiler reports (cluster/sim_scheduler.h).
//
// A synchronous step waits for every rank and every group: compute at the slowest GPU's speed, each kind
// of group's exposed collectives over its slowest link (fabric: NVLink ports, impaired domains, degraded
// links, NICs, spines), and the data stall when the slowest tray reads one step's input more slowly than
// the step runs (storage). A lost GPU, tray, NIC, domain partition, spine path or object store hangs it.
// Only abnormal GPUs, trays and links are looked at (the indexes are in id order, which is the job's
// rank order), never every GPU of a job.
#include <algorithm>
#include <bit>
#include <cmath>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_storage.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

void Scheduler::NoteGpu(ComponentId gpu_id) {
  ctx_.SettleOwed();
  bool odd = !nodes_.GpuAlive(gpu_id) || fabric_.NvlinkDown(gpu_id) != 0 || thermal_.GpuSpeed(gpu_id) < 1 - 1e-12;
  if (odd)
    odd_gpus_.insert(gpu_id);
  else
    odd_gpus_.erase(gpu_id);
}

// A lost GPU, tray or NIC link stops every collective: the job hangs. Only abnormal GPUs and trays are
// looked at (the indexes are in id order, which is the job's rank order).
Scheduler::Blockage Scheduler::FindBlockage(const SimJob& j) {
  Blockage b;
  for (ComponentId g : odd_gpus_) {
    if (nodes_.GpuAlive(g) || seats_.JobOfGpu(g) != j.id) continue;
    const ComponentId tray = topo_.TrayOf(g);
    const bool present = nodes_.TrayPresent(tray);
    b.hard = b.fatal = true;
    b.cause = !present ? nodes_.PresenceCause(tray) : nodes_.GpuFailed(g) ? nodes_.FailCause(g) : thermal_.ThermalCause(g);
    b.why = topo_.at(g).name + (present ? " fell off the bus" : " is gone");
    break;
  }
  // A GPU with every NVLink port down cannot take part in any collective (NCCL's NVLink transport has no
  // path left): the job hangs until a port returns, rather than running at a bandwidth of zero.
  for (ComponentId g : odd_gpus_) {
    if (b.hard || seats_.JobOfGpu(g) != j.id) continue;
    if (std::popcount(fabric_.NvlinkDown(g)) < topo_.model().nvlink_links_per_gpu) continue;
    b.hard = true;
    b.cause = fabric_.LinkCause(g);
    b.why = topo_.at(g).name + " has no NVLink port up";
  }
  // A rank whose groups stay in NVLink does not care about its NIC (sim_nics.cpp).
  if (!b.hard) b.hard = fabric_.JobNicDown(j, b.cause, b.why);
  if (!b.hard && fabric_.AnyDomainImpaired()) {  // an NVLink domain without a partition stops its jobs
    fabric_.DomainImpact(j.id, b.hard, b.domain_bw, b.domain_cause);
    if (b.hard) {
      b.fatal = true;
      b.cause = b.domain_cause;
      b.why = "NVLink domain UNHEALTHY";
    }
  }
  // sim_spines.cpp: cross-leaf traffic over the spines left
  if (fabric_.AnySpineLost()) b.spine_share = fabric_.SpineShare(j, b.spine_cause);
  if (!b.hard && b.spine_share <= 0) {
    b.hard = true;
    b.cause = b.spine_cause;
    b.why = "no spine left between its leaf groups";
  }
  const FaultId input_cause = b.hard || topo_.regions().empty() ? kNoFault : storage_.InputLost(j);
  if (input_cause != kNoFault) {
    b.hard = true;
    b.cause = input_cause;
    b.why = "its data loader waits on a failed object store";
  }
  return b;
}

// A failure during a restart: the ranks coming up wait on the lost part as running ones would (NCCL's
// init and first collectives), so the restart does not end; the job hangs, charged to that failure, until
// the healer requeues it, the watchdog fails it, or the part is back and the restart starts over.
void Scheduler::StallRestart(SimJob& j, const Blockage& b) {
  if (j.start_timer) clock_.Cancel(j.start_timer);
  j.start_timer = 0;
  j.fatal = b.fatal;
  SetJobState(j, JobState::kHung, b.cause, "restart stalled: " + b.why);
  j.restart_stalled = true;
  const JobId id = j.id;
  j.timeout_timer = clock_.CallAfter(j.cfg.collective_timeout, [this, id] { ctx_.SettleOwed(); OnCollectiveTimeout(id); });
}

// Re-derives a running, hung or restarting job's condition from its GPUs and links after any change to them.
void Scheduler::RefreshJob(JobId id) {
  ctx_.SettleOwed();
  SimJob& j = jobs_[id];
  if (j.state != JobState::kRunning && j.state != JobState::kHung && j.state != JobState::kRestarting) return;
  Advance(j);
  const RackModel& m = topo_.model();
  const Blockage block = FindBlockage(j);
  if (j.state == JobState::kRestarting) {  // only a failure stops a restart; its speed is found at the start
    if (block.hard) StallRestart(j, block);
    return;
  }
  if (block.hard) {
    j.fatal = j.fatal || block.fatal;
    if (j.state == JobState::kRunning) {
      SetJobState(j, JobState::kHung, block.cause, block.why);
      j.timeout_timer = clock_.CallAfter(j.cfg.collective_timeout, [this, id] { ctx_.SettleOwed(); OnCollectiveTimeout(id); });
    }
    return;
  }
  if (j.state == JobState::kHung && j.fatal) return;
  if (j.state == JobState::kHung && j.restart_stalled) {  // the part is back: the restart starts over
    if (j.timeout_timer) clock_.Cancel(j.timeout_timer);
    j.timeout_timer = 0;
    StartAfterOverhead(j, "restart starts over: its collectives can run again");
    return;
  }
  const double domain_bw = block.domain_bw, spine_share = block.spine_share;
  const FaultId domain_cause = block.domain_cause, spine_cause = block.spine_cause;
  // Slowest participant, slowest NVLink, and what caused each.
  double min_speed = 1, min_nvlink = 1;
  FaultId speed_cause = kNoFault, link_cause = kNoFault;
  bool slow_ranks = false;
  for (ComponentId g : odd_gpus_) {
    if (seats_.JobOfGpu(g) != id) continue;
    double s = thermal_.GpuSpeed(g);
    slow_ranks = slow_ranks || s < 1 - 1e-12;
    if (s < min_speed - 1e-12) {
      min_speed = s;
      speed_cause = thermal_.SpeedCause(g);
    }
    double up = static_cast<double>(m.nvlink_links_per_gpu - std::popcount(fabric_.NvlinkDown(g))) / m.nvlink_links_per_gpu;
    if (up < min_nvlink - 1e-12) {
      min_nvlink = up;
      link_cause = fabric_.LinkCause(g);
    }
  }
  if (domain_bw < min_nvlink - 1e-12) {  // adaptive mode: every GPU of the domain at (S - lost) / S
    min_nvlink = domain_bw;
    link_cause = domain_cause;
  }
  // Each kind of group waits for its slowest link (sim_links.cpp); every rank is in one group of
  // each kind, so that is the slowest link among the job's ranks. The EP and PP terms come last: an
  // ungrouped job adds zeros and keeps its arithmetic bit for bit.
  const double nom = j.cfg.step_time.Seconds();
  const CommShares sh = SharesOf(j.cfg);
  const double compute = nom * sh.compute();
  Fabric::SlowLinks slow = fabric_.AnyDegraded() ? fabric_.SlowLinksOf(j) : Fabric::SlowLinks{};
  if (!j.cfg.grouped && spine_share < slow.nic) slow = {slow.nvlink, spine_share, spine_cause};  // sim_spines.cpp
  const double nvlink_bw = min_nvlink * slow.nvlink;
  // DP and PP: each kind at its slowest group, on the fabric each group uses (sim_links.cpp).
  // Ungrouped: DP over the NICs (and the spines).
  double dp_bw = slow.nic, pp_bw = slow.nic, dp_at = nom * sh.dp, pp_at = nom * sh.pp;  // at the ports' pace
  if (j.cfg.grouped) {
    const auto kinds = fabric_.GroupLinksOf(j);  // each kind at the domains its own groups use
    dp_bw = kinds[kDp].bw;
    pp_bw = kinds[kPp].bw;
    dp_at = nom * sh.dp / kinds[kDp].ports;
    pp_at = nom * sh.pp / kinds[kPp].ports;
    for (const Fabric::KindLinks& k : kinds)  // the slowest degraded link or spine share that some group waits on
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
  const Storage::DataStall data = storage_.DataStallOf(j);  // the loader prefetches during the step: only a longer read stalls
  j.stall_s = std::max(0.0, data.read_s - step);
  if (j.stall_s > 0) {
    step = data.read_s;
    if (j.stall_s > std::max({compute_penalty, link_penalty, slow_penalty})) cause = data.cause;
  }
  if (j.at.gpus < j.cfg.gpus) {  // shrunk: the same global batch on fewer GPUs
    step *= static_cast<double>(j.cfg.gpus) / j.at.gpus;
    if (cause == kNoFault) cause = j.shrink_cause;
  }
  slow_ranks = slow_ranks || slow.nvlink < 1 || slow.nic < 1 || j.stall_s > 0;
  bool resumed = j.state == JobState::kHung;
  if (resumed) {
    if (j.timeout_timer) clock_.Cancel(j.timeout_timer);
    j.timeout_timer = 0;
  }
  if (slow_ranks && !j.report_timer && !resumed)
    j.report_timer = clock_.CallAt(SimContext::NextSlot(j.report_phase, opt_.step_report_period, clock_.Now()),
                                   [this, id] { ctx_.SettleOwed(); OnStepReport(id); });
  if (!resumed && std::fabs(step - j.step_time_s) < 1e-9) return;
  if (j.blocked) {  // training stopped for a checkpoint: its events show the new pace when it goes on (EndBlock)
    j.speed = nom / step;
    j.step_time_s = step;
    j.cause = cause;
    return;
  }
  bool first = j.step_time_s == 0 && !resumed;
  j.speed = nom / step;
  if (resumed) {
    j.state = JobState::kRunning;  // SetJobState below records it; timers restart here
    j.segment_start = clock_.Now();
  }
  j.step_time_s = step;
  j.cause = cause;
  ctx_.Record(JobChanged{j.id, JobState::kRunning, j.steps, step, j.speed, j.at.gpus, {}, cause,
                         resumed ? "collectives resumed" : (first ? "running" : "speed changed"), j.at.trays});
  if (resumed || first) {
    ctx_.Emit(JobStatus{j.id, JobState::kRunning, j.at.trays, ""}, clock_.Now());
    ScheduleCheckpoint(j);
    if (slow_ranks && !j.report_timer)
      j.report_timer = clock_.CallAt(SimContext::NextSlot(j.report_phase, opt_.step_report_period, clock_.Now()),
                                     [this, id] { ctx_.SettleOwed(); OnStepReport(id); });
    thermal_.JobPowerChanged(j.id);
  }
}

// Lists the ranks off nominal speed, each with its own jitter, and summarizes the others: their median
// and MAD as a sample of `bulk` ranks with Gaussian jitter would give them (the sample median's standard
// error is 1.2533 sigma / sqrt(n); MAD = 0.6745 sigma). Reports again one period later while some rank
// is listed, so a streak ends with one report that lists nobody.
void Scheduler::OnStepReport(JobId id) {
  SimJob& j = jobs_[id];
  j.report_timer = 0;
  if (j.state != JobState::kRunning) return;
  StepReport r;
  r.job = id;
  r.step_time_s = j.step_time_s;
  double nominal_compute = j.cfg.step_time.Seconds() * SharesOf(j.cfg).compute();
  if (j.at.gpus < j.cfg.gpus) nominal_compute *= static_cast<double>(j.cfg.gpus) / j.at.gpus;  // shrunk
  for (ComponentId g : odd_gpus_) {
    double s = thermal_.GpuSpeed(g);
    if (seats_.JobOfGpu(g) != id || s >= 1 - 1e-12) continue;
    double noise = std::clamp(jitter_rng_.Normal(0, opt_.step_jitter), -0.2, 0.2);
    r.rank_gpus.push_back(g);
    r.compute_s.push_back(static_cast<float>(nominal_compute / std::max(s, 1e-6) * (1 + noise)));
  }
  storage_.AddStalledRanks(j, j.stall_s, nominal_compute, r, jitter_rng_);
  if (fabric_.AnyDegraded()) fabric_.AddCommTimes(j, r);
  r.bulk_ranks = j.at.gpus - static_cast<int64_t>(r.rank_gpus.size());
  if (r.bulk_ranks > 0) {
    double n = static_cast<double>(r.bulk_ranks), sigma = opt_.step_jitter;
    r.bulk_median_s = nominal_compute * (1 + std::clamp(jitter_rng_.Normal(0, 1.2533 * sigma / std::sqrt(n)), -0.2, 0.2));
    r.bulk_mad_s = nominal_compute * 0.6745 * sigma * std::max(0.0, 1 + jitter_rng_.Normal(0, 1.1 / std::sqrt(n)));
  }
  bool listed = !r.rank_gpus.empty();
  ctx_.Emit(std::move(r), clock_.Now());
  if (listed) j.report_timer = clock_.CallAfter(opt_.step_report_period, [this, id] { ctx_.SettleOwed(); OnStepReport(id); });
}

}  // namespace rackchaos::cluster
