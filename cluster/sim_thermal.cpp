// GPU temperatures in the simulated cluster (cluster/sim_thermal.h) and the telemetry that reveals them.
#include "cluster/sim_thermal.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "cluster/kernel_log.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

Thermal::Thermal(SimContext& ctx, Scheduler& jobs, Nodes& nodes, Fabric& fabric)
    : ctx_(ctx),
      topo_(ctx.topo()),
      clock_(ctx.clock()),
      opt_(ctx.opt()),
      jobs_(jobs),
      seats_(jobs.seats()),
      job_list_(jobs.jobs()),
      nodes_(nodes),
      fabric_(fabric) {
  const RackModel& m = topo_.model();
  full_conductance_ = m.conductance_w_per_k + m.residual_conductance_w_per_k;
  full_tau_s_ = m.gpu_heat_capacity_j_per_k / full_conductance_;
  idle_steady_c_ = m.inlet_c + m.gpu_idle_w / full_conductance_;
  quiet_possible_ = m.inlet_c + m.gpu_tdp_w / full_conductance_ < m.gpu_slowdown_c - 1e-6;
  uninteresting_below_c_ = std::min(opt_.telemetry_interest_c, m.gpu_slowdown_c) - 0.1;
  gpu_.resize(topo_.gpus().size());
  for (GpuHeat& g : gpu_) {
    g.cap_w = g.baseline_cap_w = m.gpu_tdp_w;
    g.power_w = m.gpu_idle_w;
    g.thermal.t0_c = g.thermal.steady_c = idle_steady_c_;
    g.thermal.tau_s = full_tau_s_;
    g.quiet = quiet_possible_;
  }
  if (!quiet_possible_) loud_gpus_.insert(topo_.gpus().begin(), topo_.gpus().end());
  tray_.resize(topo_.trays().size());
  for (size_t k = 0; k < tray_.size(); ++k) tray_[k].rack = static_cast<uint32_t>(topo_.at(topo_.trays()[k]).rack);
  carry_.resize(topo_.trays().size());
  const size_t per = static_cast<size_t>(m.gpus_per_tray);
  slots_by_tray_ = topo_.gpus().size() == topo_.trays().size() * per;
  for (size_t k = 0; slots_by_tray_ && k < topo_.trays().size(); ++k) {
    const auto gpus = topo_.GpusOfTray(topo_.trays()[k]);
    for (size_t i = 0; slots_by_tray_ && i < gpus.size(); ++i) slots_by_tray_ = topo_.GpuSlot(gpus[i]) == k * per + i;
  }
  cdu_.resize(topo_.racks().size());
}

double Thermal::GpuDemand(ComponentId gpu_id) const {
  if (!nodes_.GpuAlive(gpu_id)) return 0;
  const GpuHeat& g = heat(gpu_id);
  const RackModel& m = topo_.model();
  JobId job = seats_.JobOfGpu(gpu_id);
  bool busy = job != kNoJob && job_list_[job].state == JobState::kRunning;
  return std::min(busy ? m.gpu_tdp_w : m.gpu_idle_w, g.cap_w);
}

bool Thermal::PowerCapped(ComponentId gpu_id) const {
  if (!nodes_.GpuAlive(gpu_id)) return false;
  JobId job = seats_.JobOfGpu(gpu_id);
  return job != kNoJob && job_list_[job].state == JobState::kRunning && heat(gpu_id).cap_w < topo_.model().gpu_tdp_w;
}

double Thermal::Decay(Time since, Time now) const {
  return now <= since ? 1.0 : std::exp(-(now - since).Seconds() / full_tau_s_);
}

double Thermal::Temperature(ComponentId gpu_id, Time now) const {
  const GpuHeat& g = heat(gpu_id);
  if (!g.quiet) return TemperatureAt(g.thermal, now);
  return QuietTemperature(g, topo_.TraySlot(topo_.TrayOf(gpu_id)), seats_.JobOfGpu(gpu_id), now);
}

double Thermal::QuietTemperature(const GpuHeat& g, size_t k, JobId job, Time now, double* ceiling) const {
  SettleCarry(k);
  const TrayCarry& t = carry_[k];
  double env = idle_steady_c_, env_steady = idle_steady_c_;
  if (job != kNoJob) {
    const ThermalState& e = job_heat_[job].env;
    EnvMemo& m = env_memo_;
    auto bits = [](double v) { return std::bit_cast<uint64_t>(v); };
    if (m.now != now || m.env.since != e.since || bits(m.env.t0_c) != bits(e.t0_c) ||
        bits(m.env.steady_c) != bits(e.steady_c) || bits(m.env.tau_s) != bits(e.tau_s))
      m = EnvMemo{e, now, TemperatureAt(e, now)};
    env = m.value;
    env_steady = e.steady_c;
  }
  // A term with nothing to decay is 0 whatever its exp: skipped (most quiet GPUs have no offset and most
  // trays no carry), the sum is the same double.
  const double carry = t.carry == 0 ? 0.0 : t.carry * Decay(t.carry_at, now);
  const double off = g.off == 0 ? 0.0 : g.off * Decay(g.off_at, now);
  if (ceiling) *ceiling = std::max(env, env_steady) + std::max(carry, 0.0) + std::max(off, 0.0);
  return env + carry + off;
}

double Thermal::PowerOf(ComponentId gpu_id) const { return heat(gpu_id).quiet ? GpuDemand(gpu_id) : heat(gpu_id).power_w; }

double Thermal::GpuSpeed(ComponentId gpu_id) const {
  if (!nodes_.GpuAlive(gpu_id)) return 0;
  const GpuHeat& g = heat(gpu_id);
  double budget = g.cap_w;
  if (g.throttling) budget = std::min(budget, g.power_w);
  return SpeedAtPower(budget, topo_.model().gpu_tdp_w);
}

// A GPU that cannot reach a threshold becomes quiet (see sim_thermal.h) and needs no trajectory of its own.
void Thermal::UpdateThermal(ComponentId gpu_id) {
  GpuHeat& g = heat(gpu_id);
  const RackModel& m = topo_.model();
  const TrayCooling& t = tray_[topo_.TraySlot(topo_.TrayOf(gpu_id))];
  Time now = clock_.Now();
  if (g.thermal_timer) clock_.Cancel(g.thermal_timer);
  g.thermal_timer = 0;
  const double flow = TrayFlow(topo_.TrayOf(gpu_id));
  double conductance = m.residual_conductance_w_per_k + m.conductance_w_per_k * flow;
  double temp = Temperature(gpu_id, now);
  double demand = GpuDemand(gpu_id);
  const bool shutdown = nodes_.GpuShutdown(gpu_id);
  g.thermal_cause = t.valve < 1 ? t.valve_cause : cdu_of(gpu_id).cause;
  if (quiet_possible_ && flow >= 1 && !g.throttling && !shutdown && nodes_.GpuAlive(gpu_id) &&
      g.cap_w >= m.gpu_tdp_w && temp < m.gpu_slowdown_c) {
    if (!g.quiet) {
      g.quiet = true;
      g.off = 0;
      g.off_at = now;
      g.off = temp - Temperature(gpu_id, now);  // what the job's trajectory and the tray's carry do not explain
      loud_gpus_.erase(gpu_id);
    }
    g.power_w = demand;
    jobs_.NoteGpu(gpu_id);
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
    ctx_.Physics(gpu_id, g.throttling ? "thermal_slowdown" : "thermal_recovered", temp, g.thermal_cause);
    WatchTelemetry(topo_.TrayOf(gpu_id));
  }
  // A cap that holds a running GPU back shows in its clocks and clock event reasons: polled while it lasts.
  if (PowerCapped(gpu_id)) WatchTelemetry(topo_.TrayOf(gpu_id));
  std::optional<Time> next;
  if (!g.throttling && !shutdown) next = TimeToReach(g.thermal, m.gpu_slowdown_c);
  // TimeToReach never returns the level a trajectory starts on, so a GPU retargeted while already at
  // its shutdown temperature (the job hung at the instant its neighbour shut down) shuts down now.
  else if (g.throttling)
    next = temp >= m.gpu_shutdown_c - 1e-6 ? std::optional<Time>(now) : TimeToReach(g.thermal, m.gpu_shutdown_c);
  if (next) g.thermal_timer = clock_.CallAt(*next, [this, gpu_id] { ctx_.SettleOwed(); OnThermalCrossing(gpu_id); });
  jobs_.NoteGpu(gpu_id);
  if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob && was_throttling != g.throttling) jobs_.RefreshJob(job);
}

void Thermal::OnThermalCrossing(ComponentId gpu_id) {
  GpuHeat& g = heat(gpu_id);
  g.thermal_timer = 0;
  const RackModel& m = topo_.model();
  double temp = TemperatureAt(g.thermal, clock_.Now());
  if (!g.throttling) {
    if (g.thermal.steady_c <= m.gpu_slowdown_c) {  // the trajectory turned before it got there
      UpdateThermal(gpu_id);
      return;
    }
    g.throttling = true;
    ctx_.Physics(gpu_id, "thermal_slowdown", temp, g.thermal_cause);
    WatchTelemetry(topo_.TrayOf(gpu_id));
    UpdateThermal(gpu_id);
    if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob) jobs_.RefreshJob(job);
  } else if (temp >= m.gpu_shutdown_c - 1e-6) {
    nodes_.SetShutdown(gpu_id);
    g.throttling = false;
    ctx_.Physics(gpu_id, "thermal_shutdown", temp, g.thermal_cause);
    // The driver loses the GPU: Xid 79, "GPU has fallen off the bus" (RACK-FACTS).
    XidLine x{topo_.PciOf(gpu_id), 79, std::nullopt, "", DefaultXidMessage(79)};
    ctx_.Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
              clock_.Now() + opt_.log_delay);
    UpdateThermal(gpu_id);
    if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob) jobs_.RefreshJob(job);
  }
}


// Telemetry is polled per tray while something there is changing or abnormal; a quiet tray costs nothing.
void Thermal::WatchTelemetry(ComponentId tray_id) { WatchTelemetryAtSlot(topo_.TraySlot(tray_id)); }

void Thermal::WatchTelemetryAtSlot(size_t k) {
  TrayCooling& t = tray_[k];
  if (t.telemetry_timer) return;
  Time at = SimContext::NextSlot(nodes_.PollPhaseAtSlot(k), opt_.telemetry_period, clock_.Now());
  // The poll carries the slot, not the id: a fleet's first polls visit every tray, and each lookup of a
  // slot by id was a cache miss (a tenth of the poll's time).
  t.telemetry_timer = clock_.CallAt(at, [this, k] { ctx_.SettleOwed(); OnTelemetryTick(k); });
}

// One poll of the tray's exporter: the coolant flow, and per GPU on the bus its temperature, thermal
// slowdown, power, SM clock and power-cap clock event. Polled again while the tray is thermally active:
// its flow below nominal, or a GPU throttling, shut down, held by its power cap, or more than 0.5 C from
// its steady state. Each GPU's state is read once for all of this (a fleet's first polls are millions of
// GPU polls): the values are those of GpuAlive, GpuDemand, PowerCapped, PowerOf, GpuSpeed and Temperature.
void Thermal::OnTelemetryTick(size_t k) {
  TrayCooling& t = tray_[k];
  t.telemetry_timer = 0;
  if (!nodes_.TrayPresentAtSlot(k) || nodes_.TrayBootingAtSlot(k)) return;  // an unreachable node exports nothing
  Time now = clock_.Now();
  const RackModel& m = topo_.model();
  const double flow = TrayFlowAtSlot(k);
  std::vector<TelemetrySample> samples;
  samples.reserve(1 + 5 * static_cast<size_t>(m.gpus_per_tray));
  samples.push_back({topo_.ValveAtSlot(k), Metric::kCoolantFlow, flow * m.tray_flow_l_per_min});
  bool active = flow < 1;
  const JobId tray_job = seats_.job_at(k);
  const int job_gpus = seats_.gpus_at(k);
  const bool tray_busy = tray_job != kNoJob && job_list_[tray_job].state == JobState::kRunning;
  int i = 0;
  for (ComponentId g : topo_.GpusAtSlot(k)) {
    const size_t slot = slots_by_tray_ ? k * static_cast<size_t>(m.gpus_per_tray) + static_cast<size_t>(i) : topo_.GpuSlot(g);
    const GpuHeat& s = gpu_[slot];
    // The tray is present and booted (above): GpuAlive is the GPU's own state.
    const bool shutdown = nodes_.GpuShutdownAt(slot), alive = !nodes_.GpuOffBusAt(slot);
    // GpusOfTray is in index order: the i-th GPU is the job's while i < its GPUs on the tray (JobOfGpu).
    const JobId job = i++ < job_gpus ? tray_job : kNoJob;
    const bool busy = job != kNoJob && tray_busy;
    const double demand = alive ? std::min(busy ? m.gpu_tdp_w : m.gpu_idle_w, s.cap_w) : 0;  // GpuDemand
    const bool capped = alive && busy && s.cap_w < m.gpu_tdp_w;                               // PowerCapped
    double ceiling = 0;  // the highest its temperature can reach before something changes
    const double temp = s.quiet ? QuietTemperature(s, k, job, now, &ceiling) : TemperatureAt(s.thermal, now);
    if (!active) {
      const double steady = s.quiet ? m.inlet_c + demand / full_conductance_ : s.thermal.steady_c;
      // A loud GPU approaches its steady state along one exponential: its now and its end bound the path.
      if (!s.quiet) ceiling = std::max(temp, steady);
      // Moving (more than 0.5 C from its steady state) along a path a reader may act on; below the line
      // all the way (uninteresting_below_c_), nobody watches it.
      active = s.throttling || shutdown || capped ||
               (std::fabs(temp - steady) > 0.5 && ceiling >= uninteresting_below_c_);
    }
    if (shutdown) continue;  // off the bus: no samples
    const double speed = alive ? SpeedAtPower(s.throttling ? std::min(s.cap_w, s.power_w) : s.cap_w, m.gpu_tdp_w) : 0;
    samples.push_back({g, Metric::kGpuTemperature, std::round(temp * 10) / 10});
    samples.push_back({g, Metric::kThermalThrottle, s.throttling ? 1.0 : 0.0});
    samples.push_back({g, Metric::kGpuPower, std::round(s.quiet ? demand : s.power_w)});  // PowerOf
    // The SM clock follows the speed model (SpeedAtPower), as on the rig; to 0.1% as a clock in MHz reads.
    samples.push_back({g, Metric::kGpuClockFraction, std::round(speed * 1000) / 1000});
    samples.push_back({g, Metric::kPowerCapped, capped ? 1.0 : 0.0});
  }
  ctx_.EmitSamples(std::move(samples), now);
  if (active) WatchTelemetryAtSlot(k);
}

}  // namespace rackchaos::cluster
