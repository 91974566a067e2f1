// What sets a GPU's heat in the simulated cluster (cluster/sim_thermal.h): its power cap, its tray's
// valve, its rack's CDU and the CDU's pumps, and a leak in the tray's coolant zone.
//
// - Power cap and valve opening are held states (cluster/holds.h): each fault places a hold, the worst
//   value wins, the last release gives back the site's own setting. A switch tray stands for its own
//   valve (sim_switch_thermal.cpp).
// - The CDU's pumps move the coolant of every tray of the rack: each tray's flow is its valve opening
//   times the CDU's flow, so a CDU failure heats every tray at once. A CDU has `pumps` pumps of which
//   `pumps_needed` carry the full flow (N+1 in the shipped catalogues, a [guess]): a pump failure within
//   that redundancy changes no flow, only the CDU's controller reports it; beyond it the flow falls to
//   running / needed.
// - A leak trips the zone's leak sensor (seen at the next telemetry poll) and the CDU's leak response
//   shuts the zone's valve at once, so the tray heats like a closed valve; the repair releases the
//   leak's hold on the valve.
#include <algorithm>
#include <bit>

#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

void Thermal::SetPowerCap(ComponentId gpu_id, double watts, FaultId cause) {
  const double w = std::clamp(watts, topo_.model().gpu_min_power_w, topo_.model().gpu_tdp_w);
  ApplyPowerCap(gpu_id,
                cause == kNoFault ? cap_holds_.SetUnheld(gpu_id, w)
                                  : cap_holds_.Place(gpu_id, gpu_id, cause, w, heat(gpu_id).cap_w),
                cause);
}

void Thermal::ReleasePowerCap(ComponentId gpu_id, FaultId cause) {
  ApplyPowerCap(gpu_id, cap_holds_.Release(gpu_id, gpu_id, cause, heat(gpu_id).cap_w), cause);
}

void Thermal::ApplyPowerCap(ComponentId gpu_id, const Holds<ComponentId>::State& s, FaultId cause) {
  GpuHeat& g = heat(gpu_id);
  const FaultId why = s.held ? s.cause : cause;
  g.cap_w = s.value;
  g.cap_cause = g.cap_w < g.baseline_cap_w ? why : kNoFault;
  ctx_.Physics(gpu_id, "power_cap", g.cap_w, why);
  UpdateThermal(gpu_id);
  if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob) jobs_.RefreshJob(job);
}

double Thermal::ValveNow(ComponentId valve) const {
  return topo_.at(valve).kind == Kind::kSwitchTray ? SwitchValve(valve) : tray_[topo_.TraySlot(topo_.TrayOf(valve))].valve;
}

void Thermal::SetValveOpening(ComponentId valve, double fraction, FaultId cause) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  ApplyValve(valve,
             cause == kNoFault ? valve_holds_.SetUnheld(valve, f) : valve_holds_.Place(valve, valve, cause, f, ValveNow(valve)),
             cause);
}

void Thermal::ReleaseValve(ComponentId valve, FaultId cause) {
  ApplyValve(valve, valve_holds_.Release(valve, valve, cause, ValveNow(valve)), cause);
}

void Thermal::ApplyValve(ComponentId valve, const Holds<ComponentId>::State& s, FaultId cause) {
  if (topo_.at(valve).kind == Kind::kSwitchTray) return ApplySwitchValve(valve, s, cause);
  ComponentId tray = topo_.TrayOf(valve);
  TrayCooling& t = tray_[topo_.TraySlot(tray)];
  const FaultId why = s.held ? s.cause : cause;
  t.valve = s.value;
  t.valve_cause = t.valve < 1 ? why : kNoFault;
  ctx_.Physics(valve, "valve_opening", t.valve, why);
  for (ComponentId g : topo_.GpusOfTray(tray)) UpdateThermal(g);
  WatchTelemetry(tray);
}

double Thermal::TrayFlow(ComponentId tray) const {
  return TrayFlowAtSlot(topo_.TraySlot(tray));
}

double Thermal::CduFlowOf(const Cdu& c) const {
  if (c.failed) return 0;
  const RackModel& m = topo_.model();
  if (m.cdu_pumps_needed <= 0) return 1;
  const int running = m.cdu_pumps - std::popcount(c.pump_failed);
  return std::min(1.0, static_cast<double>(running) / m.cdu_pumps_needed);
}

Status Thermal::SetCdu(ComponentId cdu, double flow, FaultId cause) {
  Cdu& r = cdu_of(cdu);
  flow = std::clamp(flow, 0.0, 1.0);
  if (flow == r.flow) return Status::Ok();
  r.flow = flow;
  r.cause = flow < 1 ? cause : kNoFault;
  ctx_.Physics(cdu, flow < 1 ? "cdu_flow" : "cdu_flow_up", flow, cause);
  for (ComponentId tray : topo_.ChildrenOf(topo_.RackOf(cdu))) {
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    for (ComponentId g : topo_.GpusOfTray(tray)) UpdateThermal(g);
    WatchTelemetry(tray);
  }
  UpdateRackSwitchThermal(topo_.RackOf(cdu), cause);  // sim_switch_thermal.cpp
  return Status::Ok();
}

Status Thermal::SetCduFailed(ComponentId cdu, bool failed, FaultId cause) {
  cdu_of(cdu).failed = failed;
  return SetCdu(cdu, CduFlowOf(cdu_of(cdu)), cause);
}

Status Thermal::SetPump(ComponentId pump, bool failed, FaultId cause) {
  Cdu& r = cdu_of(pump);
  const uint64_t bit = uint64_t{1} << topo_.at(pump).index;
  if (((r.pump_failed & bit) != 0) == failed) return Status::Ok();
  r.pump_failed = failed ? r.pump_failed | bit : r.pump_failed & ~bit;
  ctx_.Physics(pump, failed ? "pump_failed" : "pump_up", 0, cause);
  ctx_.PartHealth(pump, !failed);
  return SetCdu(topo_.CduOfRack(topo_.RackOf(pump)), CduFlowOf(r), cause);
}

Status Thermal::SetLeak(ComponentId valve, bool leaking, FaultId cause) {
  const TrayCooling& t = cooling_of(valve);
  ctx_.Physics(valve, leaking ? "leak" : "leak_up", leaking ? 1 : 0, cause);
  ctx_.Emit(TelemetrySample{valve, Metric::kLeak, leaking ? 1.0 : 0.0},
            SimContext::NextSlot(nodes_.PollPhase(topo_.TrayOf(valve)), opt_.telemetry_period, clock_.Now()));
  const double now = t.valve;
  ApplyValve(valve, leaking ? valve_holds_.Place(valve, valve, cause, 0, now) : valve_holds_.Release(valve, valve, cause, now),
             cause);
  return Status::Ok();
}

}  // namespace rackchaos::cluster
