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
