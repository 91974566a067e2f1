// Static analysis of the topology's dependency graph: which GPUs lose service, and which keep running
// at reduced bandwidth, if one component fails or is taken out for maintenance - directly (what it
// contains) and through what depends on it (cooling, power with its redundancy, the NVLink domain in
// the rack's mode) - and which components are single points of failure.
//
// The rules, per component kind (an NVLink domain is a rack, or a pair of racks for GB200 NVL36x2):
//   gpu          itself
//   nic          its GPU's scale-out path (one NIC per GPU rail): the GPU leaves every multi-tray job
//   cpu, valve   the tray: the OS runs on its CPUs; a closed valve throttles then shuts its GPUs down
//   compute_tray its GPUs; the domain is DEGRADED, the other GPUs keep full bandwidth
//   switch_tray  adaptive mode: every GPU of the domain at (S-1)/S NVLink bandwidth (BANDWIDTH);
//                full-bandwidth mode: the domain is UNHEALTHY, all its GPUs out of service; in an NVL36x2
//                pair that is 72 GPUs over both racks (S = 9 switch trays per rack)
//   cdu          every GPU of its rack (a whole domain when the domain is one rack; in a pair the domain
//                goes DEGRADED and the other rack keeps full bandwidth)
//   rack, nvlink_domain  every GPU of the domain (a rack of a pair takes half the switch trays with it)
//   leaf, rail   the GPUs behind its NICs lose scale-out: they leave every multi-tray job
//   power_shelf, psu  every GPU of the domain when the remaining PSU capacity is below the rack's
//                GPU TDP sum (the rack's switch trays lose power too) (GPU power only: CPUs, switches and pumps are not in the catalogue), else none
//   pump         none while the CDU keeps pumps_needed running (N+1); beyond that the rack's flow drops
//                and every GPU of the rack heats (as the CDU)
//   dpu          the GPUs behind the NICs it fronts lose scale-out (and storage): as a NIC loss each
//   spine        with two or more leaf groups, every GPU keeps (S-1)/S of its cross-leaf scale-out
//                bandwidth (ECMP re-routes over the other spines): only jobs whose DP or PP groups span
//                leaf groups slow;
//                with one leaf group nothing crosses a spine; a pod's only spine takes all of that
//                bandwidth (those jobs hang), no GPU's service: spof lists it by GPUs cut off.
//                With three tiers a spine carries its pod's traffic only (its pod's GPUs, 1/S_pod)
//   super_spine  three tiers, two or more pods: jobs whose DP or PP groups span pods keep (SS-1)/SS of
//                their scale-out
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cluster/topology.h"

namespace rackchaos::cluster {

struct BlastRadius {
  ComponentId component = kNoComponent;
  std::vector<ComponentId> gpus_down;    // lose service, sorted
  std::vector<ComponentId> gpus_slowed;  // keep service at reduced NVLink bandwidth, sorted
  double slowed_bandwidth = 1;           // fraction of `slowed_link` bandwidth the slowed GPUs keep
  const char* slowed_link = "NVLink";    // "NVLink", or "cross-leaf scale-out" (spines)
  bool cross_leaf_only = false;          // the slowing touches only traffic between leaf groups
  bool cross_pod_only = false;           // ... only traffic between pods (a super-spine)
  bool whole_domain = false;             // every GPU of an NVLink domain loses service
  std::vector<std::string> why;          // the dependencies followed, one line each
};

BlastRadius Blast(const Topology& topo, ComponentId component);
// Also for one NVLink port ("r01.tray03.gpu2.nvlink5"): its GPU keeps (L-1)/L of its NVLink bandwidth.
BlastRadius Blast(const Topology& topo, const Target& target);

// The compute trays holding any of `gpus` (sorted ids), sorted.
std::vector<ComponentId> TraysOfGpus(const Topology& topo, const std::vector<ComponentId>& gpus);

struct SinglePointOfFailure {
  ComponentId component = kNoComponent;
  size_t gpus_down = 0;     // lose service
  size_t gpus_cut_off = 0;  // keep service but lose all of a link's bandwidth (a pod's only spine: cross-leaf)
  bool whole_domain = false;
  std::string why;
};

// Components whose loss takes a whole NVLink domain or more than `threshold` GPUs out of service, or
// cuts more than `threshold` GPUs off all of a link's bandwidth (a pod's only spine, the only
// super-spine: only the jobs whose DP or PP groups cross it hang); most GPUs out of service first, then
// most cut off, then by id. A component counts as a whole domain when its blast says so or its GPUs out
// of service are exactly one domain's (not merely as many GPUs spread over several domains).
std::vector<SinglePointOfFailure> FindSinglePointsOfFailure(const Topology& topo, size_t threshold);

}  // namespace rackchaos::cluster
