// NVLink switch trays' temperature: the first-order model of cluster/thermal.h, solved in closed form
// between events, as for GPUs.
//
// A switch tray sits on its rack's liquid loop like a compute tray (RACK-FACTS: NVSwitch is liquid
// cooled): its conductance is residual + full x its own valve's opening x the CDU's flow, and it draws
// the catalogue's switch_tray.power_w while its rack has power. A change of flow or power retargets its
// trajectory and schedules the next threshold crossing. From the slowdown temperature until it cools
// below it, it throttles: the GPUs' ports wired to it carry switch_tray.throttle_bandwidth of their
// bandwidth ([guess]: NVIDIA publishes no NVSwitch throttle figure), so its domain's NVLink bandwidth
// drops by (1 - that) / S, a reduction of its share, not a loss; the domain stays HEALTHY in NMX's
// terms, but its jobs' TP, EP and in-domain DP/PP groups slow down (sim_domains.cpp, DomainBandwidth).
// At the shutdown temperature it is lost as if pulled (its ports go down on every GPU, domain health
// as for a failed switch tray), stops drawing power and cools. It comes back once it has cooled to its
// slowdown temperature with a flow that would hold it below slowdown at full power.
//
// Telemetry: its management controller reports its temperature (Metric::kSwitchTemperature) at the
// telemetry period, with its own poll phase, only while it is changing or abnormal (as a compute tray's
// DCGM samples, sim_thermal.cpp); a dark or shut-down switch tray reports nothing.
//
// Cost: nothing until a rack's flow or power or a switch tray's valve changes; then that rack's switch
// trays, O(1) each, and one poll per switch tray per telemetry period while it is away from its steady
// state at full flow. A model without a switch_tray section (power 0) is not modelled at all.
#include <algorithm>
#include <cmath>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

namespace {
constexpr double kEpsC = 1e-6;  // a crossing is scheduled a microsecond past its level
// The switch tray's slot in switch_heat_ (rack-major, as the Rack bits).
size_t HeatSlot(const Topology& t, ComponentId sw) {
  return static_cast<size_t>(t.at(sw).rack * t.model().switch_trays + t.at(sw).index);
}
}  // namespace

Thermal::SwitchHeat& Thermal::HeatOf(ComponentId sw) {
  const RackModel& m = topo_.model();
  if (switch_heat_.empty()) {  // every switch tray at its steady state at full flow since time zero
    const double g = m.switch_residual_conductance_w_per_k + m.switch_conductance_w_per_k;
    const double steady = m.inlet_c + m.switch_power_w / g;
    switch_heat_.assign(topo_.racks().size() * static_cast<size_t>(m.switch_trays),
                        SwitchHeat{ThermalState{steady, Time{}, steady, m.switch_heat_capacity_j_per_k / g}});
  }
  return switch_heat_[HeatSlot(topo_, sw)];
}

double Thermal::SwitchConductance(ComponentId sw, double valve) const {
  const RackModel& m = topo_.model();
  return m.switch_residual_conductance_w_per_k + m.switch_conductance_w_per_k * valve * cdu_[static_cast<size_t>(topo_.at(sw).rack)].flow;
}

double Thermal::SwitchValve(ComponentId sw) const {
  return switch_heat_.empty() ? 1 : switch_heat_[HeatSlot(topo_, sw)].valve;
}

double Thermal::SwitchTemperature(ComponentId sw) const {
  const RackModel& m = topo_.model();
  if (switch_heat_.empty()) return m.inlet_c + m.switch_power_w / SwitchConductance(sw, 1);  // never changed
  return TemperatureAt(switch_heat_[HeatSlot(topo_, sw)].th, clock_.Now());
}

// Every switch tray of the rack after its CDU's flow or its power changed.
void Thermal::UpdateRackSwitchThermal(ComponentId rack, FaultId cause) {
  if (topo_.model().switch_power_w <= 0) return;
  for (ComponentId c : topo_.ChildrenOf(rack))
    if (topo_.at(c).kind == Kind::kSwitchTray) UpdateSwitchThermal(c, cause);
}

void Thermal::ApplySwitchValve(ComponentId sw, const Holds<ComponentId>::State& s, FaultId cause) {
  if (topo_.model().switch_power_w <= 0) return;
  HeatOf(sw).valve = s.value;
  const FaultId why = s.held ? s.cause : cause;
  ctx_.Physics(sw, "valve_opening", s.value, why);
  UpdateSwitchThermal(sw, why);
}

// Restarts the trajectory for the current power and flow and schedules its next crossing: slowdown
// (heating), shutdown (heating while slow), slowdown from above (cooling: recovered, or back in service
// after a shutdown when the flow would now hold it below slowdown).
void Thermal::UpdateSwitchThermal(ComponentId sw, FaultId cause) {
  const RackModel& m = topo_.model();
  SwitchHeat& h = HeatOf(sw);
  const double g = SwitchConductance(sw, h.valve);
  const double power = nodes_.RackPowered(static_cast<size_t>(topo_.at(sw).rack)) && !h.hot ? m.switch_power_w : 0;
  h.th = Retarget(h.th, clock_.Now(), power, g, m.switch_heat_capacity_j_per_k, m.inlet_c);
  if (cause != kNoFault && g < m.switch_residual_conductance_w_per_k + m.switch_conductance_w_per_k) h.cause = cause;
  if (h.timer) clock_.Cancel(h.timer);
  h.timer = 0;
  std::optional<Time> next;
  if (h.hot) {
    if (m.inlet_c + m.switch_power_w / g < m.switch_slowdown_c)
      next = TemperatureAt(h.th, clock_.Now()) <= m.switch_slowdown_c ? clock_.Now()
                                                                      : TimeToReach(h.th, m.switch_slowdown_c);
  } else {
    next = TimeToReach(h.th, h.slow ? m.switch_shutdown_c : m.switch_slowdown_c);
    if (!next && h.slow) next = TimeToReach(h.th, m.switch_slowdown_c);  // cooling back below slowdown
  }
  if (next) h.timer = clock_.CallAt(*next, [this, sw] { ctx_.SettleOwed(); OnSwitchCrossing(sw); });
  WatchSwitchTelemetry(sw);
}

void Thermal::OnSwitchCrossing(ComponentId sw) {
  const RackModel& m = topo_.model();
  SwitchHeat& h = HeatOf(sw);
  h.timer = 0;
  const double t = TemperatureAt(h.th, clock_.Now());
  if (h.hot) {
    h.hot = h.slow = false;
    ctx_.Physics(sw, "thermal_recovered", t, h.cause);
    fabric_.SwitchBackInService(sw, h.cause);  // unthrottled, and no longer lost
  } else if (!h.slow && t >= m.switch_slowdown_c - kEpsC) {
    h.slow = true;
    ctx_.Physics(sw, "thermal_slowdown", t, h.cause);
    fabric_.SetSwitchSlow(sw, true);
  } else if (h.slow && t >= m.switch_shutdown_c - kEpsC) {
    h.hot = true;
    ctx_.Physics(sw, "thermal_shutdown", t, h.cause);
    fabric_.SetSwitchHot(sw, true, h.cause);  // lost: its throttle no longer counts (DomainSwitchesThrottled)
  } else if (h.slow && t <= m.switch_slowdown_c + kEpsC) {
    h.slow = false;
    ctx_.Physics(sw, "thermal_recovered", t, h.cause);
    fabric_.SetSwitchSlow(sw, false);
  }
  UpdateSwitchThermal(sw, kNoFault);
}

FaultId Thermal::SwitchHeatFault(size_t rack, size_t position) const {
  if (switch_heat_.empty()) return kNoFault;
  return switch_heat_[rack * static_cast<size_t>(topo_.model().switch_trays) + position].cause;
}

FaultId Thermal::SwitchHeatCause(ComponentId sw) const {
  if (switch_heat_.empty()) return kNoFault;
  const SwitchHeat& h = switch_heat_[HeatSlot(topo_, sw)];
  return h.slow || h.hot ? h.cause : kNoFault;
}

// Polls the switch tray's temperature at its next telemetry slot, unless a poll is already due.
void Thermal::WatchSwitchTelemetry(ComponentId sw) {
  SwitchHeat& h = HeatOf(sw);
  if (h.poll) return;
  h.poll = clock_.CallAt(SimContext::NextSlot(ctx_.PartPollPhase(sw), opt_.telemetry_period, clock_.Now()),
                         [this, sw] { ctx_.SettleOwed(); OnSwitchTelemetryTick(sw); });
}

void Thermal::OnSwitchTelemetryTick(ComponentId sw) {
  const RackModel& m = topo_.model();
  SwitchHeat& h = HeatOf(sw);
  h.poll = 0;
  const Time now = clock_.Now();
  const double t = TemperatureAt(h.th, now);
  if (nodes_.RackPowered(static_cast<size_t>(topo_.at(sw).rack)) && !h.hot)  // a dark or shut-down switch tray reports nothing
    ctx_.Emit(TelemetrySample{sw, Metric::kSwitchTemperature, std::round(t * 10) / 10}, now);
  const double full = m.switch_residual_conductance_w_per_k + m.switch_conductance_w_per_k;
  if (h.slow || h.hot || SwitchConductance(sw, h.valve) < full || std::fabs(t - h.th.steady_c) > 0.5)
    WatchSwitchTelemetry(sw);
}

}  // namespace rackchaos::cluster
