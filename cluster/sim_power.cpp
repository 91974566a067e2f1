// Rack power in the simulated cluster (cluster/sim_nodes.h): the PSUs behind a rack's bus bar, and what
// losing the rack's power does. The rack's power is a held state (cluster/holds.h): the rack holds it
// off for its own PSUs, a region for an outage; it comes back when neither does.
//
// Power lost: every tray of the rack goes dark as if pulled (heartbeats stop, GPUs are gone, jobs hang),
// its switch trays stop drawing power, its NVLink domain goes UNHEALTHY; power back: the trays boot.
// Trays pulled for another reason stay as they are.
//
// Cost: a change costs the rack it happens in.
#include <algorithm>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

// While what is left of the PSUs carries the GPUs at TDP nothing changes but the PSU's own status.
Status Nodes::SetPsus(ComponentId c, bool failed, FaultId cause) {
  Power& r = power_of(c);
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
    ctx_.Physics(p, failed ? "psu_failed" : "psu_up", 0, cause);
    // The shelf's BMC reports the PSU's state (Redfish PowerSupplies Status.Health) at its next poll.
    ctx_.Emit(TelemetrySample{p, Metric::kPsuOk, failed ? 0.0 : 1.0},
              SimContext::NextSlot(ctx_.PartPollPhase(topo_.at(p).parent), opt_.telemetry_period, clock_.Now()));
  }
  double left = static_cast<double>(std::count(r.psu_failed.begin(), r.psu_failed.end(), false)) * m.psu_kw * 1000;
  double load = m.compute_trays * m.gpus_per_tray * m.gpu_tdp_w;
  // The rack holds its own power off, the newest PSU fault as the cause; a region outage holding it too
  // keeps it dark after the PSUs are repaired.
  const ComponentId rack = topo_.RackOf(c);
  auto s = power_holds_.ReleaseHolder(rack, rack, 1);
  if (left < load) s = power_holds_.Place(rack, rack, cause, 0, 1);
  ApplyRackPower(rack, s, cause);
  return Status::Ok();
}

void Nodes::HoldRackPower(ComponentId rack, ComponentId holder, bool off, FaultId cause) {
  ApplyRackPower(rack, off ? power_holds_.Place(rack, holder, cause, 0, 1) : power_holds_.Release(rack, holder, cause, 1),
                 cause);
}

void Nodes::ApplyRackPower(ComponentId rack, const Holds<ComponentId>::State& s, FaultId cause) {
  Power& r = power_of(rack);
  if (s.held) r.cause = s.cause;
  if (r.powered != s.held) return;
  SetRackPowered(rack, !s.held, s.held ? s.cause : cause);
}

void Nodes::SetRackPowered(ComponentId rack, bool powered, FaultId cause) {
  Power& r = power_of(rack);
  r.powered = powered;
  ctx_.Physics(rack, powered ? "power_up" : "power_lost", 0, powered ? kNoFault : cause);
  for (ComponentId tray : topo_.ChildrenOf(rack)) {
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    // The rack holds its trays out (cluster/holds.h): a tray also pulled stays out until both are back.
    const auto s = powered ? presence_holds_.ReleaseHolder(tray, rack, 1) : presence_holds_.Place(tray, rack, cause, 0, 1);
    ApplyTrayPresent(tray, s, cause);
  }
  thermal_.UpdateRackSwitchThermal(rack, kNoFault);  // its switch trays stop (or start) drawing power
  fabric_.UpdateDomainHealth(rack);
  if (topo_.DomainRacks() > 1)  // the other racks' jobs lose (or regain) the domain's partition too
    for (JobId j : fabric_.JobsInDomain(rack)) jobs_.RefreshJob(j);
}

}  // namespace rackchaos::cluster
