// The scale-out fabric of the simulated cluster: a leaf switch or a whole rail going down takes the
// links of every NIC behind it, which is what the NICs' own link state shows a site. Each NIC then
// behaves as after link_down: multi-tray jobs on it hang until moved or the collective timeout.
#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

Status SimBackend::SetFabricFailed(ComponentId leaf_or_rail, bool failed, FaultId cause) {
  Physics(leaf_or_rail, failed ? "failed" : "repaired", 0, cause);
  for (ComponentId nic : topo_.NicsOf(leaf_or_rail)) RC_RETURN_IF_ERROR(HoldNicLink(nic, leaf_or_rail, failed, cause));
  return Status::Ok();
}

// A BlueField DPU fronts its tray's NICs (topology.h: an equal block of them): when it fails those NICs
// lose their links, which is what the site sees, and the DPU's BMC reports it failed at its next poll.
Status SimBackend::SetDpuFailed(ComponentId dpu, bool failed, FaultId cause) {
  Physics(dpu, failed ? "failed" : "repaired", 0, cause);
  PartHealth(dpu, !failed);
  for (ComponentId nic : topo_.NicsOfDpu(dpu)) RC_RETURN_IF_ERROR(HoldNicLink(nic, dpu, failed, cause));
  return Status::Ok();
}

// A NIC's link is down while anything holds it down (cluster/holds.h); the tray reports the cause of
// the oldest hold left.
Status SimBackend::HoldNicLink(ComponentId nic, ComponentId holder, bool down, FaultId cause) {
  const auto s = down ? nic_holds_.Place(nic, holder, cause, 0, 1) : nic_holds_.Release(nic, holder, cause, 1);
  if (s.held && !down) {
    tray_of(nic).nic_cause[static_cast<size_t>(topo_.at(nic).index)] = s.cause;
    return Status::Ok();
  }
  return ApplyNicLink(nic, !s.held, s.held ? s.cause : cause);
}

}  // namespace rackchaos::cluster
