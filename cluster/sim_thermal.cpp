// Thermal behaviour of the simulated GPUs and the telemetry that reveals it.
#include <algorithm>
#include <cmath>

#include "cluster/kernel_log.h"
#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

double SimBackend::GpuDemand(ComponentId gpu_id) const {
  if (!GpuAlive(gpu_id)) return 0;
  const Gpu& g = gpu(gpu_id);
  const RackModel& m = topo_.model();
  JobId job = JobOfGpu(gpu_id);
  bool busy = job != kNoJob && jobs_[job].state == JobState::kRunning;
  return std::min(busy ? m.gpu_tdp_w : m.gpu_idle_w, g.cap_w);
}

double SimBackend::Decay(Time since, Time now) const {
  return now <= since ? 1.0 : std::exp(-(now - since).Seconds() / full_tau_s_);
}

double SimBackend::Temperature(ComponentId gpu_id, Time now) const {
  const Gpu& g = gpu(gpu_id);
  if (!g.quiet) return TemperatureAt(g.thermal, now);
  const size_t k = slot(topo_.TrayOf(gpu_id));
  SettleCarry(k);
  const Seat& t = seat_[k];
  JobId job = JobOfGpu(gpu_id);
  double env = job != kNoJob ? TemperatureAt(jobs_[job].env, now) : idle_steady_c_;
  return env + t.carry * Decay(t.carry_at, now) + g.off * Decay(g.off_at, now);
}

double SimBackend::PowerOf(ComponentId gpu_id) const {
  return gpu(gpu_id).quiet ? GpuDemand(gpu_id) : gpu(gpu_id).power_w;
}

void SimBackend::JobPowerChanged(Job& job) {
  const RackModel& m = topo_.model();
  double power = job.state == JobState::kRunning ? m.gpu_tdp_w : m.gpu_idle_w;
  job.env = Retarget(job.env, clock_.Now(), power, full_conductance_, m.gpu_heat_capacity_j_per_k, m.inlet_c);
  std::vector<ComponentId> loud;
  for (ComponentId g : loud_gpus_)
    if (JobOfGpu(g) == job.id) loud.push_back(g);
  for (ComponentId g : loud) UpdateThermal(g);
}

// The job leaves its trays: what its reference trajectory holds above idle stays on their quiet GPUs
// and decays from here (per tray, or per GPU on a partly used tray), and the trays are free again. The
// caller re-solves the GPUs that are not quiet. One pass over the job's seats (a restart of a big job).
void SimBackend::ThermalRelease(Job& job) {
  Time now = clock_.Now();
  double residual = TemperatureAt(job.env, now) - idle_steady_c_;
  const int per_tray = topo_.model().gpus_per_tray;
  // Trays placed together were last settled together: one exp serves them all, with the same result.
  Time memo_at = now;
  double memo = 1;
  auto decay = [&](Time since) {
    if (since != memo_at) memo = Decay(memo_at = since, now);
    return memo;
  };
  for (ComponentId tray : job.trays) {
    const size_t k = slot(tray);
    SettleCarry(k);
    Seat& t = seat_[k];
    if (t.job_gpus == per_tray) {
      t.carry = t.carry * decay(t.carry_at) + residual;
      t.carry_at = now;
    } else {
      for (ComponentId g : topo_.GpusOfTray(tray)) {
        Gpu& s = gpu(g);
        if (!s.quiet || topo_.at(g).index >= t.job_gpus) continue;
        s.off = s.off * Decay(s.off_at, now) + residual;
        s.off_at = now;
      }
    }
    SeatJob(k, kNoJob, 0);
  }
}

// Re-solves one GPU's trajectory after anything that changes its power or cooling, and schedules the
// next threshold crossing (slowdown, shutdown) if the new trajectory reaches one. A GPU that cannot
// reach one becomes quiet (see Gpu::quiet) and needs no trajectory of its own.
void SimBackend::UpdateThermal(ComponentId gpu_id) {
  Gpu& g = gpu(gpu_id);
  const RackModel& m = topo_.model();
  const Tray& t = tray_[slot(topo_.TrayOf(gpu_id))];
  Time now = clock_.Now();
  if (g.thermal_timer) clock_.Cancel(g.thermal_timer);
  g.thermal_timer = 0;
  const double flow = TrayFlow(topo_.TrayOf(gpu_id));
  double conductance = m.residual_conductance_w_per_k + m.conductance_w_per_k * flow;
  double temp = Temperature(gpu_id, now);
  double demand = GpuDemand(gpu_id);
  g.thermal_cause = t.valve < 1 ? t.valve_cause : rack_of(gpu_id).cdu_cause;
  if (quiet_possible_ && flow >= 1 && !g.throttling && !g.shutdown && GpuAlive(gpu_id) &&
      g.cap_w >= m.gpu_tdp_w && temp < m.gpu_slowdown_c) {
    if (!g.quiet) {
      g.quiet = true;
      g.off = 0;
      g.off_at = now;
      g.off = temp - Temperature(gpu_id, now);  // what the job's trajectory and the tray's carry do not explain
      loud_gpus_.erase(gpu_id);
    }
    g.power_w = demand;
    Touch(gpu_id);
    return;
  }
  if (g.quiet) {
    g.quiet = false;
    g.thermal = ThermalState{temp, now, temp, full_tau_s_};
    loud_gpus_.insert(gpu_id);
  }
  double hold = conductance * (m.gpu_slowdown_c - m.inlet_c);  // power that keeps T at slowdown
  bool was_throttling = g.throttling;
  if (g.throttling && demand <= hold) g.throttling = false;
  if (!g.throttling && demand > hold && temp >= m.gpu_slowdown_c - 1e-9) g.throttling = true;
  double power = g.throttling ? std::max(hold, std::min(m.gpu_min_power_w, demand)) : demand;
  g.power_w = power;
  g.thermal = Retarget(g.thermal, now, power, conductance, m.gpu_heat_capacity_j_per_k, m.inlet_c);
  // Holding at slowdown: pin the trajectory there. A GPU still above it (it was heating at its
  // lowest power when the flow came back) cools toward it instead of jumping down.
  if (g.throttling && power <= hold + 1e-9 && temp <= m.gpu_slowdown_c)
    g.thermal.t0_c = g.thermal.steady_c = temp;
  if (was_throttling != g.throttling) {
    Physics(gpu_id, g.throttling ? "thermal_slowdown" : "thermal_recovered", temp, g.thermal_cause);
    WatchTelemetry(topo_.TrayOf(gpu_id));
  }
  std::optional<Time> next;
  if (!g.throttling && !g.shutdown) next = TimeToReach(g.thermal, m.gpu_slowdown_c);
  // TimeToReach never returns the level a trajectory starts on, so a GPU retargeted while already at
  // its shutdown temperature (the job hung at the instant its neighbour shut down) shuts down now.
  else if (g.throttling)
    next = temp >= m.gpu_shutdown_c - 1e-6 ? std::optional<Time>(now) : TimeToReach(g.thermal, m.gpu_shutdown_c);
  if (next) g.thermal_timer = clock_.CallAt(*next, [this, gpu_id] { OnThermalCrossing(gpu_id); });
  Touch(gpu_id);
  if (JobId job = JobOfGpu(gpu_id); job != kNoJob && was_throttling != g.throttling) RefreshJob(job);
}

void SimBackend::OnThermalCrossing(ComponentId gpu_id) {
  Gpu& g = gpu(gpu_id);
  g.thermal_timer = 0;
  const RackModel& m = topo_.model();
  double temp = TemperatureAt(g.thermal, clock_.Now());
  if (!g.throttling) {
    if (g.thermal.steady_c <= m.gpu_slowdown_c) {  // the trajectory turned before it got there
      UpdateThermal(gpu_id);
      return;
    }
    g.throttling = true;
    Physics(gpu_id, "thermal_slowdown", temp, g.thermal_cause);
    WatchTelemetry(topo_.TrayOf(gpu_id));
    UpdateThermal(gpu_id);
    if (JobId job = JobOfGpu(gpu_id); job != kNoJob) RefreshJob(job);
  } else if (temp >= m.gpu_shutdown_c - 1e-6) {
    g.shutdown = true;
    g.throttling = false;
    Physics(gpu_id, "thermal_shutdown", temp, g.thermal_cause);
    // The driver loses the GPU: Xid 79, "GPU has fallen off the bus" (RACK-FACTS).
    XidLine x{topo_.PciOf(gpu_id), 79, std::nullopt, "", DefaultXidMessage(79)};
    Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
         clock_.Now() + opt_.log_delay);
    UpdateThermal(gpu_id);
    if (JobId job = JobOfGpu(gpu_id); job != kNoJob) RefreshJob(job);
  }
}

// `temps`: each GPU's temperature now, in GpusOfTray order (the tick's samples, computed once).
bool SimBackend::ThermallyActive(ComponentId tray_id, const std::vector<double>& temps) const {
  if (TrayFlow(tray_id) < 1) return true;
  size_t i = 0;
  for (ComponentId g : topo_.GpusOfTray(tray_id)) {
    const Gpu& s = gpu(g);
    if (s.throttling || s.shutdown) return true;
    double steady = s.quiet ? topo_.model().inlet_c + GpuDemand(g) / full_conductance_ : s.thermal.steady_c;
    if (std::fabs(temps[i++] - steady) > 0.5) return true;
  }
  return false;
}

// Telemetry is polled per tray while something there is changing or abnormal; a quiet tray costs nothing.
void SimBackend::WatchTelemetry(ComponentId tray_id) {
  Tray& t = tray_[slot(tray_id)];
  if (t.telemetry_timer) return;
  Time at = NextSlot(t.poll_phase, opt_.telemetry_period, clock_.Now());
  t.telemetry_timer = clock_.CallAt(at, [this, tray_id] { OnTelemetryTick(tray_id); });
}

void SimBackend::OnTelemetryTick(ComponentId tray_id) {
  Tray& t = tray_[slot(tray_id)];
  t.telemetry_timer = 0;
  if (!t.present || t.booting) return;  // an unreachable node exports nothing
  Time now = clock_.Now();
  const RackModel& m = topo_.model();
  std::vector<TelemetrySample> samples;
  samples.reserve(1 + 3 * static_cast<size_t>(m.gpus_per_tray));
  samples.push_back({topo_.ValveOfTray(tray_id), Metric::kCoolantFlow, TrayFlow(tray_id) * m.tray_flow_l_per_min});
  std::vector<double> temps;
  temps.reserve(static_cast<size_t>(m.gpus_per_tray));
  for (ComponentId g : topo_.GpusOfTray(tray_id)) {
    const Gpu& s = gpu(g);
    temps.push_back(Temperature(g, now));
    if (s.shutdown) continue;  // off the bus: no samples
    samples.push_back({g, Metric::kGpuTemperature, std::round(temps.back() * 10) / 10});
    samples.push_back({g, Metric::kThermalThrottle, s.throttling ? 1.0 : 0.0});
    samples.push_back({g, Metric::kGpuPower, std::round(PowerOf(g))});
  }
  EmitSamples(std::move(samples), now);
  if (ThermallyActive(tray_id, temps)) WatchTelemetry(tray_id);
}

}  // namespace rackchaos::cluster
