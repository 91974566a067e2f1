// Component names written with another zero padding than the model's: "r1.tray3" or "r01.tray03" on a
// cluster whose racks are r001..r120 (runner/plan/selector.h says how names are padded). Site
// inventories and replay host maps name trays and GPUs literally; these let them use any padding.
#pragma once

#include <optional>
#include <string_view>

#include "cluster/topology.h"
#include "core/status.h"
#include "runner/site/inventory.h"

namespace rackchaos::runner {

// The component `name` names, whatever the padding of its numbers: Find(name) first, then the same
// name with each number written at every width up to 6 digits. nullopt when none (or, which the model
// never builds, more than one) matches.
std::optional<ComponentId> FindIgnoringPadding(const cluster::Topology& topo, std::string_view name);

// Renames `inventory`'s trays to the model's names ("r1.tray03" -> "r001.tray03" in a 120-rack
// cluster). An invalid-argument status, at the tray's position, for a name that is no compute tray
// under any padding; it says how the cluster pads its names.
Status CanonicalTrayNames(Inventory& inventory, const cluster::Topology& topo);

}  // namespace rackchaos::runner
