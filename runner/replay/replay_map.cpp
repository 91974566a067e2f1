// Host maps from a site inventory (the --gpu-map format is in runner/incident/host_map.h).
#include "runner/replay/replay.h"

namespace rackchaos::runner {
HostMap HostMapFromInventory(const Inventory& inventory) {
  HostMap map;
  for (const auto& [tray, t] : inventory.trays) {
    map.trays[t.host] = tray;
    if (auto h = inventory.hosts.find(t.host); h != inventory.hosts.end() && !h->second.spec.address.empty())
      map.trays[h->second.spec.address] = tray;
    for (size_t i = 0; i < t.gpus.size(); ++i) {
      if (incident::IsPciAddress(t.gpus[i]))
        map.targets[t.host + " " + incident::MapAddress(t.gpus[i])] = tray + ".gpu" + std::to_string(i);
    }
    for (size_t i = 0; i < t.nics.size(); ++i)
      map.targets[t.host + " " + t.nics[i]] = tray + ".nic" + std::to_string(i);
  }
  return map;
}

}  // namespace rackchaos::runner
