// Regions of a cluster: each a component above its consecutive racks, with the region's object store
// and checkpoint store beneath it. Appended after every other part, so a plan's racks, trays, GPUs and
// fabric keep the ids they have without regions; only the racks' parent changes (to their region).
#include <algorithm>
#include <unordered_map>

#include "cluster/topology.h"

namespace rackchaos::cluster {

Status Topology::BuildRegions(const std::vector<RegionSpec>& regions) {
  int total = 0;
  const int per_domain = std::max(1, model_.domain_racks);
  for (const RegionSpec& r : regions) {
    if (r.racks < 1) return Status::Invalid("region '" + r.name + "' has no racks; give it at least 1");
    if (r.racks % per_domain != 0)  // an NVLink domain over two racks (NVL36x2) stays inside one region
      return Status::Invalid("region '" + r.name + "' has " + std::to_string(r.racks) + " racks, which splits an " +
                             model_.name + " NVLink domain of " + std::to_string(per_domain) +
                             " racks; give it a multiple of " + std::to_string(per_domain));
    total += r.racks;
  }
  if (total != static_cast<int>(racks_.size()))
    return Status::Invalid("the regions hold " + std::to_string(total) + " racks but the cluster has " +
                           std::to_string(racks_.size()));
  // The regions' names against every other name and each other, in one pass: Find() would build the
  // name index before the regions are in it (it is built once, lazily).
  std::unordered_map<std::string, const RegionSpec*> wanted;
  for (const RegionSpec& spec : regions)
    for (const std::string& name : {spec.name, spec.name + ".objstore", spec.name + ".ckptstore"})
      if (!wanted.emplace(name, &spec).second)
        return Status::Invalid("region name '" + spec.name + "' is already the name of a component or region (" +
                               name + "); choose another, e.g. east, west, eu-1");
  for (const Component& c : components_)
    if (auto hit = wanted.find(c.name); hit != wanted.end())
      return Status::Invalid("region name '" + hit->second->name + "' is already the name of a component or region (" +
                             c.name + "); choose another, e.g. east, west, eu-1");
  int first = 0;
  for (size_t k = 0; k < regions.size(); ++k) {
    const RegionSpec& spec = regions[k];
    const int index = static_cast<int>(k);
    Region r;
    r.id = Add(Kind::kRegion, spec.name, kNoComponent, first, index);
    r.object_store = Add(Kind::kObjectStore, spec.name + ".objstore", r.id, first, index);
    r.checkpoint_store = Add(Kind::kCheckpointStore, spec.name + ".ckptstore", r.id, first, index);
    r.first_rack = first;
    r.racks = spec.racks;
    for (int rack = first; rack < first + spec.racks; ++rack) {
      const ComponentId id = racks_[static_cast<size_t>(rack)];
      components_[id].parent = r.id;
      children_[r.id].push_back(id);
    }
    regions_.push_back(r);
    first += spec.racks;
  }
  return Status::Ok();
}

int Topology::RegionOfRack(int rack) const {
  // Few regions: a linear scan is cheaper than a table per rack.
  for (size_t k = 0; k < regions_.size(); ++k)
    if (rack < regions_[k].first_rack + regions_[k].racks) return static_cast<int>(k);
  return 0;
}

int Topology::RegionOf(ComponentId id) const {
  const Component& c = at(id);
  if (c.kind == Kind::kRegion || c.kind == Kind::kObjectStore || c.kind == Kind::kCheckpointStore) return c.index;
  if (c.kind == Kind::kRail || c.kind == Kind::kLeaf || c.kind == Kind::kSpine || c.kind == Kind::kSuperSpine) return -1;
  return RegionOfRack(c.rack);
}

}  // namespace rackchaos::cluster
