// The scale-out fabric of the simulated cluster: a leaf switch or a whole rail going down takes the
// links of every NIC behind it, which is what the NICs' own link state shows a site. Each NIC then
// behaves as after link_down: multi-tray jobs on it hang until moved or the collective timeout.
#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

Status SimBackend::SetFabricFailed(ComponentId leaf_or_rail, bool failed, FaultId cause) {
  Physics(leaf_or_rail, failed ? "failed" : "repaired", 0, cause);
  for (ComponentId nic : topo_.NicsOf(leaf_or_rail)) RC_RETURN_IF_ERROR(SetNicLink(nic, !failed, cause));
  return Status::Ok();
}

}  // namespace rackchaos::cluster

namespace rackchaos::cluster {

// A BlueField DPU fronts its tray's NICs (topology.h: an equal block of them): when it fails those NICs
// lose their links, which is what the site sees, and the DPU's BMC reports it failed at its next poll.
Status SimBackend::SetDpuFailed(ComponentId dpu, bool failed, FaultId cause) {
  Physics(dpu, failed ? "failed" : "repaired", 0, cause);
  PartHealth(dpu, !failed);
  for (ComponentId nic : topo_.NicsOfDpu(dpu)) RC_RETURN_IF_ERROR(SetNicLink(nic, !failed, cause));
  return Status::Ok();
}

}  // namespace rackchaos::cluster
