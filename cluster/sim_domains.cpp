// NVLink domains of the simulated cluster (cluster/sim_fabric.h): their health as NVIDIA's NMX reports
// it, their bandwidth, and what they do to the jobs on them.
//
// A domain is a rack, or two racks for GB200 NVL36x2 (its first rack keeps its health). Each GPU spreads
// its links over its own rack's S switch trays; in a two-rack domain tray k of one rack is cabled to
// tray k of the other, so losing either takes position k out of every cross-rack path: the domain
// counts lost positions. A rack of the domain without power takes its switch trays with it.
//
// Cost: a job refresh looks only at the racks whose domain is impaired (impaired_racks_), never at every GPU.
#include <algorithm>
#include <bit>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

const char* DomainHealthName(DomainHealth h) {
  switch (h) {
    case DomainHealth::kHealthy: return "HEALTHY";
    case DomainHealth::kDegraded: return "DEGRADED";
    case DomainHealth::kBandwidth: return "BANDWIDTH";
    case DomainHealth::kUnhealthy: return "UNHEALTHY";
  }
  return "UNKNOWN";
}

namespace {

// The racks of a rack's NVLink domain: [first, first + DomainRacks()).
size_t FirstRackOfDomain(const Topology& t, ComponentId rack) {
  return static_cast<size_t>(t.DomainOfRack(t.at(rack).rack) * t.DomainRacks());
}

}  // namespace

uint64_t Fabric::DomainSwitchesLost(ComponentId rack) const {
  uint64_t lost = 0;
  const size_t first = FirstRackOfDomain(topo_, rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k)
    lost |= rack_[k].failed | rack_[k].out | rack_[k].hot;
  return lost;
}

// Full-bandwidth mode: one lost switch tray and no partition of the domain runs. Adaptive mode: the
// fabric manager routes over the others, every GPU at (S - lost) / S. A lost compute tray only
// parks its own GPUs (DEGRADED).
DomainHealth Fabric::DomainHealthOf(ComponentId rack) const {
  const int total = topo_.model().switch_trays, lost = std::popcount(DomainSwitchesLost(rack));
  const size_t first = FirstRackOfDomain(topo_, rack), end = first + static_cast<size_t>(topo_.DomainRacks());
  for (size_t k = first; k < end; ++k)
    if (!nodes_.RackPowered(k)) return DomainHealth::kUnhealthy;
  if (lost > 0)
    return topo_.model().adaptive_bandwidth && lost < total ? DomainHealth::kBandwidth : DomainHealth::kUnhealthy;
  for (size_t k = first; k < end; ++k)
    for (ComponentId tray : topo_.ChildrenOf(topo_.racks()[k])) {
      if (topo_.at(tray).kind != Kind::kComputeTray) continue;
      for (ComponentId g : topo_.GpusOfTray(tray))
        if (!nodes_.GpuAlive(g)) return DomainHealth::kDegraded;
    }
  return DomainHealth::kHealthy;
}

// Each position carries 1 / S: a lost one none of it, a throttled one (sim_switch_thermal.cpp)
// switch_tray.throttle_bandwidth of it.
double Fabric::DomainBandwidth(ComponentId rack) const {
  DomainHealth h = DomainHealthOf(rack);
  if (h == DomainHealth::kUnhealthy) return 0;
  const RackModel& m = topo_.model();
  const int total = m.switch_trays;
  if (total <= 0) return 1;
  const double kept = static_cast<double>(total - std::popcount(DomainSwitchesLost(rack)));
  const int slow = std::popcount(DomainSwitchesThrottled(rack));
  return (slow ? kept - slow * (1 - m.switch_throttle_bandwidth) : kept) / total;
}

// The fault behind an impaired domain: a rack's power, else a lost switch tray's.
FaultId Fabric::DomainCause(ComponentId rack) const {
  const size_t first = FirstRackOfDomain(topo_, rack), end = first + static_cast<size_t>(topo_.DomainRacks());
  for (size_t k = first; k < end; ++k)
    if (!nodes_.RackPowered(k)) return nodes_.PowerCause(k);
  for (size_t k = first; k < end; ++k)
    if (rack_[k].failed | rack_[k].out | rack_[k].hot) return rack_[k].cause;
  if (const FaultId heat = DomainThrottleCause(rack); heat != kNoFault) return heat;
  return rack_[first].cause;
}

// Positions throttled anywhere in the domain and not lost (a lost position counts as lost only). As
// for losses, position k of one rack carries every cross-rack path through k.
uint64_t Fabric::DomainSwitchesThrottled(ComponentId rack) const {
  const size_t per = static_cast<size_t>(topo_.DomainRacks());
  const size_t first = static_cast<size_t>(topo_.DomainOfRack(topo_.at(rack).rack)) * per;
  uint64_t slow = 0;
  for (size_t k = first; k < first + per; ++k) slow |= rack_[k].slow;
  return slow & ~DomainSwitchesLost(rack);
}

FaultId Fabric::DomainThrottleCause(ComponentId rack) const {
  const uint64_t slow = DomainSwitchesThrottled(rack);
  if (!slow) return kNoFault;
  const size_t per = static_cast<size_t>(topo_.DomainRacks());
  const size_t first = static_cast<size_t>(topo_.DomainOfRack(topo_.at(rack).rack)) * per;
  const size_t trays = static_cast<size_t>(topo_.model().switch_trays);
  for (size_t k = first; k < first + per; ++k)
    for (size_t i = 0; i < trays; ++i)
      if ((rack_[k].slow & slow) >> i & 1) return thermal_.SwitchHeatFault(k, i);
  return kNoFault;
}

// Records the domain's health when it changes, on the domain's component (the rack itself when a
// domain is one rack). Ground truth: the healer sees only link states. Every rack of the domain is
// marked impaired, so the jobs on any of them see it; so is a domain with a throttled switch tray (NMX
// still says HEALTHY: every link is up).
void Fabric::UpdateDomainHealth(ComponentId rack) {
  DomainHealth h = DomainHealthOf(rack);
  const size_t first = FirstRackOfDomain(topo_, rack);
  bool impaired = h == DomainHealth::kBandwidth || h == DomainHealth::kUnhealthy || DomainSwitchesThrottled(rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k) {
    if (impaired)
      impaired_racks_.insert(k);
    else
      impaired_racks_.erase(k);
  }
  Switches& r = rack_[first];
  if (h == r.health) return;
  r.health = h;
  ctx_.Record(PhysicsChanged{topo_.DomainOf(rack), std::string("nvlink_domain_") + DomainHealthName(h),
                             DomainBandwidth(rack), kNoFault});
}

// Jobs on any rack of the domain (a domain's health reaches past the rack that changed).
std::set<JobId> Fabric::JobsInDomain(ComponentId rack) const {
  std::set<JobId> jobs;
  const size_t first = FirstRackOfDomain(topo_, rack);
  for (size_t k = first; k < first + static_cast<size_t>(topo_.DomainRacks()); ++k)
    for (ComponentId tray : topo_.ChildrenOf(topo_.racks()[k]))
      if (topo_.at(tray).kind == Kind::kComputeTray && seats_.JobOnTray(tray) != kNoJob) jobs.insert(seats_.JobOnTray(tray));
  return jobs;
}

void Fabric::DomainImpact(JobId id, bool& unhealthy, double& bandwidth, FaultId& cause) const {
  for (size_t k : impaired_racks_) {
    ComponentId rack = topo_.racks()[k];
    bool uses = false;
    for (ComponentId tray : topo_.ChildrenOf(rack))
      uses = uses || (topo_.at(tray).kind == Kind::kComputeTray && seats_.JobOnTray(tray) == id);
    if (!uses) continue;
    FaultId why = DomainCause(rack);
    double bw = DomainBandwidth(rack);
    if (bw <= 0) {
      unhealthy = true;
      cause = why;
      return;
    }
    if (bw < bandwidth - 1e-12) {
      bandwidth = bw;
      cause = why;
    }
  }
}

double Fabric::DomainsBandwidth(const std::vector<int>& domains, FaultId& cause) const {
  double bw = 1;
  for (size_t k : impaired_racks_) {
    if (!std::binary_search(domains.begin(), domains.end(), topo_.DomainOfRack(static_cast<int>(k)))) continue;
    const ComponentId rack = topo_.racks()[k];
    if (const double b = DomainBandwidth(rack); b < bw) {
      bw = b;
      cause = DomainCause(rack);
    }
  }
  return bw;
}

}  // namespace rackchaos::cluster
