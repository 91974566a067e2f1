#include "runner/site/host_maps.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "healer/xid.h"

namespace rackchaos::runner {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::vector<observe::HostMap> BuildHostMaps(const Inventory& inv, const cluster::Topology& topo) {
  std::vector<observe::HostMap> maps;
  std::set<std::string> seen;
  for (const auto& [name, t] : inv.trays) {
    auto tray = topo.Find(name);
    if (!tray || !seen.insert(t.host).second) continue;
    observe::HostMap m;
    m.host = t.host;
    if (auto h = inv.hosts.find(t.host); h != inv.hosts.end() && h->second.spec.address != t.host)
      m.aliases.push_back(h->second.spec.address);
    m.node = *tray;
    m.nvlink_ports = topo.model().nvlink_links_per_gpu;
    auto gpus = topo.GpusOfTray(*tray);
    for (size_t i = 0; i < gpus.size(); ++i) {
      observe::GpuAddress g;
      g.gpu = gpus[i];
      g.index = static_cast<int>(i);
      if (i < t.gpus.size()) {
        if (AllDigits(t.gpus[i])) g.index = std::stoi(t.gpus[i]);
        else g.pci = observe::NormalizePci(t.gpus[i]);  // the index stays the fallback of a row without a bus id
      }
      m.gpus.push_back(std::move(g));
    }
    for (size_t i = 0; i < t.nics.size(); ++i)
      if (auto nic = topo.Find(name + ".nic" + std::to_string(i))) m.nics.push_back({*nic, t.nics[i]});
    maps.push_back(std::move(m));
  }
  std::sort(maps.begin(), maps.end(), [](const auto& a, const auto& b) { return a.host < b.host; });
  return maps;
}

Status CheckObserve(const Inventory& inv, const cluster::Topology& topo) {
  auto bmc = inv.observe.find("bmc");
  if (bmc == inv.observe.end()) return Status::Ok();
  for (const RedfishPointSpec& p : bmc->second.points)
    if (!topo.Find(p.component))
      return At(p.pos, "observe.bmc.points: component '" + p.component + "' is not in the model " + inv.model +
                           " (names as `rackchaos list components` prints them, e.g. r01.tray01.gpu0)");
  return Status::Ok();
}

bool InventoryObserves(const Inventory& inv, cluster::Metric metric) {
  auto provides = [&](const char* what) {
    return inv.prometheus && std::find(inv.prometheus->provides.begin(), inv.prometheus->provides.end(), what) !=
                                 inv.prometheus->provides.end();
  };
  const bool gpu = inv.observe.count("gpu") > 0 || provides("gpu_telemetry");
  switch (metric) {
    case cluster::Metric::kGpuTemperature:
    case cluster::Metric::kGpuPower:
    case cluster::Metric::kGpuClockFraction:
    case cluster::Metric::kThermalThrottle:
    case cluster::Metric::kPowerCapped:
      if (gpu) return true;
      break;
    default: break;
  }
  auto bmc = inv.observe.find("bmc");
  if (bmc == inv.observe.end()) return false;
  const std::string name = cluster::MetricName(metric);
  for (const RedfishPointSpec& p : bmc->second.points)
    if (p.metric == name) return true;
  return false;
}

std::string ToModelAddress(const std::string& line, const observe::HostMap& host, const cluster::Topology& topo) {
  auto xid = healer::ParseXidLine(line);
  if (!xid || xid->is_sxid) return line;
  const observe::GpuAddress* g = nullptr;
  for (const observe::GpuAddress& a : host.gpus)
    if (!a.pci.empty() && a.pci == xid->pci) g = &a;
  if (!g) return line;
  const size_t open = line.find("(PCI:");
  const size_t close = open == std::string::npos ? open : line.find(')', open);
  if (close == std::string::npos) return line;
  return line.substr(0, open + 5) + topo.PciOf(g->gpu) + line.substr(close);
}

}  // namespace rackchaos::runner
