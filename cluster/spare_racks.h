// Which racks are spare racks (plan key spares.racks): the one rule the validator (GPUs jobs may ask for)
// and the simulator (trays it keeps free, cluster/placement.h, TrayPool) both read.
//
// Without per-region counts: the cluster's last `spare_racks` racks. With them (one per region, in region
// order): each region's last region_spare_racks[k] racks. Counts larger than a range are clamped to it.
#pragma once

#include <algorithm>
#include <vector>

#include "cluster/topology.h"

namespace rackchaos::cluster {

struct RackRange {
  int first = 0, end = 0;  // racks [first, end)
};

// The spare racks of region k (k = 0 and the whole cluster when there are no per-region counts).
inline RackRange SpareRacksOf(const Topology& topo, int spare_racks, const std::vector<int>& region_spare_racks,
                              size_t k) {
  const int racks = static_cast<int>(topo.racks().size());
  if (topo.regions().empty() || region_spare_racks.empty()) return {racks - std::clamp(spare_racks, 0, racks), racks};
  if (k >= topo.regions().size() || k >= region_spare_racks.size()) return {};
  const Region& r = topo.regions()[k];
  return {r.first_rack + r.racks - std::clamp(region_spare_racks[k], 0, r.racks), r.first_rack + r.racks};
}

inline std::vector<RackRange> SpareRackRanges(const Topology& topo, int spare_racks,
                                              const std::vector<int>& region_spare_racks) {
  const size_t n = topo.regions().empty() || region_spare_racks.empty() ? 1 : topo.regions().size();
  std::vector<RackRange> out;
  for (size_t k = 0; k < n; ++k) out.push_back(SpareRacksOf(topo, spare_racks, region_spare_racks, k));
  return out;
}

inline bool IsSpareRack(const Topology& topo, int spare_racks, const std::vector<int>& region_spare_racks, int rack) {
  const bool per_region = !topo.regions().empty() && !region_spare_racks.empty();
  const RackRange r = SpareRacksOf(topo, spare_racks, region_spare_racks,
                                   per_region ? static_cast<size_t>(topo.RegionOfRack(rack)) : 0);
  return rack >= r.first && rack < r.end;
}

}  // namespace rackchaos::cluster
