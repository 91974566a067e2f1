#include "cluster/topology.h"

#include <algorithm>
#include <charconv>

namespace rackchaos::cluster {
namespace {

int Digits(int n) {
  int d = 1;
  while (n >= 10) { n /= 10; ++d; }
  return d;
}

// "<parent>.<label><value>", the value zero-padded to `width` digits; no parent: "<label><value>". Built
// in one allocation of the exact size (none up to 15 characters): a 1,778-rack build makes 573,000
// names, and building each from temporaries ("r0001" + ".tray07" + ".gpu" + "2") cost more than keeping it.
std::string Name(std::string_view parent, std::string_view label, int value, int width = 1) {
  char digits[16];
  const int n = Digits(value);
  const size_t pad = static_cast<size_t>(std::max(0, width - n));
  std::string out;
  out.reserve(parent.size() + (parent.empty() ? 0 : 1) + label.size() + pad + static_cast<size_t>(n));
  if (!parent.empty()) out.append(parent).push_back('.');
  out.append(label).append(pad, '0');
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  return out;
}

std::string Padded(const char* prefix, int value, int width) { return Name({}, prefix, value, width); }

// "<parent>.<label>": one allocation of the exact size.
std::string Name(std::string_view parent, std::string_view label) {
  std::string out;
  out.reserve(parent.size() + 1 + label.size());
  out.append(parent).push_back('.');
  out.append(label);
  return out;
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kRack: return "rack";
    case Kind::kComputeTray: return "compute_tray";
    case Kind::kGpu: return "gpu";
    case Kind::kCpu: return "cpu";
    case Kind::kNic: return "nic";
    case Kind::kValve: return "valve";
    case Kind::kSwitchTray: return "switch_tray";
    case Kind::kPowerShelf: return "power_shelf";
    case Kind::kPsu: return "psu";
    case Kind::kCdu: return "cdu";
    case Kind::kRail: return "rail";
    case Kind::kLeaf: return "leaf";
    case Kind::kPump: return "pump";
    case Kind::kDpu: return "dpu";
    case Kind::kSpine: return "spine";
    case Kind::kSuperSpine: return "super_spine";
    case Kind::kNvlinkDomain: return "nvlink_domain";
    case Kind::kRegion: return "region";
    case Kind::kObjectStore: return "object_store";
    case Kind::kCheckpointStore: return "checkpoint_store";
  }
  return "unknown";
}

ComponentId Topology::Add(Kind kind, std::string name, ComponentId parent, int rack, int index) {
  auto id = static_cast<ComponentId>(components_.size());
  components_.push_back({id, kind, std::move(name), parent, rack, index, false});
  children_.emplace_back();
  tray_slot_.push_back(kNoSlot);
  gpu_slot_.push_back(kNoSlot);
  tray_of_.push_back(kind == Kind::kComputeTray ? id : parent == kNoComponent ? kNoComponent : tray_of_[parent]);
  if (parent != kNoComponent) children_[parent].push_back(id);
  return id;
}

Result<Topology> Topology::Build(const RackModel& model, int racks, int spare_trays_per_rack,
                                 const std::vector<RegionSpec>& regions) {
  if (racks < 1) return Status::Invalid("a cluster needs at least one rack");
  if (spare_trays_per_rack < 0 || spare_trays_per_rack >= model.compute_trays)
    return Status::Invalid("spare_trays must be between 0 and " + std::to_string(model.compute_trays - 1) +
                           " for " + model.name);
  if (racks % model.domain_racks != 0)
    return Status::Invalid("racks " + std::to_string(racks) + " is not a multiple of " +
                           std::to_string(model.domain_racks) + ": a " + model.name + " NVLink domain spans " +
                           std::to_string(model.domain_racks) + " racks (e.g. racks: " +
                           std::to_string((racks / model.domain_racks + 1) * model.domain_racks) + ")");
  Topology t;
  t.model_ = model;
  const int rack_width = std::max(2, Digits(racks));
  const int tray_width = std::max(2, Digits(model.compute_trays));
  // Every rack has the same parts: size the tables for them once (1,778 racks: 500,000 components).
  const size_t per_rack =
      2 + static_cast<size_t>(model.power_shelves) * (1 + model.psus_per_shelf) + model.switch_trays + model.cdu_pumps +
      static_cast<size_t>(model.compute_trays) *
          (2 + model.cpus_per_tray + model.gpus_per_tray + model.nics_per_tray + model.dpus_per_tray);
  // Then the parts outside racks, at most: the rails, their leaves, as many spines (ceil(leaves / 2)
  // with two tiers) and half as many super-spines, the NVLink domains, and 3 components per region. A
  // table that outgrew its reserve would move all of them (70 MB at 1,778 racks) with the last few.
  const size_t rails = static_cast<size_t>(model.nics_per_tray);
  const size_t leaves = rails * static_cast<size_t>((racks + t.RacksPerLeaf() - 1) / t.RacksPerLeaf());
  const size_t outside = rails + leaves + leaves + (leaves + 1) / 2 +
                         static_cast<size_t>(racks / std::max(1, model.domain_racks)) + 3 * regions.size();
  const size_t total = per_rack * static_cast<size_t>(racks) + outside;
  for (auto* v : {&t.tray_slot_, &t.gpu_slot_, &t.tray_of_}) v->reserve(total);
  t.components_.reserve(total);
  t.children_.reserve(total);
  const size_t rack_count = static_cast<size_t>(racks), trays = rack_count * static_cast<size_t>(model.compute_trays);
  const size_t gpus = trays * static_cast<size_t>(model.gpus_per_tray);
  for (auto* v : {&t.racks_, &t.rack_cdu_}) v->reserve(rack_count);
  for (auto* v : {&t.gpus_, &t.tray_gpus_, &t.gpu_nic_}) v->reserve(gpus);
  for (auto* v : {&t.trays_, &t.tray_valve_}) v->reserve(trays);
  t.pumps_.reserve(rack_count * static_cast<size_t>(model.cdu_pumps));
  t.dpus_.reserve(trays * static_cast<size_t>(model.dpus_per_tray));
  for (int r = 0; r < racks; ++r) {
    const std::string rname = Padded("r", r + 1, rack_width);
    ComponentId rack = t.Add(Kind::kRack, rname, kNoComponent, r, r);
    t.children_[rack].reserve(1 + static_cast<size_t>(model.power_shelves + model.switch_trays + model.compute_trays));
    t.racks_.push_back(rack);
    t.rack_cdu_.push_back(t.Add(Kind::kCdu, Name(rname, "cdu"), rack, r, 0));
    for (int s = 0; s < model.power_shelves; ++s) {
      ComponentId shelf = t.Add(Kind::kPowerShelf, Name(rname, "shelf", s + 1), rack, r, s);
      for (int p = 0; p < model.psus_per_shelf; ++p)
        t.Add(Kind::kPsu, Name(t.components_[shelf].name, "psu", p + 1), shelf, r, p);
    }
    for (int s = 0; s < model.switch_trays; ++s)
      t.Add(Kind::kSwitchTray, Name(rname, "switch", s + 1), rack, r, s);
    for (int k = 0; k < model.compute_trays; ++k) {
      const std::string tname = Name(rname, "tray", k + 1, tray_width);
      ComponentId tray = t.Add(Kind::kComputeTray, tname, rack, r, k);
      t.children_[tray].reserve(1 + static_cast<size_t>(model.cpus_per_tray + model.gpus_per_tray +
                                                        model.nics_per_tray + model.dpus_per_tray));
      t.components_[tray].spare = k >= model.compute_trays - spare_trays_per_rack;
      t.tray_slot_[tray] = static_cast<uint32_t>(t.trays_.size());
      t.trays_.push_back(tray);
      t.tray_valve_.push_back(t.Add(Kind::kValve, Name(tname, "valve"), tray, r, 0));
      for (int c = 0; c < model.cpus_per_tray; ++c) t.Add(Kind::kCpu, Name(tname, "cpu", c), tray, r, c);
      for (int g = 0; g < model.gpus_per_tray; ++g) {
        ComponentId gpu = t.Add(Kind::kGpu, Name(tname, "gpu", g), tray, r, g);
        t.gpu_slot_[gpu] = static_cast<uint32_t>(t.gpus_.size());
        t.gpus_.push_back(gpu);
        t.tray_gpus_.push_back(gpu);
      }
      for (int n = 0; n < model.nics_per_tray; ++n) {
        ComponentId nic = t.Add(Kind::kNic, Name(tname, "nic", n), tray, r, n);
        // NICs pair with GPUs in order (one per GPU on NVL72 trays).
        if (n < model.gpus_per_tray) t.gpu_nic_.push_back(nic);
      }
      for (int g = model.nics_per_tray; g < model.gpus_per_tray; ++g) t.gpu_nic_.push_back(kNoComponent);
    }
  }
  // The fabric after every rack, so that rack, tray and GPU ids do not depend on it.
  const int groups = (racks + t.RacksPerLeaf() - 1) / t.RacksPerLeaf();
  for (int n = 0; n < model.nics_per_tray; ++n)
    t.rails_.push_back(t.Add(Kind::kRail, "rail" + std::to_string(n), kNoComponent, 0, n));
  t.leaves_.resize(static_cast<size_t>(groups * model.nics_per_tray));
  for (int n = 0; n < model.nics_per_tray; ++n)
    for (int g = 0; g < groups; ++g)
      t.leaves_[static_cast<size_t>(g * model.nics_per_tray + n)] =
          t.Add(Kind::kLeaf, "rail" + std::to_string(n) + "." + Padded("leaf", g + 1, 2), t.rails_[n],
                g * t.RacksPerLeaf(), g);
  t.BuildLateParts();
  if (!regions.empty()) RC_RETURN_IF_ERROR(t.BuildRegions(regions));
  t.compute_tray_.assign(t.components_.size(), 0);  // once every part is in (a byte per Add cost more)
  for (ComponentId tray : t.trays_) t.compute_tray_[tray] = 1;
  return t;
}

// Pumps, DPUs and spines came after the first catalogues: appended last so every earlier id stays put
// (plans, reports and their seeds' picks refer to those ids).
void Topology::BuildLateParts() {
  const RackModel& m = model_;
  for (ComponentId rack : racks_)
    for (int p = 0; p < m.cdu_pumps; ++p)
      pumps_.push_back(Add(Kind::kPump, Name(at(CduOfRack(rack)).name, "pump", p + 1), CduOfRack(rack),
                           at(rack).rack, p));
  for (ComponentId tray : trays_)
    for (int d = 0; d < m.dpus_per_tray; ++d)
      dpus_.push_back(Add(Kind::kDpu, Name(at(tray).name, "dpu", d), tray, at(tray).rack, d));
  // Domains over several racks: a component each ("nvl01"), its `rack` the domain's first rack.
  if (m.domain_racks > 1)
    for (int d = 0; d < Domains(); ++d)
      domains_.push_back(Add(Kind::kNvlinkDomain, Padded("nvl", d + 1, std::max(2, Digits(Domains()))), kNoComponent,
                             d * m.domain_racks, d));
  if (leaves_.empty()) return;
  // Two tiers: ceil(leaves / 2) spines for the one pod. Three: per pod as many spines as leaves, each
  // spine's component `rack` the pod's first rack; then ceil(spines / 2) super-spines.
  const int rails = static_cast<int>(rails_.size()), pods = Pods();
  for (int p = 0; p < pods; ++p) {
    const int groups = std::min(GroupsPerPod(), LeafGroups() - p * GroupsPerPod());
    const int leaves = groups * rails;
    spines_in_pod_.push_back(m.fabric_tiers == 3 ? leaves : (leaves + 1) / 2);
  }
  int s = 0;
  for (int p = 0; p < pods; ++p)
    for (int k = 0; k < spines_in_pod_[static_cast<size_t>(p)]; ++k, ++s) {
      spines_.push_back(Add(Kind::kSpine, Padded("spine", s + 1, 2), kNoComponent, p * GroupsPerPod() * RacksPerLeaf(), s));
      spine_pod_.push_back(p);
    }
  if (m.fabric_tiers != 3) return;
  for (int k = 0; k < (s + 1) / 2; ++k)
    super_spines_.push_back(Add(Kind::kSuperSpine, Padded("superspine", k + 1, 2), kNoComponent, 0, k));
}

int Topology::GroupsPerPod() const {
  if (model_.fabric_tiers != 3) return std::max(1, LeafGroups());
  return std::max(1, kLeafDownPorts / std::max(1, static_cast<int>(rails_.size())));
}

std::span<const ComponentId> Topology::PumpsOfRack(ComponentId rack) const {
  const size_t per = static_cast<size_t>(model_.cdu_pumps);
  return std::span<const ComponentId>(pumps_).subspan(static_cast<size_t>(at(rack).rack) * per, per);
}

ComponentId Topology::DpuOfNic(ComponentId nic) const {
  const Component& c = at(nic);
  const int dpus = model_.dpus_per_tray;
  if (c.kind != Kind::kNic || dpus <= 0) return kNoComponent;
  const size_t d = static_cast<size_t>(c.index * dpus / std::max(1, model_.nics_per_tray));
  return dpus_[TraySlot(TrayOf(nic)) * static_cast<size_t>(dpus) + d];
}

std::vector<ComponentId> Topology::NicsOfDpu(ComponentId dpu) const {
  std::vector<ComponentId> out;
  if (at(dpu).kind != Kind::kDpu) return out;
  for (ComponentId n : ChildrenOf(TrayOf(dpu)))
    if (at(n).kind == Kind::kNic && DpuOfNic(n) == dpu) out.push_back(n);
  return out;
}

std::optional<ComponentId> Topology::Find(std::string_view name) const {
  NameIndex& index = *by_name_;
  std::call_once(index.built, [&] {
    index.ids.reserve(components_.size());
    for (const Component& c : components_) index.ids.emplace(c.name, c.id);
  });
  auto it = index.ids.find(std::string(name));
  if (it == index.ids.end()) return std::nullopt;
  return it->second;
}

Result<Target> Topology::ResolveTarget(std::string_view name) const {
  if (auto id = Find(name)) return Target{*id, -1};
  size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && name.substr(dot + 1).starts_with("nvlink")) {
    auto gpu = Find(name.substr(0, dot));
    std::string_view num = name.substr(dot + 7);
    if (gpu && at(*gpu).kind == Kind::kGpu && !num.empty() &&
        std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; }) && num.size() < 4) {
      int port = std::stoi(std::string(num));
      if (port < model_.nvlink_links_per_gpu) return Target{*gpu, port};
      return Status::NotFound(std::string(name) + ": a " + model_.name + " GPU has NVLink ports 0-" +
                              std::to_string(model_.nvlink_links_per_gpu - 1));
    }
  }
  return Status::NotFound("no component named '" + std::string(name) + "'");
}

std::string Topology::TargetName(const Target& t) const {
  if (t.component == kNoComponent) return "-";
  std::string n = at(t.component).name;
  if (t.port >= 0) n += ".nvlink" + std::to_string(t.port);
  return n;
}

ComponentId Topology::RackOf(ComponentId id) const { return racks_[at(id).rack]; }

ComponentId Topology::ValveOfTray(ComponentId tray) const {
  if (tray >= components_.size() || TraySlot(tray) == kNoSlot) return kNoComponent;
  return tray_valve_[TraySlot(tray)];
}

ComponentId Topology::NicOfGpu(ComponentId gpu) const {
  if (gpu >= components_.size() || GpuSlot(gpu) == kNoSlot) return kNoComponent;
  return gpu_nic_[GpuSlot(gpu)];
}

ComponentId Topology::CduOfRack(ComponentId rack) const { return rack_cdu_[at(rack).rack]; }

ComponentId Topology::DomainOf(ComponentId id) const {
  const Component& c = at(id);
  if (c.kind == Kind::kNvlinkDomain) return id;
  if (c.kind == Kind::kRail || c.kind == Kind::kLeaf || c.kind == Kind::kSpine || c.kind == Kind::kSuperSpine)
    return kNoComponent;
  if (domains_.empty()) return racks_[static_cast<size_t>(c.rack)];
  return domains_[static_cast<size_t>(DomainOfRack(c.rack))];
}

// Every rack has the model's compute trays, built rack after rack: a run of racks is a run of trays().
std::span<const ComponentId> Topology::TraysUnder(ComponentId id) const {
  const Component& c = at(id);
  const size_t per = static_cast<size_t>(model_.compute_trays);
  auto racks = [&](int first, int count) {
    return std::span<const ComponentId>(trays_).subspan(static_cast<size_t>(first) * per,
                                                        static_cast<size_t>(count) * per);
  };
  switch (c.kind) {
    case Kind::kRegion: {
      const Region& r = regions_[static_cast<size_t>(c.index)];
      return racks(r.first_rack, r.racks);
    }
    case Kind::kRack: return racks(c.rack, 1);
    case Kind::kNvlinkDomain: return racks(c.rack, model_.domain_racks);  // its `rack` is its first
    default: break;
  }
  const ComponentId tray = TrayOf(id);
  if (tray == kNoComponent) return {};
  return std::span<const ComponentId>(trays_).subspan(TraySlot(tray), 1);
}

// The GPUs of the trays under `id` (TraysUnder), in id order.
std::vector<ComponentId> Topology::GpusUnder(ComponentId id) const {
  std::vector<ComponentId> out;
  for (ComponentId tray : TraysUnder(id))
    for (ComponentId g : GpusOfTray(tray)) out.push_back(g);
  return out;
}

std::vector<ComponentId> Topology::GpusOfDomain(int domain) const {
  return GpusUnder(DomainOf(racks_[static_cast<size_t>(domain * model_.domain_racks)]));
}

std::vector<ComponentId> Topology::GpusOfRack(int rack) const { return GpusUnder(racks_[static_cast<size_t>(rack)]); }

ComponentId Topology::LeafOfNic(ComponentId nic) const {
  const Component& c = at(nic);
  if (c.kind != Kind::kNic || leaves_.empty()) return kNoComponent;
  size_t group = static_cast<size_t>(c.rack / RacksPerLeaf());
  return leaves_[group * rails_.size() + static_cast<size_t>(c.index)];
}

std::vector<ComponentId> Topology::NicsOf(ComponentId id) const {
  const Component& c = at(id);
  std::vector<ComponentId> out;
  if (c.kind != Kind::kLeaf && c.kind != Kind::kRail) return out;
  const int rail = c.kind == Kind::kRail ? c.index : at(c.parent).index;
  const int first = c.kind == Kind::kRail ? 0 : c.rack;
  const int last = c.kind == Kind::kRail ? static_cast<int>(racks_.size()) : std::min<int>(c.rack + RacksPerLeaf(), racks_.size());
  for (int r = first; r < last; ++r)
    for (ComponentId tray : TraysUnder(racks_[static_cast<size_t>(r)]))
      for (ComponentId n : children_[tray])
        if (at(n).kind == Kind::kNic && at(n).index == rail) out.push_back(n);
  return out;
}

std::optional<ComponentId> Topology::GpuByPci(ComponentId tray, std::string_view pci) const {
  for (ComponentId g : GpusOfTray(tray))
    if (PciOf(g) == pci) return g;
  return std::nullopt;
}

const std::string& Topology::PciOf(ComponentId id) const {
  static const std::string kNone;
  if (id >= components_.size() || at(id).kind != Kind::kGpu) return kNone;
  const auto index = static_cast<size_t>(at(id).index);
  return index < model_.gpu_pci_bus_ids.size() ? model_.gpu_pci_bus_ids[index] : kNone;
}

std::vector<ComponentId> Topology::GpusServedBy(ComponentId id) const {
  const Component& c = at(id);
  std::vector<ComponentId> out;
  switch (c.kind) {
    case Kind::kGpu: out.push_back(id); break;
    case Kind::kNic: {
      ComponentId tray = TrayOf(id);
      auto gpus = GpusOfTray(tray);
      if (c.index < static_cast<int>(gpus.size())) out.push_back(gpus[c.index]);
      break;
    }
    case Kind::kCpu: case Kind::kValve: case Kind::kComputeTray: {
      for (ComponentId g : GpusOfTray(TrayOf(id))) out.push_back(g);
      break;
    }
    // A lost switch tray costs every GPU of the domain bandwidth (adaptive) or the partition (full), in
    // every rack of it. A CDU cools and a rack holds only its own trays.
    case Kind::kSwitchTray: case Kind::kNvlinkDomain: out = GpusOfDomain(DomainOfRack(c.rack)); break;
    case Kind::kCdu: case Kind::kRack: out = GpusOfRack(c.rack); break;
    case Kind::kRegion: out = GpusUnder(id); break;
    // A region's stores cost their jobs stalls and rework, not service (sim_storage.h).
    case Kind::kObjectStore:
    case Kind::kCheckpointStore: break;
    // Power shelves, PSUs and pumps are redundant: one alone serves no GPU exclusively; a spine is one of
    // several equal paths between leaves.
    case Kind::kPowerShelf:
    case Kind::kPsu:
    case Kind::kPump:
    case Kind::kSpine:
    case Kind::kSuperSpine: break;
    case Kind::kDpu:
      for (ComponentId n : NicsOfDpu(id)) {
        auto gpus = GpusOfTray(TrayOf(n));
        if (at(n).index < static_cast<int>(gpus.size())) out.push_back(gpus[static_cast<size_t>(at(n).index)]);
      }
      break;
    // A leaf or rail is the only scale-out path of the GPUs behind its NICs.
    case Kind::kRail: case Kind::kLeaf:
      for (ComponentId n : NicsOf(id)) {
        auto gpus = GpusOfTray(TrayOf(n));
        if (at(n).index < static_cast<int>(gpus.size())) out.push_back(gpus[static_cast<size_t>(at(n).index)]);
      }
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<ComponentId> Topology::Ancestors(ComponentId id) const {
  std::vector<ComponentId> out;
  for (ComponentId c = at(id).parent; c != kNoComponent; c = at(c).parent) out.push_back(c);
  return out;
}

}  // namespace rackchaos::cluster
