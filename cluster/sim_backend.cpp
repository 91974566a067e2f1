#include "cluster/sim_backend.h"

#include <algorithm>
#include <cmath>

#include "cluster/kernel_log.h"

namespace rackchaos::cluster {

const char* VerbName(Verb v) {
  switch (v) {
    case Verb::kNvlinkPort: return "nvlink_port";
    case Verb::kNicLink: return "nic_link";
    case Verb::kPowerCap: return "power_cap";
    case Verb::kValve: return "valve";
    case Verb::kTrayPresence: return "tray_presence";
    case Verb::kDrain: return "drain";
    case Verb::kResume: return "resume";
    case Verb::kGpuReset: return "gpu_reset";
    case Verb::kRequeueJob: return "requeue_job";
    case Verb::kDiagnostic: return "diagnostic";
    case Verb::kGpuFailure: return "gpu_failure";
    case Verb::kProcessCrash: return "process_crash";
    case Verb::kReboot: return "reboot";
    case Verb::kComponentFailure: return "component_failure";
    case Verb::kLinkBandwidth: return "link_bandwidth";
    case Verb::kStorageRead: return "storage_read";
    case Verb::kStoreRate: return "store_rate";
    case Verb::kRegionOutage: return "region_outage";
  }
  return "unknown";
}

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kGpuTemperature: return "gpu_temperature_c";
    case Metric::kGpuPower: return "gpu_power_w";
    case Metric::kGpuClockFraction: return "gpu_clock_fraction";
    case Metric::kThermalThrottle: return "gpu_thermal_throttle";
    case Metric::kCoolantFlow: return "coolant_flow_l_per_min";
    case Metric::kPsuOk: return "psu_ok";
    case Metric::kLeak: return "leak_detected";
    case Metric::kPartOk: return "part_ok";
    case Metric::kProbeOk: return "probe_ok";
    case Metric::kSwitchTemperature: return "switch_temperature_c";
  }
  return "unknown";
}

SimBackend::SimBackend(const Topology& topology, VirtualClock& clock, Rng rng, EventSink& events, SimOptions options)
    : topo_(topology),
      clock_(clock),
      rng_(rng),
      jitter_rng_(rng.Fork("step-jitter")),
      events_(events),
      opt_(options),
      report_phases_(rng.Fork("report-phase")),
      comm_rng_(rng.Fork("comm-jitter")),
      part_phases_(rng.Fork("part-poll-phase")) {
  const RackModel& m = topo_.model();
  full_conductance_ = m.conductance_w_per_k + m.residual_conductance_w_per_k;
  full_tau_s_ = m.gpu_heat_capacity_j_per_k / full_conductance_;
  idle_steady_c_ = m.inlet_c + m.gpu_idle_w / full_conductance_;
  quiet_possible_ = m.inlet_c + m.gpu_tdp_w / full_conductance_ < m.gpu_slowdown_c - 1e-6;
  gpu_.resize(topo_.gpus().size());
  for (Gpu& g : gpu_) {
    g.cap_w = g.baseline_cap_w = m.gpu_tdp_w;
    g.power_w = m.gpu_idle_w;
    g.thermal.t0_c = g.thermal.steady_c = idle_steady_c_;
    g.thermal.tau_s = full_tau_s_;
    g.quiet = quiet_possible_;
  }
  if (!quiet_possible_) loud_gpus_.insert(topo_.gpus().begin(), topo_.gpus().end());
  // Poll and heartbeat phases are drawn once per tray: real agents start at arbitrary moments.
  Rng phases = rng_.Fork("phases");
  tray_.resize(topo_.trays().size());
  for (Tray& t : tray_) {
    t.hb_phase = Duration{static_cast<int64_t>(phases.Below(static_cast<uint64_t>(opt_.heartbeat_period.us)))};
    t.poll_phase = Duration{static_cast<int64_t>(phases.Below(static_cast<uint64_t>(opt_.telemetry_period.us)))};
    t.nic_up.assign(static_cast<size_t>(m.nics_per_tray), true);
    t.nic_cause.assign(static_cast<size_t>(m.nics_per_tray), kNoFault);
  }
  rack_.resize(topo_.racks().size());
  for (Rack& r : rack_) r.psu_failed.assign(static_cast<size_t>(m.power_shelves * m.psus_per_shelf), false);
  spine_failed_.assign(topo_.spines().size() + topo_.super_spines().size(), false);
  spine_out_.assign(spine_failed_.size(), false);
  pod_spines_lost_.assign(static_cast<size_t>(topo_.Pods()), 0);
  seat_.resize(topo_.trays().size());
  usable_.assign(topo_.trays().size(), 1);
  free_.assign(topo_.trays().size(), 1);
  for (ComponentId tray : topo_.trays()) spare_.push_back(topo_.at(tray).spare ? TrayUse::kHotSpare : TrayUse::kRegular);
  free_count_ = free_.size();
  if (opt_.spare_racks > 0) MarkSpareRacks();  // sim_spare_racks.cpp
  // Regions only: no other stream is drawn from, so plans without regions keep every draw.
  Rng probe_phases = rng_.Fork("probe-phase");
  for (size_t k = 0; k < topo_.regions().size(); ++k)
    region_.push_back({1, false, false, kNoFault, kNoFault,
                       Duration{static_cast<int64_t>(probe_phases.Below(static_cast<uint64_t>(opt_.probe_period.us)))}});
  links_.resize(topo_.regions().size());
}


JobId SimBackend::JobOfGpu(ComponentId gpu_id) const {
  const Seat& t = seat_[slot(topo_.TrayOf(gpu_id))];
  return t.job != kNoJob && topo_.at(gpu_id).index < t.job_gpus ? t.job : kNoJob;
}

void SimBackend::Touch(ComponentId gpu_id) {
  const Gpu& g = gpu(gpu_id);
  bool odd = !GpuAlive(gpu_id) || g.nvlink_down != 0 || GpuSpeed(gpu_id) < 1 - 1e-12;
  if (odd)
    odd_gpus_.insert(gpu_id);
  else
    odd_gpus_.erase(gpu_id);
}

void SimBackend::TouchTray(ComponentId tray_id) {
  size_t k = slot(tray_id);
  const Tray& t = tray_[k];
  const uint8_t usable = t.present && !t.booting && !t.drained;
  if (usable != usable_[k] && seat_[k].job != kNoJob) {  // its job will not get it back on a restart
    if (usable) jobs_[seat_[k].job].lost_seats.erase(tray_id);
    else jobs_[seat_[k].job].lost_seats.insert(tray_id);
  }
  usable_[k] = usable;
  UpdateFree(k);
}

void SimBackend::Emit(ObservationBody body, Time at) {
  // A timer fires once, so its body moves into the observation (a step report is one entry per rank).
  clock_.CallAt(at, [this, body = std::move(body)]() mutable {
    Observation obs{clock_.Now(), std::move(body)};
    for (ObservationSink* s : sinks_) s->OnObservation(obs);
  });
}

void SimBackend::EmitSamples(std::vector<TelemetrySample> samples, Time at) {
  clock_.CallAt(at, [this, samples = std::move(samples)] {
    for (const TelemetrySample& sample : samples) {
      const Observation obs{clock_.Now(), sample};
      for (ObservationSink* s : sinks_) s->OnObservation(obs);
      if (std::any_of(sinks_.begin(), sinks_.end(), [](const ObservationSink* s) { return s->StopsRun(); })) return;
    }
  });
}

void SimBackend::Physics(ComponentId c, const char* what, double value, FaultId cause) {
  Record(PhysicsChanged{c, what, value, cause});
}

Time SimBackend::NextSlot(Duration phase, Duration period, Time after) const {
  // The first time phase + k*period strictly after `after`. Link polls (1 s) run on the telemetry
  // phase (up to 10 s): reduce it first, or a change early in the run waits for the full phase.
  phase.us %= period.us;
  int64_t k = (after.us - phase.us) / period.us + 1;
  if (after.us < phase.us) k = 0;
  Time t{phase.us + k * period.us};
  return t > after ? t : t + period;
}

void SimBackend::Start() {
  for (ComponentId tray : topo_.trays()) WatchTelemetry(tray);
  PlaceQueuedJobs();
}

// ---------------------------------------------------------------- fault verbs

Status SimBackend::SetNvlinkPort(ComponentId gpu_id, int port, bool up, FaultId cause) {
  if (topo_.at(gpu_id).kind != Kind::kGpu || port < 0 || port >= topo_.model().nvlink_links_per_gpu)
    return Status::Invalid("no NVLink port " + std::to_string(port) + " on " + topo_.at(gpu_id).name);
  Gpu& g = gpu(gpu_id);
  uint64_t bit = uint64_t{1} << port;
  if (((g.nvlink_down & bit) == 0) == up) return Status::Ok();
  g.nvlink_down = up ? (g.nvlink_down & ~bit) : (g.nvlink_down | bit);
  g.link_cause = up ? kNoFault : cause;
  Physics(gpu_id, up ? "nvlink_up" : "nvlink_down", port, cause);
  Time seen = NextSlot(tray_of(gpu_id).poll_phase, opt_.link_poll_period, clock_.Now());
  Emit(LinkStateChange{gpu_id, port, up}, seen);
  Touch(gpu_id);
  if (!up) {
    // NVLink 5 errors surface as Xid 145 on Blackwell (RACK-FACTS: 144-150 NVLink 5 errors).
    XidLine x{topo_.PciOf(gpu_id), 145, 4242, "python3",
              "NVLink: Link " + std::to_string(port) + " is down, fatal error detected (0x0, 0x0, 0x10000, 0x0)"};
    Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
         clock_.Now() + opt_.log_delay);
  }
  if (JobId job = JobOfGpu(gpu_id); job != kNoJob) RefreshJob(job);
  return Status::Ok();
}

Status SimBackend::SetNicLink(ComponentId nic, bool up, FaultId cause) {
  if (topo_.at(nic).kind != Kind::kNic) return Status::Invalid(topo_.at(nic).name + " is not a NIC");
  return HoldNicLink(nic, nic, !up, cause);
}

Status SimBackend::ApplyNicLink(ComponentId nic, bool up, FaultId cause) {
  const Component& c = topo_.at(nic);
  Tray& t = tray_of(nic);
  if (t.nic_up[c.index] == up) return Status::Ok();
  t.nic_up[c.index] = up;
  t.nic_cause[c.index] = up ? kNoFault : cause;
  Physics(nic, up ? "link_up" : "link_down", 0, cause);
  if (std::find(t.nic_up.begin(), t.nic_up.end(), false) != t.nic_up.end())
    nic_down_trays_.insert(topo_.TrayOf(nic));
  else
    nic_down_trays_.erase(topo_.TrayOf(nic));
  Emit(LinkStateChange{nic, -1, up}, NextSlot(t.poll_phase, opt_.link_poll_period, clock_.Now()));
  if (JobId job = seat_[slot(topo_.TrayOf(nic))].job; job != kNoJob) RefreshJob(job);
  return Status::Ok();
}

// Power cap and valve opening: held states, sim_holds.cpp.

Status SimBackend::SetTrayPresent(ComponentId tray_id, bool present, FaultId cause) {
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  const auto s = present ? presence_holds_.Release(tray_id, tray_id, cause, 1)
                         : presence_holds_.Place(tray_id, tray_id, cause, 0, 1);
  ApplyTrayPresent(tray_id, s, cause);
  return Status::Ok();
}

// The tray is out while a tray_pull or its rack's power holds it out (cluster/holds.h); it comes back
// when the last hold is released.
void SimBackend::ApplyTrayPresent(ComponentId tray_id, const Holds<ComponentId>::State& s, FaultId cause) {
  Tray& t = tray_[slot(tray_id)];
  const bool present = !s.held;
  t.presence_cause = s.held ? s.cause : kNoFault;
  if (t.present == present) return;
  t.present = present;
  Physics(tray_id, present ? "inserted" : rack_of(tray_id).powered ? "removed" : "unpowered", 0, cause);
  if (!present) {
    // Pulled while booting: that boot never finishes, and its heartbeats, which had not resumed,
    // cannot stop again.
    bool was_booting = t.booting;
    t.booting = false;
    if (t.boot_timer) clock_.Cancel(t.boot_timer);
    t.boot_timer = 0;
    for (ComponentId g : topo_.GpusOfTray(tray_id)) Physics(g, "lost", 0, cause);
    if (!was_booting) HeartbeatsStopped(tray_id);
  } else {
    Boot(tray_id);  // a reinserted tray boots before its node agent beats again
  }
  TouchTray(tray_id);
  for (ComponentId g : topo_.GpusOfTray(tray_id)) UpdateThermal(g);
  UpdateDomainHealth(topo_.RackOf(tray_id));
  if (JobId job = seat_[slot(tray_id)].job; job != kNoJob) RefreshJob(job);
}

// The node boots for the model's boot time; then its GPUs come back cold and reset and it beats again.
void SimBackend::Boot(ComponentId tray_id) {
  Tray& t = tray_[slot(tray_id)];
  t.booting = true;
  t.boot_timer = clock_.CallAfter(topo_.model().node_boot_time, [this, tray_id] {
    Tray& tr = tray_[slot(tray_id)];
    tr.boot_timer = 0;
    if (!tr.present || !tr.booting) return;
    tr.booting = false;
    TouchTray(tray_id);
    for (ComponentId g : topo_.GpusOfTray(tray_id)) {
      gpu(g).shutdown = false;
      gpu(g).throttling = false;
      Physics(g, "booted", 0, kNoFault);
      UpdateThermal(g);  // back to idle power (it drew nothing while out and booting)
    }
    HeartbeatsResumed(tray_id);
    PlaceQueuedJobs();
  });
}

Status SimBackend::RebootNode(ComponentId tray_id) {
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  Tray& t = tray_[slot(tray_id)];
  if (!t.present) return Status::Unavailable(topo_.at(tray_id).name + ": tray is not present");
  if (t.booting) return Status::Ok();
  Physics(tray_id, "rebooted", 0, kNoFault);
  HeartbeatsStopped(tray_id);
  Boot(tray_id);
  TouchTray(tray_id);
  if (JobId job = seat_[slot(tray_id)].job; job != kNoJob) RefreshJob(job);
  return Status::Ok();
}

Status SimBackend::SetGpuFailed(ComponentId gpu_id, bool failed, int xid, FaultId cause) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  Gpu& g = gpu(gpu_id);
  if (g.failed == failed) return Status::Ok();
  g.failed = failed;
  g.fail_cause = failed ? cause : kNoFault;
  Physics(gpu_id, failed ? "failed" : "repaired", xid, cause);
  if (failed && tray_of(gpu_id).present) {
    XidLine x{topo_.PciOf(gpu_id), xid, std::nullopt, "", DefaultXidMessage(xid)};
    Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
         clock_.Now() + opt_.log_delay);
  }
  UpdateThermal(gpu_id);
  UpdateDomainHealth(topo_.RackOf(gpu_id));
  if (JobId job = JobOfGpu(gpu_id); job != kNoJob) RefreshJob(job);
  if (!failed) PlaceQueuedJobs();
  return Status::Ok();
}

Status SimBackend::CrashProcesses(ComponentId gpu_id, FaultId cause) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  JobId id = JobOfGpu(gpu_id);
  if (id == kNoJob) return Status::Ok();  // nothing ran there
  Job& j = jobs_[id];
  if (j.state != JobState::kRunning && j.state != JobState::kHung) return Status::Ok();
  Physics(gpu_id, "process_crash", 0, cause);
  Advance(j);
  Duration lost = j.running_since_ckpt;
  j.steps = j.ckpt_steps;
  j.running_since_ckpt = {};
  j.until_ckpt = j.cfg.checkpoint_interval;
  StopTimers(j);
  SetJobState(j, JobState::kFailed, cause, "rank on " + topo_.at(gpu_id).name + " exited with an error", lost);
  ReleaseTrays(j);
  return Status::Ok();
}

// ---------------------------------------------------------------- healer verbs

Status SimBackend::Drain(ComponentId tray_id, const std::string&) {
  if (topo_.at(tray_id).kind == Kind::kSwitchTray) return TakeSwitchTrayOut(tray_id, true);
  if (topo_.at(tray_id).kind == Kind::kSpine || topo_.at(tray_id).kind == Kind::kSuperSpine)
    return SetSpine(tray_id, spine_failed_[SpineIndex(tray_id)], true, kNoFault);
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  tray_[slot(tray_id)].drained = true;
  TouchTray(tray_id);
  return Status::Ok();
}

Status SimBackend::Resume(ComponentId tray_id) {
  if (topo_.at(tray_id).kind == Kind::kSwitchTray) return TakeSwitchTrayOut(tray_id, false);
  if (topo_.at(tray_id).kind == Kind::kSpine || topo_.at(tray_id).kind == Kind::kSuperSpine)
    return SetSpine(tray_id, spine_failed_[SpineIndex(tray_id)], false, kNoFault);
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  tray_[slot(tray_id)].drained = false;
  TouchTray(tray_id);
  PlaceQueuedJobs();
  return Status::Ok();
}

Status SimBackend::ResetGpu(ComponentId gpu_id) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  if (!tray_of(gpu_id).present) return Status::Unavailable(topo_.at(gpu_id).name + ": tray is not present");
  clock_.CallAfter(topo_.model().gpu_reset_time, [this, gpu_id] {
    Gpu& g = gpu(gpu_id);
    if (!tray_of(gpu_id).present) return;
    // A reset brings a GPU back only once it has cooled below its slowdown temperature.
    if (g.shutdown && Temperature(gpu_id, clock_.Now()) < topo_.model().gpu_slowdown_c) {
      g.shutdown = false;
      g.throttling = false;
      Physics(gpu_id, "reset", 0, kNoFault);
      UpdateThermal(gpu_id);
    }
  });
  return Status::Ok();
}

Status SimBackend::RunDiagnostic(ComponentId tray_id) {
  if (topo_.at(tray_id).kind == Kind::kSwitchTray) return DiagnoseSwitchTray(tray_id);
  if (topo_.at(tray_id).kind == Kind::kSpine || topo_.at(tray_id).kind == Kind::kSuperSpine)
    return DiagnoseSpine(tray_id);
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  clock_.CallAfter(topo_.model().diagnostic_time, [this, tray_id] {
    const Tray& t = tray_[slot(tray_id)];
    std::string why;
    bool off_bus = false;
    if (!t.present || t.booting) why = "node unreachable";
    for (ComponentId g : topo_.GpusOfTray(tray_id)) {
      const Gpu& s = gpu(g);
      const std::string& n = topo_.at(g).name;
      if (!why.empty()) break;
      if (s.shutdown || s.failed) {
        why = n + " not on the bus";
        off_bus = true;
      } else if (s.nvlink_down)
        why = n + " has inactive NVLink ports";
      else if (s.cap_w < s.baseline_cap_w * 0.99)
        why = n + " below expected performance (power limited)";
    }
    if (why.empty() && DomainHealthOf(topo_.RackOf(tray_id)) == DomainHealth::kUnhealthy)
      why = "NVLink domain " + topo_.at(topo_.DomainOf(tray_id)).name + " UNHEALTHY: no NVLink partition";
    if (why.empty() && TrayFlow(tray_id) < 0.9)
      why = "thermal test failed: GPUs throttle under load (coolant flow low)";
    if (why.empty() && std::find(t.nic_up.begin(), t.nic_up.end(), false) != t.nic_up.end()) why = "a NIC link is down";
    Emit(DiagnosticResult{tray_id, why.empty(), why.empty() ? "all checks passed" : why, off_bus}, clock_.Now());
  });
  return Status::Ok();
}

// ---------------------------------------------------------------- heartbeats

void SimBackend::HeartbeatsStopped(ComponentId tray_id) {
  const Tray& t = tray_[slot(tray_id)];
  Time now = clock_.Now();
  Time next = NextSlot(t.hb_phase, opt_.heartbeat_period, now);
  Time last = next - opt_.heartbeat_period;
  Emit(HeartbeatChange{tray_id, false, last, opt_.heartbeat_period}, next);
}

void SimBackend::HeartbeatsResumed(ComponentId tray_id) {
  const Tray& t = tray_[slot(tray_id)];
  Time first = NextSlot(t.hb_phase, opt_.heartbeat_period, clock_.Now());
  Emit(HeartbeatChange{tray_id, true, first, opt_.heartbeat_period}, first);
}

// ---------------------------------------------------------------- inspection

double SimBackend::GpuTemperature(ComponentId gpu_id) const { return Temperature(gpu_id, clock_.Now()); }

bool SimBackend::GpuAlive(ComponentId gpu_id) const {
  const Tray& t = tray_[slot(topo_.TrayOf(gpu_id))];
  return t.present && !t.booting && !gpu(gpu_id).shutdown && !gpu(gpu_id).failed;
}

double SimBackend::GpuSpeed(ComponentId gpu_id) const {
  if (!GpuAlive(gpu_id)) return 0;
  const Gpu& g = gpu(gpu_id);
  double budget = g.cap_w;
  if (g.throttling) budget = std::min(budget, g.power_w);
  return SpeedAtPower(budget, topo_.model().gpu_tdp_w);
}

double SimBackend::JobSteps(JobId id) const {
  const Job& j = jobs_[id];
  double s = j.steps;
  if (j.state == JobState::kRunning && j.step_time_s > 0) s += (clock_.Now() - j.last_update).Seconds() / j.step_time_s;
  return s;
}

}  // namespace rackchaos::cluster
