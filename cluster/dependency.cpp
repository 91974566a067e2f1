#include "cluster/dependency.h"

#include <algorithm>
#include <cstdio>

namespace rackchaos::cluster {
namespace {

std::string Kw(double kw) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f kW", kw);
  return buf;
}

std::vector<ComponentId> DomainGpus(const Topology& topo, ComponentId any) {
  std::vector<ComponentId> out;
  for (ComponentId tray : topo.ChildrenOf(topo.RackOf(any)))
    if (topo.at(tray).kind == Kind::kComputeTray)
      for (ComponentId g : topo.GpusOfTray(tray)) out.push_back(g);
  return out;
}

// Power: the rack's PSUs share its bus bar; losing `lost_kw` of capacity cuts the domain when what is
// left no longer carries its GPUs at TDP.
void PowerLoss(const Topology& topo, ComponentId c, double lost_kw, BlastRadius& b) {
  const RackModel& m = topo.model();
  double capacity = m.power_shelves * m.psus_per_shelf * m.psu_kw;
  double load = m.compute_trays * m.gpus_per_tray * m.gpu_tdp_w / 1000;
  double left = capacity - lost_kw;
  std::string rack = topo.at(topo.RackOf(c)).name;
  if (left >= load) {
    b.why.push_back("redundant: " + rack + " keeps " + Kw(left) + " of PSU capacity for " + Kw(load) + " of GPU TDP");
    return;
  }
  b.gpus_down = DomainGpus(topo, c);
  b.whole_domain = true;
  b.why.push_back("power: " + rack + " keeps " + Kw(left) + " of PSU capacity, below " + Kw(load) +
                  " of GPU TDP: the trays it feeds lose power");
}

}  // namespace

BlastRadius Blast(const Topology& topo, ComponentId component) {
  const Component& c = topo.at(component);
  const RackModel& m = topo.model();
  BlastRadius b;
  b.component = component;
  std::string rack = topo.at(topo.RackOf(component)).name;
  auto tray_gpus = [&](const std::string& why) {
    auto gpus = topo.GpusOfTray(topo.TrayOf(component));
    b.gpus_down.assign(gpus.begin(), gpus.end());
    b.why.push_back(why);
  };
  switch (c.kind) {
    case Kind::kGpu:
      b.gpus_down = {component};
      b.why.push_back("gpu: itself; NVLink domain " + rack + " DEGRADED, its other GPUs at full bandwidth");
      break;
    case Kind::kNic: {
      auto gpus = topo.GpusOfTray(topo.TrayOf(component));
      if (c.index < static_cast<int>(gpus.size())) b.gpus_down = {gpus[static_cast<size_t>(c.index)]};
      b.why.push_back("nic: the only scale-out path of its GPU (rail " + std::to_string(c.index) +
                      "); jobs spanning trays hang on it");
      break;
    }
    case Kind::kCpu: tray_gpus("cpu: the tray's host; its GPUs go down with the node"); break;
    case Kind::kValve: tray_gpus("valve: the tray's coolant; its GPUs throttle, then shut down"); break;
    case Kind::kComputeTray:
      tray_gpus("compute_tray: its GPUs parked; NVLink domain " + rack + " DEGRADED, the others at full bandwidth");
      break;
    case Kind::kSwitchTray:
      if (m.adaptive_bandwidth) {
        b.gpus_slowed = DomainGpus(topo, component);
        b.slowed_bandwidth = m.switch_trays > 0 ? static_cast<double>(m.switch_trays - 1) / m.switch_trays : 0;
        b.why.push_back("switch_tray: NVLink domain " + rack + " in adaptive mode goes BANDWIDTH: every GPU at " +
                        std::to_string(m.switch_trays - 1) + "/" + std::to_string(m.switch_trays) + " NVLink bandwidth");
      } else {
        b.gpus_down = DomainGpus(topo, component);
        b.whole_domain = true;
        b.why.push_back("switch_tray: NVLink domain " + rack + " in full-bandwidth mode goes UNHEALTHY: no partition runs");
      }
      break;
    case Kind::kCdu:
      b.gpus_down = DomainGpus(topo, component);
      b.whole_domain = true;
      b.why.push_back("cdu: cools every tray of " + rack + "; all its GPUs heat to shutdown");
      break;
    case Kind::kRack:
      b.gpus_down = DomainGpus(topo, component);
      b.whole_domain = true;
      b.why.push_back("rack: contains the whole NVLink domain");
      break;
    case Kind::kPowerShelf: PowerLoss(topo, component, m.psus_per_shelf * m.psu_kw, b); break;
    case Kind::kPsu: PowerLoss(topo, component, m.psu_kw, b); break;
    case Kind::kLeaf: case Kind::kRail: {
      b.gpus_down = topo.GpusServedBy(component);
      int rail = c.kind == Kind::kRail ? c.index : topo.at(c.parent).index;
      b.why.push_back(std::string(KindName(c.kind)) + ": the only scale-out path of rail " + std::to_string(rail) +
                      " for " + std::to_string(b.gpus_down.size()) + " GPUs; jobs spanning trays hang on it");
      break;
    }
  }
  std::sort(b.gpus_down.begin(), b.gpus_down.end());
  std::sort(b.gpus_slowed.begin(), b.gpus_slowed.end());
  return b;
}

BlastRadius Blast(const Topology& topo, const Target& target) {
  if (target.port < 0) return Blast(topo, target.component);
  const int links = topo.model().nvlink_links_per_gpu;
  BlastRadius b;
  b.component = target.component;
  b.gpus_slowed = {target.component};
  b.slowed_bandwidth = links > 0 ? static_cast<double>(links - 1) / links : 0;
  b.why.push_back("nvlink port: its GPU keeps " + std::to_string(links - 1) + "/" + std::to_string(links) +
                  " of its NVLink bandwidth; collectives of its job run at that pace");
  return b;
}

std::vector<ComponentId> TraysOfGpus(const Topology& topo, const std::vector<ComponentId>& gpus) {
  std::vector<ComponentId> out;
  for (ComponentId g : gpus) out.push_back(topo.TrayOf(g));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<SinglePointOfFailure> FindSinglePointsOfFailure(const Topology& topo, size_t threshold) {
  std::vector<SinglePointOfFailure> out;
  const size_t domain = static_cast<size_t>(topo.model().compute_trays * topo.model().gpus_per_tray);
  for (const Component& c : topo.components()) {
    if (c.kind == Kind::kRack) continue;  // the domain itself, not a part of it
    BlastRadius b = Blast(topo, c.id);
    bool whole = b.whole_domain || (b.gpus_down.size() == domain && domain > 0);
    if (!whole && b.gpus_down.size() <= threshold) continue;
    out.push_back({c.id, b.gpus_down.size(), whole, b.why.empty() ? "" : b.why.front()});
  }
  std::stable_sort(out.begin(), out.end(), [](const SinglePointOfFailure& a, const SinglePointOfFailure& b) {
    return a.gpus_down > b.gpus_down;
  });
  return out;
}

}  // namespace rackchaos::cluster
