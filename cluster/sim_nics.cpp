// The scale-out NICs of the simulated cluster (cluster/sim_fabric.h) and the parts in front of and above
// them. A NIC's link is down while anything holds it down (cluster/holds.h): its own link_down, its leaf
// or rail going down (which takes the links of every NIC behind it, what the NICs' own link state shows a
// site), or the BlueField DPU in front of it failing (an equal block of the tray's NICs; its BMC reports
// it at its next poll). A NIC down hangs the jobs that send over it until they are moved or the
// collective timeout fires; a rank whose DP and PP groups stay inside NVLink does not send over it.
#include <algorithm>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

bool Fabric::AnyNicDown(ComponentId tray) const {
  const Nics& n = nics_[topo_.TraySlot(tray)];
  return std::find(n.up.begin(), n.up.end(), false) != n.up.end();
}

Status Fabric::SetNicLink(ComponentId nic, bool up, FaultId cause) {
  if (topo_.at(nic).kind != Kind::kNic) return Status::Invalid(topo_.at(nic).name + " is not a NIC");
  return HoldNicLink(nic, nic, !up, cause);
}

Status Fabric::SetFabricFailed(ComponentId leaf_or_rail, bool failed, FaultId cause) {
  ctx_.Physics(leaf_or_rail, failed ? "failed" : "repaired", 0, cause);
  for (ComponentId nic : topo_.NicsOf(leaf_or_rail)) RC_RETURN_IF_ERROR(HoldNicLink(nic, leaf_or_rail, failed, cause));
  return Status::Ok();
}

Status Fabric::SetDpuFailed(ComponentId dpu, bool failed, FaultId cause) {
  ctx_.Physics(dpu, failed ? "failed" : "repaired", 0, cause);
  ctx_.PartHealth(dpu, !failed);
  for (ComponentId nic : topo_.NicsOfDpu(dpu)) RC_RETURN_IF_ERROR(HoldNicLink(nic, dpu, failed, cause));
  return Status::Ok();
}

void Fabric::SetTrayNicsPresent(ComponentId tray, bool present, FaultId cause) {
  for (ComponentId n : topo_.ChildrenOf(tray))
    if (topo_.at(n).kind == Kind::kNic) (void)HoldNicLink(n, tray, !present, cause);
}

// The tray reports the cause of the oldest hold left.
Status Fabric::HoldNicLink(ComponentId nic, ComponentId holder, bool down, FaultId cause) {
  const auto s = down ? nic_holds_.Place(nic, holder, cause, 0, 1) : nic_holds_.Release(nic, holder, cause, 1);
  if (s.held && !down) {
    nics_of(nic).cause[static_cast<size_t>(topo_.at(nic).index)] = s.cause;
    return Status::Ok();
  }
  return ApplyNicLink(nic, !s.held, s.held ? s.cause : cause);
}

Status Fabric::ApplyNicLink(ComponentId nic, bool up, FaultId cause) {
  const Component& c = topo_.at(nic);
  Nics& t = nics_of(nic);
  if (t.up[c.index] == up) return Status::Ok();
  t.up[c.index] = up;
  t.cause[c.index] = up ? kNoFault : cause;
  ctx_.Physics(nic, up ? "link_up" : "link_down", 0, cause);
  if (std::find(t.up.begin(), t.up.end(), false) != t.up.end())
    nic_down_trays_.insert(topo_.TrayOf(nic));
  else
    nic_down_trays_.erase(topo_.TrayOf(nic));
  ctx_.Emit(LinkStateChange{nic, -1, up},
            SimContext::NextSlot(nodes_.PollPhase(topo_.TrayOf(nic)), opt_.link_poll_period, clock_.Now()));
  if (JobId job = seats_.JobOnTray(topo_.TrayOf(nic)); job != kNoJob) jobs_.RefreshJob(job);
  return Status::Ok();
}

// Whether the job sends over the tray's NIC `nic`: some rank of the job behind it uses its NIC.
bool Fabric::NicCarriesJob(const SimJob& j, ComponentId tray, size_t nic) const {
  if (!j.cfg.grouped) return true;  // ungrouped: any NIC of its trays (the model before groups)
  const RackModel& m = topo_.model();
  const int job_gpus = seats_.gpus_at(topo_.TraySlot(tray));
  for (ComponentId g : topo_.GpusOfTray(tray)) {
    const int k = topo_.at(g).index;
    if (k < job_gpus && static_cast<size_t>(k * m.nics_per_tray / std::max(1, m.gpus_per_tray)) == nic &&
        GpuUsesNic(topo_, j.cfg, j.at, g))
      return true;
  }
  return false;
}

// Only the trays with a NIC down are looked at (in id order).
bool Fabric::JobNicDown(const SimJob& j, FaultId& cause, std::string& why) const {
  for (ComponentId tray : nic_down_trays_) {
    if (seats_.JobOnTray(tray) != j.id) continue;
    const Nics& t = nics_[topo_.TraySlot(tray)];
    for (size_t n = 0; n < t.up.size(); ++n)
      if (!t.up[n] && NicCarriesJob(j, tray, n)) {
        cause = t.cause[n];
        why = topo_.at(tray).name + ".nic" + std::to_string(n) + " link down";
        return true;
      }
  }
  return false;
}

}  // namespace rackchaos::cluster
