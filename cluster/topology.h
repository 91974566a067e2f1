// The component graph of a simulated cluster, built from a rack model: racks, compute trays with their
// GPUs, CPUs, NICs and coolant valve, NVLink switch trays, power shelves with PSUs, a CDU per rack, and
// the rail-optimized scale-out fabric: one rail per NIC position ("rail2": every tray's nic2), and per
// rail one leaf switch for each group of racks whose NICs fill its down ports ("rail2.leaf01").
// Built after those, so that no earlier id moves (BuildLateParts): the CDU's pumps ("r01.cdu.pump1"),
// each tray's BlueField DPUs ("r01.tray03.dpu0"), for a model whose NVLink domain spans racks
// (RackModel::domain_racks > 1, GB200 NVL36x2) one component per domain ("nvl01" = r01 + r02; with one
// rack per domain the rack is the domain and no such component exists), then the spine switches above
// the leaves ("spine01") and, with three fabric tiers, the super-spines ("superspine01"). A plan with
// regions adds, last of all, each region ("east": the parent of its racks) with its object store
// ("east.objstore") and checkpoint store ("east.ckptstore"); without regions none of these exist.
//
// Names follow the physical hierarchy ("r01.tray07.gpu2"); ids are dense indexes in build order, so the
// same model and counts always give the same ids. Immutable after Build(). NVLink ports are not
// components: a target may name one as "<gpu>.nvlinkN" (see Target).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/catalogue.h"
#include "core/ids.h"
#include "core/status.h"

namespace rackchaos::cluster {

enum class Kind { kRack, kComputeTray, kGpu, kCpu, kNic, kValve, kSwitchTray, kPowerShelf, kPsu, kCdu, kRail, kLeaf,
                  kPump, kDpu, kSpine, kSuperSpine, kNvlinkDomain, kRegion, kObjectStore, kCheckpointStore };
const char* KindName(Kind kind);  // "rack", "compute_tray", "gpu", ...

struct Component {
  ComponentId id = kNoComponent;
  Kind kind = Kind::kRack;
  std::string name;
  ComponentId parent = kNoComponent;
  int rack = 0;        // 0-based rack index
  int index = 0;       // position among its siblings of the same kind (gpu2 -> 2, tray07 -> 6)
  bool spare = false;  // compute trays kept free as hot spares
  // A GPU's PCI bus id is its model's for its index (Topology::PciOf): 573k components carry no string for it.
};

// A fault or action target: a component, or one NVLink port of a GPU.
struct Target {
  ComponentId component = kNoComponent;
  int port = -1;
};

// One region of a cluster: a name and how many consecutive racks (rack numbering runs on across regions).
struct RegionSpec {
  std::string name;
  int racks = 0;
};

// A built region: its component, its stores and its racks [first_rack, first_rack + racks).
struct Region {
  ComponentId id = kNoComponent, object_store = kNoComponent, checkpoint_store = kNoComponent;
  int first_rack = 0, racks = 0;
};

class Topology {
 public:
  // `regions` empty: one implicit region and no region components (every id as before regions existed).
  // Otherwise their racks must add up to `racks`, names be unique and not collide with a component's.
  static Result<Topology> Build(const RackModel& model, int racks, int spare_trays_per_rack,
                                const std::vector<RegionSpec>& regions = {});

  const RackModel& model() const { return model_; }
  size_t size() const { return components_.size(); }
  const Component& at(ComponentId id) const { return components_[id]; }
  const std::vector<Component>& components() const { return components_; }
  std::optional<ComponentId> Find(std::string_view name) const;
  // "r01.tray03.gpu2" or "r01.tray03.gpu2.nvlink5"; NotFound otherwise.
  Result<Target> ResolveTarget(std::string_view name) const;
  std::string TargetName(const Target& t) const;

  const std::vector<ComponentId>& racks() const { return racks_; }
  const std::vector<ComponentId>& trays() const { return trays_; }
  const std::vector<ComponentId>& gpus() const { return gpus_; }
  const std::vector<ComponentId>& ChildrenOf(ComponentId id) const { return children_[id]; }
  std::span<const ComponentId> GpusOfTray(ComponentId tray) const {
    if (tray >= components_.size() || TraySlot(tray) == kNoSlot) return {};
    const size_t per = static_cast<size_t>(model_.gpus_per_tray);
    return std::span<const ComponentId>(tray_gpus_).subspan(TraySlot(tray) * per, per);
  }
  // The GPUs on the compute trays among `ids` (model().gpus_per_tray each; any other id, or one out of
  // range, counts none): GpusOfTray(id).size() summed, reading one byte per id. Scoring sums lists of
  // 25,000 trays (a 100k-GPU job's placement) for every fault that stopped the job.
  size_t GpusOnTrays(std::span<const ComponentId> ids) const {
    size_t trays = 0;
    for (ComponentId id : ids) trays += id < compute_tray_.size() ? compute_tray_[id] : 0;
    return trays * static_cast<size_t>(model_.gpus_per_tray);
  }
  // The compute trays under `id` (spare trays included), in id order: every tray of a region, a rack or
  // an NVLink domain component (all of its racks); a tray for itself and for each part inside it; none
  // for any other part (a CDU, switch tray, shelf, the fabric, a store). O(1): a view of trays().
  std::span<const ComponentId> TraysUnder(ComponentId id) const;
  // Its compute tray; kNoComponent if none (also for kNoComponent or an id out of range).
  ComponentId TrayOf(ComponentId id) const { return id < tray_of_.size() ? tray_of_[id] : kNoComponent; }
  // Dense positions: a tray's index in trays(), a GPU's in gpus(); kNoSlot for other kinds. O(1).
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  uint32_t TraySlot(ComponentId tray) const { return tray_slot_[tray]; }
  uint32_t GpuSlot(ComponentId gpu) const { return gpu_slot_[gpu]; }
  ComponentId RackOf(ComponentId id) const;
  ComponentId ValveOfTray(ComponentId tray) const;
  // By tray slot (an index of trays(), in range): its valve and its GPUs, without the lookup by id that
  // misses the cache when a fleet's trays are polled in turn.
  ComponentId ValveAtSlot(size_t slot) const { return tray_valve_[slot]; }
  std::span<const ComponentId> GpusAtSlot(size_t slot) const {
    const size_t per = static_cast<size_t>(model_.gpus_per_tray);
    return std::span<const ComponentId>(tray_gpus_).subspan(slot * per, per);
  }
  ComponentId NicOfGpu(ComponentId gpu) const;
  ComponentId CduOfRack(ComponentId rack) const;
  // NVLink domains: racks [d * DomainRacks(), (d + 1) * DomainRacks()) form domain d. DomainOf gives the
  // component standing for the domain of any part inside a rack: the rack itself with one rack per
  // domain, else the kNvlinkDomain component (kNoComponent for parts outside racks: fabric, spines).
  int DomainRacks() const { return model_.domain_racks; }
  int DomainOfRack(int rack) const { return rack / model_.domain_racks; }
  int Domains() const { return static_cast<int>(racks_.size()) / model_.domain_racks; }
  ComponentId DomainOf(ComponentId id) const;
  // The GPUs of the trays under `id` (TraysUnder), in id order.
  std::vector<ComponentId> GpusUnder(ComponentId id) const;
  // The GPUs of domain d, in id order.
  std::vector<ComponentId> GpusOfDomain(int domain) const;
  // The GPUs of the 0-based rack's compute trays (spare trays included), in id order.
  std::vector<ComponentId> GpusOfRack(int rack) const;
  // The scale-out fabric. A leaf's down ports (kLeafDownPorts) take one NIC per tray of a rail from
  // RacksPerLeaf() consecutive racks. LeafOfNic: kNoComponent for a NIC past the GPUs (none on NVL72).
  static constexpr int kLeafDownPorts = 72;  // Quantum-X800: 144 ports, half down in a 2-tier fat tree
  int RacksPerLeaf() const { return std::max(1, kLeafDownPorts / std::max(1, model_.compute_trays)); }
  ComponentId LeafOfNic(ComponentId nic) const;
  // The NICs a leaf or a rail connects, in id order.
  std::vector<ComponentId> NicsOf(ComponentId leaf_or_rail) const;
  // The spine layer of a two-tier non-blocking fat tree: every leaf sends half its ports (kLeafDownPorts)
  // up, spread evenly over every spine, and a spine has 2 x kLeafDownPorts ports down, so there are
  // ceil(leaves / 2) spines. Traffic between GPUs on different leaf groups crosses a spine (ECMP over
  // all of them); rail-aligned traffic inside one leaf group never does.
  const std::vector<ComponentId>& spines() const { return spines_; }
  int LeafGroups() const { return (static_cast<int>(racks_.size()) + RacksPerLeaf() - 1) / RacksPerLeaf(); }
  int LeafGroupOfRack(int rack) const { return rack / RacksPerLeaf(); }
  // The optional third tier (model().fabric_tiers == 3): a pod is a two-tier block of kLeafDownPorts
  // leaves (every rail of GroupsPerPod() leaf groups) with as many spines, each sending half its ports up
  // to the super-spines (ceil(spines / 2) of them). Traffic between pods crosses a super-spine; a spine
  // carries only its own pod's traffic. With two tiers there is one pod and no super-spine.
  const std::vector<ComponentId>& super_spines() const { return super_spines_; }
  int GroupsPerPod() const;
  int PodOfRack(int rack) const { return LeafGroupOfRack(rack) / GroupsPerPod(); }
  int Pods() const { return (LeafGroups() + GroupsPerPod() - 1) / GroupsPerPod(); }
  int PodOfSpine(ComponentId spine) const { return spine_pod_[static_cast<size_t>(at(spine).index)]; }
  int SpinesInPod(int pod) const { return spines_in_pod_[static_cast<size_t>(pod)]; }
  // The CDU's pumps of a rack (empty when the model has none).
  std::span<const ComponentId> PumpsOfRack(ComponentId rack) const;
  // The DPU in front of a NIC (kNoComponent when the model has none).
  ComponentId DpuOfNic(ComponentId nic) const;
  // The NICs behind a DPU, in index order.
  std::vector<ComponentId> NicsOfDpu(ComponentId dpu) const;
  std::optional<ComponentId> GpuByPci(ComponentId tray, std::string_view pci) const;
  // A GPU's PCI bus id as the driver prints it ("0000:41:00"), the model's for its index; "" for other kinds.
  const std::string& PciOf(ComponentId id) const;

  // Regions (topology_regions.cpp): empty for a plan without them. RegionOfRack: the index into
  // regions() of a 0-based rack, 0 when there are none; RegionOf: of any component, -1 for the fabric.
  const std::vector<Region>& regions() const { return regions_; }
  int RegionOfRack(int rack) const;
  int RegionOf(ComponentId id) const;

  // GPUs that lose service if `id` fails (through containment and dependencies), sorted.
  std::vector<ComponentId> GpusServedBy(ComponentId id) const;
  // Parent chain from `id` (exclusive) to its rack (inclusive).
  std::vector<ComponentId> Ancestors(ComponentId id) const;

 private:
  ComponentId Add(Kind kind, std::string name, ComponentId parent, int rack, int index);
  void BuildLateParts();
  Status BuildRegions(const std::vector<RegionSpec>& regions);

  RackModel model_;
  std::vector<Component> components_;
  std::vector<std::vector<ComponentId>> children_;
  // Names to ids, built on the first Find: the simulator never looks a name up (a plan's targets and
  // the real-mode paths do), and 500,000 hashed names were a tenth of a 1,778-rack run. Copies share
  // it (they have the same components); call_once makes the first Find safe from any thread.
  struct NameIndex {
    std::once_flag built;
    std::unordered_map<std::string, ComponentId> ids;
  };
  std::shared_ptr<NameIndex> by_name_ = std::make_shared<NameIndex>();
  std::vector<ComponentId> racks_, trays_, gpus_;
  std::vector<ComponentId> tray_gpus_;  // per tray (by tray index in trays_) its GPUs, contiguous
  std::vector<ComponentId> tray_valve_, gpu_nic_, rack_cdu_;
  std::vector<ComponentId> rails_, leaves_;  // leaves_[group * rails + rail]
  std::vector<ComponentId> pumps_, dpus_, spines_, super_spines_, domains_;
  std::vector<int> spine_pod_, spines_in_pod_;  // per spine (by index) its pod; per pod its spines  // pumps_[rack * pumps + p], dpus_[tray slot * dpus + d]
  // Per component: TraySlot and GpuSlot. Arrays of their own, not a field of Component: the simulator
  // looks slots up on every event, and 4 bytes per component stay in cache where Component does not.
  std::vector<uint32_t> tray_slot_, gpu_slot_;
  std::vector<uint8_t> compute_tray_;  // per component: 1 for a compute tray (GpusOnTrays), a byte for the cache
  std::vector<ComponentId> tray_of_;    // per component: TrayOf, resolved once at build
  std::vector<Region> regions_;
};

}  // namespace rackchaos::cluster
