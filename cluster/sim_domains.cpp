// Rack-level failure domains of the simulated cluster: NVLink switch trays (domain health as NVIDIA's
// NMX reports it), the CDU that cools every tray of a rack, and the PSUs behind the rack's bus bar.
//
// Cost: a change costs the rack it happens in (its 18 trays, their GPUs' link observations); a job
// refresh looks only at the racks whose domain is impaired (impaired_racks_), never at every GPU.
#include <algorithm>
#include <bit>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

const char* SimBackend::DomainHealthName(DomainHealth h) {
  switch (h) {
    case DomainHealth::kHealthy: return "HEALTHY";
    case DomainHealth::kDegraded: return "DEGRADED";
    case DomainHealth::kBandwidth: return "BANDWIDTH";
    case DomainHealth::kUnhealthy: return "UNHEALTHY";
  }
  return "UNKNOWN";
}

double SimBackend::TrayFlow(ComponentId tray) const {
  const Tray& t = tray_[slot(tray)];
  const Rack& r = rack_[static_cast<size_t>(topo_.at(tray).rack)];
  return t.valve * r.cdu_flow;
}

// The racks of a rack's NVLink domain: [first, first + DomainRacks()).
static size_t FirstRackOfDomain(const Topology& t, ComponentId rack) {
  return static_cast<size_t>(t.DomainOfRack(t.at(rack).rack) * t.DomainRacks());
}

// Switch-tray positions lost anywhere in the domain. Each GPU spreads its links over its own rack's S
// switch trays; in a two-rack domain tray k of one rack is cabled to tray k of the other, so losing
// either takes position k out of every cross-rack path: the domain counts lost positions.
uint64_t SimBackend::DomainSwitchesLost(ComponentId rack) const {
  uint64_t lost = 0;
  const size_t first = FirstRackOfDomain(topo_, rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k)
    lost |= rack_[k].switch_failed | rack_[k].switch_out | rack_[k].switch_hot;
  return lost;
}

// Full-bandwidth mode: one lost switch tray and no partition of the domain runs. Adaptive mode: the
// fabric manager routes over the others, every GPU at (S - lost) / S. A lost compute tray only
// parks its own GPUs (DEGRADED). A rack of the domain without power takes its switch trays with it.
SimBackend::DomainHealth SimBackend::DomainHealthOf(ComponentId rack) const {
  const int total = topo_.model().switch_trays, lost = std::popcount(DomainSwitchesLost(rack));
  const size_t first = FirstRackOfDomain(topo_, rack), end = first + static_cast<size_t>(topo_.DomainRacks());
  for (size_t k = first; k < end; ++k)
    if (!rack_[k].powered) return DomainHealth::kUnhealthy;
  if (lost > 0)
    return topo_.model().adaptive_bandwidth && lost < total ? DomainHealth::kBandwidth : DomainHealth::kUnhealthy;
  for (size_t k = first; k < end; ++k)
    for (ComponentId tray : topo_.ChildrenOf(topo_.racks()[k])) {
      if (topo_.at(tray).kind != Kind::kComputeTray) continue;
      for (ComponentId g : topo_.GpusOfTray(tray))
        if (!GpuAlive(g)) return DomainHealth::kDegraded;
    }
  return DomainHealth::kHealthy;
}

// Each position carries 1 / S: a lost one none of it, a throttled one (sim_switch_thermal.cpp)
// switch_tray.throttle_bandwidth of it.
double SimBackend::DomainBandwidth(ComponentId rack) const {
  DomainHealth h = DomainHealthOf(rack);
  if (h == DomainHealth::kUnhealthy) return 0;
  const RackModel& m = topo_.model();
  const int total = m.switch_trays;
  if (total <= 0) return 1;
  const double kept = static_cast<double>(total - std::popcount(DomainSwitchesLost(rack)));
  const int slow = std::popcount(DomainSwitchesThrottled(rack));
  return (slow ? kept - slow * (1 - m.switch_throttle_bandwidth) : kept) / total;
}

// The fault behind an impaired domain: a rack's power, else a lost switch tray's.
FaultId SimBackend::DomainCause(ComponentId rack) const {
  const size_t first = FirstRackOfDomain(topo_, rack), end = first + static_cast<size_t>(topo_.DomainRacks());
  for (size_t k = first; k < end; ++k)
    if (!rack_[k].powered) return rack_[k].power_cause;
  for (size_t k = first; k < end; ++k)
    if (rack_[k].switch_failed | rack_[k].switch_out | rack_[k].switch_hot) return rack_[k].switch_cause;
  if (const FaultId heat = DomainThrottleCause(rack); heat != kNoFault) return heat;
  return rack_[first].switch_cause;
}

// Records the domain's health when it changes, on the domain's component (the rack itself when a
// domain is one rack). Ground truth: the healer sees only link states. Every rack of the domain is
// marked impaired, so the jobs on any of them see it; so is a domain with a throttled switch tray (NMX
// still says HEALTHY: every link is up).
void SimBackend::UpdateDomainHealth(ComponentId rack) {
  DomainHealth h = DomainHealthOf(rack);
  const size_t first = FirstRackOfDomain(topo_, rack);
  bool impaired = h == DomainHealth::kBandwidth || h == DomainHealth::kUnhealthy || DomainSwitchesThrottled(rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k) {
    if (impaired)
      impaired_racks_.insert(k);
    else
      impaired_racks_.erase(k);
  }
  Rack& r = rack_[first];  // the domain's health is kept on its first rack
  if (h == r.health) return;
  r.health = h;
  Record(PhysicsChanged{topo_.DomainOf(rack), std::string("nvlink_domain_") + DomainHealthName(h),
                        DomainBandwidth(rack), kNoFault});
}

// Jobs on any rack of the domain (a domain's health reaches past the rack that changed).
std::set<JobId> SimBackend::JobsInDomain(ComponentId rack) const {
  std::set<JobId> jobs;
  const size_t first = FirstRackOfDomain(topo_, rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k)
    for (ComponentId tray : topo_.ChildrenOf(topo_.racks()[k]))
      if (topo_.at(tray).kind == Kind::kComputeTray && seat_[slot(tray)].job != kNoJob) jobs.insert(seat_[slot(tray)].job);
  return jobs;
}

void SimBackend::DomainImpact(JobId id, bool& unhealthy, double& bandwidth, FaultId& cause) const {
  for (size_t k : impaired_racks_) {
    ComponentId rack = topo_.racks()[k];
    bool uses = false;
    for (ComponentId tray : topo_.ChildrenOf(rack))
      uses = uses || (topo_.at(tray).kind == Kind::kComputeTray && seat_[slot(tray)].job == id);
    if (!uses) continue;
    FaultId why = DomainCause(rack);
    double bw = DomainBandwidth(rack);
    if (bw <= 0) {
      unhealthy = true;
      cause = why;
      return;
    }
    if (bw < bandwidth - 1e-12) {
      bandwidth = bw;
      cause = why;
    }
  }
}

double SimBackend::DomainsBandwidth(const std::vector<int>& domains, FaultId& cause) const {
  double bw = 1;
  for (size_t k : impaired_racks_) {
    if (!std::binary_search(domains.begin(), domains.end(), topo_.DomainOfRack(static_cast<int>(k)))) continue;
    const ComponentId rack = topo_.racks()[k];
    if (const double b = DomainBandwidth(rack); b < bw) {
      bw = b;
      cause = DomainCause(rack);
    }
  }
  return bw;
}

Status SimBackend::SetComponentFailed(ComponentId c, bool failed, FaultId cause) {
  const Rack& r = rack_of(c);
  switch (topo_.at(c).kind) {
    case Kind::kSwitchTray: {
      bool out = (r.switch_out >> topo_.at(c).index) & 1;
      return SetSwitchTray(c, failed, out, cause);
    }
    case Kind::kCdu:
      rack_of(c).cdu_failed = failed;
      return SetCdu(c, CduFlowOf(rack_of(c)), cause);
    case Kind::kPump: return SetPump(c, failed, cause);     // sim_pumps.cpp
    case Kind::kDpu: return SetDpuFailed(c, failed, cause);  // sim_fabric.cpp
    case Kind::kSpine:
    case Kind::kSuperSpine: return SetSpine(c, failed, spine_out_[SpineIndex(c)], cause);  // sim_spines.cpp
    case Kind::kPsu:
    case Kind::kPowerShelf: return SetPsus(c, failed, cause);
    case Kind::kValve: return SetLeak(c, failed, cause);
    case Kind::kLeaf:
    case Kind::kRail: return SetFabricFailed(c, failed, cause);  // sim_fabric.cpp
    default:
      return Status::Invalid(
          topo_.at(c).name + " is a " + KindName(topo_.at(c).kind) +
          "; a switch tray, CDU, pump, power shelf, PSU, tray valve (a leak), leaf, rail, spine or DPU can fail "
          "this way");
  }
}

// Each switch tray carries L / S of every GPU's NVLink ports (GB200: 2 of 18, one per NVSwitch chip):
// port p goes to switch tray p * S / L. Its loss shows on every GPU of the domain as those ports going
// inactive, which is what a site's NVLink counters and nvidia-smi show.
Status SimBackend::SetSwitchTray(ComponentId sw, bool failed, bool taken_out, FaultId cause) {
  Rack& r = rack_of(sw);
  const uint64_t bit = uint64_t{1} << topo_.at(sw).index;
  const bool was_failed = r.switch_failed & bit, was_lost = (r.switch_failed | r.switch_out | r.switch_hot) & bit;
  r.switch_failed = failed ? r.switch_failed | bit : r.switch_failed & ~bit;
  r.switch_out = taken_out ? r.switch_out | bit : r.switch_out & ~bit;
  if (failed != was_failed) {
    Physics(sw, failed ? "failed" : "repaired", 0, cause);
    if (failed) r.switch_cause = cause;
  }
  SwitchPositionChanged(sw, was_lost);
  return Status::Ok();
}

void SimBackend::SwitchPositionChanged(ComponentId sw, bool was_lost) {
  const Rack& r = rack_of(sw);
  const bool lost = (r.switch_failed | r.switch_out | r.switch_hot) >> topo_.at(sw).index & 1;
  if (lost == was_lost) return;
  const RackModel& m = topo_.model();
  const ComponentId rack = topo_.RackOf(sw);
  const std::set<JobId> jobs = JobsInDomain(rack);  // its domain's health reaches every rack of it
  for (ComponentId tray : topo_.ChildrenOf(rack)) {  // the ports into it are on its own rack's GPUs
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    const Tray& t = tray_[slot(tray)];
    if (!t.present || t.booting) continue;  // an unreachable node reports no link state
    Time seen = NextSlot(t.poll_phase, opt_.link_poll_period, clock_.Now());
    for (ComponentId g : topo_.GpusOfTray(tray)) {
      if (!GpuAlive(g)) continue;  // a GPU that is off (shut down, failed) reports no ports
      for (int p = 0; p < m.nvlink_links_per_gpu; ++p)
        if (p * m.switch_trays / m.nvlink_links_per_gpu == topo_.at(sw).index) Emit(LinkStateChange{g, p, !lost}, seen);
    }
  }
  UpdateDomainHealth(rack);
  for (JobId j : jobs) RefreshJob(j);
}

Status SimBackend::TakeSwitchTrayOut(ComponentId sw, bool out) {
  Rack& r = rack_of(sw);
  bool failed = (r.switch_failed >> topo_.at(sw).index) & 1;
  if (((r.switch_out >> topo_.at(sw).index) & 1) != out) Physics(sw, out ? "taken_out" : "returned", 0, kNoFault);
  // Taken out for running hot: the cooling fault behind it is what the domain lost it to.
  if (const FaultId heat = SwitchHeatCause(sw); out && !failed && heat != kNoFault) r.switch_cause = heat;
  return SetSwitchTray(sw, failed, out, r.switch_cause);
}

// A switch tray's self-test (NVOS/NMX health): passes when the tray itself works and is not in thermal
// slowdown.
Status SimBackend::DiagnoseSwitchTray(ComponentId sw) {
  clock_.CallAfter(topo_.model().diagnostic_time, [this, sw] {
    const Rack& r = rack_of(sw);
    const bool failed = ((r.switch_failed | r.switch_hot) >> topo_.at(sw).index) & 1;  // a hot one is off too
    const bool slow = (r.switch_slow >> topo_.at(sw).index) & 1;
    Emit(DiagnosticResult{sw, !failed && !slow,
                          failed ? "NVSwitch trays: " + topo_.at(sw).name + " not responding"
                          : slow ? "NVSwitch trays: " + topo_.at(sw).name + " in thermal slowdown"
                                 : "all checks passed"},
         clock_.Now());
  });
  return Status::Ok();
}

// The CDU's pumps move the coolant of every tray of the rack: each tray's flow is its valve opening
// times the CDU's flow, so a CDU failure heats every tray at once through the thermal model.
Status SimBackend::SetCdu(ComponentId cdu, double flow, FaultId cause) {
  Rack& r = rack_of(cdu);
  flow = std::clamp(flow, 0.0, 1.0);
  if (flow == r.cdu_flow) return Status::Ok();
  r.cdu_flow = flow;
  r.cdu_cause = flow < 1 ? cause : kNoFault;
  Physics(cdu, flow < 1 ? "cdu_flow" : "cdu_flow_up", flow, cause);
  for (ComponentId tray : topo_.ChildrenOf(topo_.RackOf(cdu))) {
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    for (ComponentId g : topo_.GpusOfTray(tray)) UpdateThermal(g);
    WatchTelemetry(tray);
  }
  UpdateRackSwitchThermal(topo_.RackOf(cdu), cause);  // sim_switch_thermal.cpp
  return Status::Ok();
}

// A leak in a tray's coolant zone: the zone's leak sensor trips (seen at the next telemetry poll) and
// the CDU's leak response shuts the zone's valve at once, so the tray heats like a closed valve. The
// repair releases the leak's hold on the valve (cluster/holds.h).
Status SimBackend::SetLeak(ComponentId valve, bool leaking, FaultId cause) {
  const Tray& t = tray_of(valve);
  Physics(valve, leaking ? "leak" : "leak_up", leaking ? 1 : 0, cause);
  Emit(TelemetrySample{valve, Metric::kLeak, leaking ? 1.0 : 0.0},
       NextSlot(t.poll_phase, opt_.telemetry_period, clock_.Now()));
  const double now = t.valve;
  ApplyValve(valve, leaking ? valve_holds_.Place(valve, valve, cause, 0, now) : valve_holds_.Release(valve, valve, cause, now),
             cause);
  return Status::Ok();
}

// The rack's PSUs share its bus bar (cluster/dependency.h): while what is left carries the GPUs at TDP
// nothing changes but the PSU's own status; below that every tray of the rack loses power.
Status SimBackend::SetPsus(ComponentId c, bool failed, FaultId cause) {
  Rack& r = rack_of(c);
  const RackModel& m = topo_.model();
  std::vector<ComponentId> psus;
  if (topo_.at(c).kind == Kind::kPsu)
    psus.push_back(c);
  else
    psus = topo_.ChildrenOf(c);
  for (ComponentId p : psus) {
    size_t k = static_cast<size_t>(topo_.at(topo_.at(p).parent).index * m.psus_per_shelf + topo_.at(p).index);
    if (r.psu_failed[k] == failed) continue;
    r.psu_failed[k] = failed;
    Physics(p, failed ? "psu_failed" : "psu_up", 0, cause);
    // The shelf's BMC reports the PSU's state (Redfish PowerSupplies Status.Health) at its next poll.
    Emit(TelemetrySample{p, Metric::kPsuOk, failed ? 0.0 : 1.0},
         NextSlot(PartPollPhase(topo_.at(p).parent), opt_.telemetry_period, clock_.Now()));
  }
  double left = static_cast<double>(std::count(r.psu_failed.begin(), r.psu_failed.end(), false)) * m.psu_kw * 1000;
  double load = m.compute_trays * m.gpus_per_tray * m.gpu_tdp_w;
  // The rack holds its own power off (cluster/holds.h), the newest PSU fault as the cause; a region
  // outage holding it too keeps it dark after the PSUs are repaired.
  const ComponentId rack = topo_.RackOf(c);
  auto s = power_holds_.ReleaseHolder(rack, rack, 1);
  if (left < load) s = power_holds_.Place(rack, rack, cause, 0, 1);
  ApplyRackPower(rack, s, cause);
  return Status::Ok();
}

void SimBackend::ApplyRackPower(ComponentId rack, const Holds<ComponentId>::State& s, FaultId cause) {
  Rack& r = rack_of(rack);
  if (s.held) r.power_cause = s.cause;
  if (r.powered != s.held) return;
  SetRackPowered(rack, !s.held, s.held ? s.cause : cause);
}

// Power lost: every tray of the rack goes dark as if pulled (heartbeats stop, GPUs are gone, jobs
// hang); power back: they boot. Trays pulled for another reason stay as they are.
void SimBackend::SetRackPowered(ComponentId rack, bool powered, FaultId cause) {
  Rack& r = rack_of(rack);
  r.powered = powered;
  Physics(rack, powered ? "power_up" : "power_lost", 0, powered ? kNoFault : cause);
  for (ComponentId tray : topo_.ChildrenOf(rack)) {
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    // The rack holds its trays out (cluster/holds.h): a tray also pulled stays out until both are back.
    const auto s = powered ? presence_holds_.ReleaseHolder(tray, rack, 1) : presence_holds_.Place(tray, rack, cause, 0, 1);
    ApplyTrayPresent(tray, s, cause);
  }
  UpdateRackSwitchThermal(rack, kNoFault);  // its switch trays stop (or start) drawing power
  UpdateDomainHealth(rack);
  if (topo_.DomainRacks() > 1)  // the other racks' jobs lose (or regain) the domain's partition too
    for (JobId j : JobsInDomain(rack)) RefreshJob(j);
}

}  // namespace rackchaos::cluster
