#include "cluster/dependency.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace rackchaos::cluster {
namespace {

std::string Kw(double kw) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f kW", kw);
  return buf;
}

// Every GPU of the NVLink domain `any` sits in (one rack, or the pair of an NVL36x2).
std::vector<ComponentId> DomainGpus(const Topology& topo, ComponentId any) {
  return topo.GpusOfDomain(topo.DomainOfRack(topo.at(any).rack));
}

std::string DomainName(const Topology& topo, ComponentId any) { return topo.at(topo.DomainOf(any)).name; }

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
  b.gpus_down = DomainGpus(topo, c);  // its switch trays go dark too: the domain is UNHEALTHY
  b.whole_domain = true;
  b.why.push_back("power: " + rack + " keeps " + Kw(left) + " of PSU capacity, below " + Kw(load) +
                  " of GPU TDP: the trays it feeds lose power" +
                  (topo.DomainRacks() > 1 ? ", its switch trays too: NVLink domain " + DomainName(topo, c) +
                                                " UNHEALTHY"
                                          : ""));
}

// Pumps: the CDU keeps full flow while pumps_needed of its pumps run.
void PumpLoss(const Topology& topo, ComponentId pump, BlastRadius& b) {
  const RackModel& m = topo.model();
  const std::string cdu = topo.at(topo.at(pump).parent).name;
  if (m.cdu_pumps - 1 >= m.cdu_pumps_needed) {
    b.why.push_back("redundant: " + cdu + " keeps " + std::to_string(m.cdu_pumps - 1) + " of " +
                    std::to_string(m.cdu_pumps) + " pumps, " + std::to_string(m.cdu_pumps_needed) +
                    " needed for full flow");
    return;
  }
  b.gpus_down = topo.GpusOfRack(topo.at(pump).rack);
  b.whole_domain = topo.DomainRacks() == 1;
  b.why.push_back("pump: " + cdu + " has no spare pump; the rack's coolant flow drops and all its GPUs heat");
}

// Spines: ECMP spreads cross-leaf traffic over all of them (with three tiers, over its pod's); one
// lost, the others carry it at (S-1)/S.
void SpineLoss(const Topology& topo, ComponentId spine, BlastRadius& b) {
  const int pod = topo.PodOfSpine(spine), spines = topo.SpinesInPod(pod);
  const int first = pod * topo.GroupsPerPod(), groups = std::min(topo.GroupsPerPod(), topo.LeafGroups() - first);
  if (groups < 2 && topo.Pods() < 2) {
    b.why.push_back("spine: one leaf group: rail-aligned traffic never crosses a spine");
    return;
  }
  std::vector<ComponentId> pod_gpus;
  for (ComponentId g : topo.gpus())
    if (topo.PodOfRack(topo.at(g).rack) == pod) pod_gpus.push_back(g);
  // The pod's only spine takes all of its cross-leaf bandwidth (0/1), not a GPU's service: jobs inside
  // one leaf group run on.
  b.gpus_slowed = std::move(pod_gpus);
  b.slowed_bandwidth = static_cast<double>(spines - 1) / spines;
  b.slowed_link = "cross-leaf scale-out";
  b.cross_leaf_only = true;
  b.why.push_back(spines <= 1 ? "spine: the only path between its leaf groups; jobs whose DP or PP groups span them "
                                "hang, every GPU keeps its service"
                              : "spine: traffic between leaf groups re-routes over the other " +
                                    std::to_string(spines - 1) + " spines: jobs whose DP or PP groups span leaf "
                                    "groups keep " + std::to_string(spines - 1) + "/" + std::to_string(spines) +
                                    " of their scale-out bandwidth");
}

}  // namespace

BlastRadius Blast(const Topology& topo, ComponentId component) {
  const Component& c = topo.at(component);
  const RackModel& m = topo.model();
  BlastRadius b;
  b.component = component;
  std::string rack = topo.at(topo.RackOf(component)).name;
  const std::string domain = topo.DomainOf(component) == kNoComponent ? rack : DomainName(topo, component);
  auto tray_gpus = [&](const std::string& why) {
    auto gpus = topo.GpusOfTray(topo.TrayOf(component));
    b.gpus_down.assign(gpus.begin(), gpus.end());
    b.why.push_back(why);
  };
  switch (c.kind) {
    case Kind::kGpu:
      b.gpus_down = {component};
      b.why.push_back("gpu: itself; NVLink domain " + domain + " DEGRADED, its other GPUs at full bandwidth");
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
      tray_gpus("compute_tray: its GPUs parked; NVLink domain " + domain + " DEGRADED, the others at full bandwidth");
      break;
    case Kind::kSwitchTray: {
      // Each GPU spreads its links over its own rack's S switch trays; in a two-rack domain the tray's
      // cross-rack cables go with it, so every GPU of the domain loses that position (sim_domains.cpp).
      const std::string span = topo.DomainRacks() > 1 ? " (" + std::to_string(topo.DomainRacks()) + " racks)" : "";
      if (m.adaptive_bandwidth) {
        b.gpus_slowed = DomainGpus(topo, component);
        b.slowed_bandwidth = m.switch_trays > 0 ? static_cast<double>(m.switch_trays - 1) / m.switch_trays : 0;
        b.why.push_back("switch_tray: NVLink domain " + domain + span + " in adaptive mode goes BANDWIDTH: every GPU at " +
                        std::to_string(m.switch_trays - 1) + "/" + std::to_string(m.switch_trays) + " NVLink bandwidth");
      } else {
        b.gpus_down = DomainGpus(topo, component);
        b.whole_domain = true;
        b.why.push_back("switch_tray: NVLink domain " + domain + span +
                        " in full-bandwidth mode goes UNHEALTHY: no partition runs");
      }
      break;
    }
    case Kind::kCdu:
      b.gpus_down = topo.GpusOfRack(topo.at(component).rack);
      b.whole_domain = topo.DomainRacks() == 1;
      b.why.push_back("cdu: cools every tray of " + rack + "; all its GPUs heat to shutdown" +
                      (topo.DomainRacks() > 1 ? "; NVLink domain " + domain +
                                                    " DEGRADED, the other rack's GPUs at full bandwidth (switch-tray "
                                                    "temperatures are not modelled)"
                                              : ""));
      break;
    case Kind::kRack:
      b.gpus_down = DomainGpus(topo, component);
      b.whole_domain = true;
      b.why.push_back(topo.DomainRacks() > 1 ? "rack: holds half the switch trays of NVLink domain " + domain +
                                                   ": the domain is UNHEALTHY"
                                             : "rack: contains the whole NVLink domain");
      break;
    case Kind::kNvlinkDomain:
      b.gpus_down = DomainGpus(topo, component);
      b.whole_domain = true;
      b.why.push_back("nvlink_domain: " + std::to_string(b.gpus_down.size()) + " GPUs over " +
                      std::to_string(topo.DomainRacks()) + " racks share one NVLink partition");
      break;
    case Kind::kPowerShelf: PowerLoss(topo, component, m.psus_per_shelf * m.psu_kw, b); break;
    case Kind::kPsu: PowerLoss(topo, component, m.psu_kw, b); break;
    case Kind::kPump: PumpLoss(topo, component, b); break;
    case Kind::kSpine: SpineLoss(topo, component, b); break;
    case Kind::kSuperSpine: {
      const int ss = static_cast<int>(topo.super_spines().size());
      if (topo.Pods() < 2) {
        b.why.push_back("super_spine: one pod: no traffic crosses a super-spine");
        break;
      }
      b.gpus_slowed = topo.gpus();  // the only one: all cross-pod bandwidth (0/1), no GPU's service
      b.slowed_bandwidth = static_cast<double>(ss - 1) / ss;
      b.slowed_link = "cross-pod scale-out";
      b.cross_pod_only = true;
      b.why.push_back(ss < 2 ? "super_spine: the only path between pods; jobs whose DP or PP groups span them hang, "
                               "every GPU keeps its service"
                             : "super_spine: traffic between pods re-routes over the other " + std::to_string(ss - 1) +
                                   " super-spines: jobs whose DP or PP groups span pods keep " +
                                   std::to_string(ss - 1) + "/" + std::to_string(ss) + " of their scale-out bandwidth");
      break;
    }
    case Kind::kDpu:
      b.gpus_down = topo.GpusServedBy(component);
      b.why.push_back("dpu: fronts " + std::to_string(topo.NicsOfDpu(component).size()) +
                      " NICs of its tray: their GPUs lose scale-out and storage; jobs spanning trays hang on it");
      break;
    case Kind::kRegion:
      b.gpus_down = topo.GpusServedBy(component);
      b.whole_domain = true;
      b.why.push_back("region: its " + std::to_string(topo.regions()[static_cast<size_t>(c.index)].racks) +
                      " racks go down together (a site outage): every NVLink domain in it");
      break;
    case Kind::kObjectStore:
      b.why.push_back("object_store: read by its region's jobs with input_from: object_store and by its trays whose "
                      "NVMe cache is lost; those jobs stall on data (hang while it has failed), no GPU loses service");
      break;
    case Kind::kCheckpointStore:
      b.why.push_back("checkpoint_store: acknowledges its region's checkpoint writes; while it has failed its jobs "
                      "train on without a new checkpoint (rework grows), no GPU loses service");
      break;
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
  const size_t domain = static_cast<size_t>(topo.model().domain_gpus());
  // Exactly the GPUs of one domain (sorted ids; a domain's GPUs are contiguous): a leaf whose 72 GPUs sit
  // in 4 racks is not a whole domain.
  auto one_domain = [&](const std::vector<ComponentId>& gpus) {
    return domain > 0 && gpus.size() == domain &&
           topo.DomainOfRack(topo.at(gpus.front()).rack) == topo.DomainOfRack(topo.at(gpus.back()).rack);
  };
  std::map<int, BlastRadius> spine;  // the spines of a pod are alike: one blast per pod (890 at 1,778 racks)
  for (const Component& c : topo.components()) {
    if (c.kind == Kind::kRack || c.kind == Kind::kNvlinkDomain) continue;  // the domain (or half), not a part
    if (c.kind == Kind::kSpine && !spine.count(topo.PodOfSpine(c.id))) spine[topo.PodOfSpine(c.id)] = Blast(topo, c.id);
    BlastRadius own;
    if (c.kind != Kind::kSpine) own = Blast(topo, c.id);
    const BlastRadius& b = c.kind == Kind::kSpine ? spine[topo.PodOfSpine(c.id)] : own;
    bool whole = b.whole_domain || one_domain(b.gpus_down);
    const size_t cut_off = b.slowed_bandwidth <= 0 ? b.gpus_slowed.size() : 0;
    if (!whole && b.gpus_down.size() <= threshold && cut_off <= threshold) continue;
    out.push_back({c.id, b.gpus_down.size(), cut_off, whole, b.why.empty() ? "" : b.why.front()});
  }
  std::stable_sort(out.begin(), out.end(), [](const SinglePointOfFailure& a, const SinglePointOfFailure& b) {
    return a.gpus_down != b.gpus_down ? a.gpus_down > b.gpus_down : a.gpus_cut_off > b.gpus_cut_off;
  });
  return out;
}

}  // namespace rackchaos::cluster
