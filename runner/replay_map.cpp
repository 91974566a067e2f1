// Host maps from a site inventory (the --gpu-map format is in runner/incident/host_map.h).
#include <cctype>

#include "runner/replay.h"

namespace rackchaos::runner {
namespace {

bool IsPci(const std::string& s) {
  return s.size() >= 7 && s.find(':') != std::string::npos &&
         s.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
}

std::string LowerPci(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

HostMap HostMapFromInventory(const Inventory& inventory) {
  HostMap map;
  for (const auto& [tray, t] : inventory.trays) {
    map.trays[t.host] = tray;
    if (auto h = inventory.hosts.find(t.host); h != inventory.hosts.end() && !h->second.spec.address.empty())
      map.trays[h->second.spec.address] = tray;
    for (size_t i = 0; i < t.gpus.size(); ++i) {
      if (IsPci(t.gpus[i])) map.targets[t.host + " " + LowerPci(t.gpus[i])] = tray + ".gpu" + std::to_string(i);
    }
    for (size_t i = 0; i < t.nics.size(); ++i)
      map.targets[t.host + " " + t.nics[i]] = tray + ".nic" + std::to_string(i);
  }
  return map;
}

}  // namespace rackchaos::runner
