// What the `observe:` sources need from the inventory and the model: one observe::HostMap per tray
// host (its GPUs by index and PCI address, its NICs by interface name), the check of the sources'
// model names, and which telemetry a configured site delivers (for the plan's live aborts).
//
// A tray's `gpus:` list gives each GPU as nvidia-smi takes it: an index ("3") or a PCI bus id
// ("00000000:3B:00.0"). A bus id is the GPU's address for every source (it survives the renumbering
// after a GPU falls off the bus); an index is the fallback, and an empty list means GPU i is index i.
// Pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/status.h"
#include "runner/site/inventory.h"
#include "runner/site/observe/host_map.h"

namespace rackchaos::runner {

// One map per tray host of the inventory (a host listed for two trays keeps the first), by host name order.
std::vector<observe::HostMap> BuildHostMaps(const Inventory& inv, const cluster::Topology& topo);

// Every name the `observe:` section gives (observe.bmc.points[].component) is a component of the model.
// kInvalidArgument "FILE:LINE:COL: ..." naming the point otherwise.
Status CheckObserve(const Inventory& inv, const cluster::Topology& topo);

// True when a configured source of `inv` delivers `metric` (GPU temperature: observe.gpu, prometheus with
// gpu_telemetry, or a BMC point).
bool InventoryObserves(const Inventory& inv, cluster::Metric metric);

// A driver-format kernel line of a real host with its GPU's PCI address as the model prints it: the
// healer (healer/xid.h, Topology::GpuByPci) names GPUs by the model's addresses, so a line naming the
// site's address of a GPU the map knows is rewritten; any other line is returned as it is.
std::string ToModelAddress(const std::string& line, const observe::HostMap& host, const cluster::Topology& topo);

}  // namespace rackchaos::runner
