#include "runner/replay/replay_resolve.h"

#include <set>

#include "runner/site/padded_names.h"

namespace rackchaos::runner {
namespace {

// A mapped name in the model's padding, or as written when it is nothing (validation says why).
std::string ModelName(const cluster::Topology& topo, const std::string& name) {
  size_t port = name.find(".nvlink");
  auto id = FindIgnoringPadding(topo, name.substr(0, port));
  if (!id) return name;
  return topo.at(*id).name + (port == std::string::npos ? "" : name.substr(port));
}

}  // namespace

const char* const kNoHostHint =
    "the line names no host (plain dmesg and dmesg -T print none): give --host NODE, or map "
    "'* ADDRESS TARGET' in --gpu-map";

ReplayNames::ReplayNames(const cluster::Topology& topo, const incident::HostMap& map) : topo_(topo), map_(map) {}

std::optional<std::string> ReplayNames::Mapped(const std::string& host, const std::string& address) const {
  if (address.empty()) return std::nullopt;
  if (auto it = map_.targets.find(host + " " + address); it != map_.targets.end()) return it->second;
  if (auto it = map_.targets.find("* " + address); it != map_.targets.end()) return it->second;
  return std::nullopt;
}

Result<std::optional<std::string>> ReplayNames::Unique(const std::string& address) const {
  if (address.empty()) return std::optional<std::string>();
  std::set<std::string> targets, hosts;
  const std::string suffix = " " + address;
  for (const auto& [key, target] : map_.targets) {
    if (key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    targets.insert(target);
    hosts.insert(key.substr(0, key.size() - suffix.size()));
  }
  if (targets.size() == 1) return std::optional<std::string>(*targets.begin());
  if (targets.empty()) return std::optional<std::string>();
  std::string list;
  size_t shown = 0;
  for (const std::string& h : hosts) {
    if (shown++ == 3) {
      list += ", ...";
      break;
    }
    list += (list.empty() ? "" : ", ") + h;
  }
  return Status::NotFound(address + " is mapped on " + std::to_string(hosts.size()) + " hosts (" + list +
                          ") and the line names none: give --host NODE");
}

std::optional<ComponentId> ReplayNames::OnlyTray() const {
  std::set<std::string> trays;
  for (const auto& [host, tray] : map_.trays) trays.insert(tray);
  if (trays.size() != 1) return std::nullopt;
  auto id = FindIgnoringPadding(topo_, *trays.begin());
  if (!id || topo_.at(*id).kind != cluster::Kind::kComputeTray) return std::nullopt;
  return id;
}

std::optional<ComponentId> ReplayNames::Tray(const std::string& host) const {
  auto it = map_.trays.find(host);
  if (it == map_.trays.end()) it = map_.trays.find("*");
  if (it == map_.trays.end()) return std::nullopt;
  auto id = FindIgnoringPadding(topo_, it->second);
  if (!id || topo_.at(*id).kind != cluster::Kind::kComputeTray) return std::nullopt;
  return id;
}

ComponentId ReplayNames::TrayOfTarget(const std::string& target) {
  auto [it, fresh] = tray_of_target_.try_emplace(target, kNoComponent);
  if (fresh) {
    if (auto id = topo_.ResolveTarget(target); id.ok()) it->second = topo_.TrayOf(id->component);
  }
  return it->second;
}

Result<std::string> ReplayNames::Gpu(const incident::IncidentEvent& e) const {
  if (auto t = Mapped(e.host, e.address)) return ModelName(topo_, *t);
  if (e.address.empty()) return Status::NotFound("the Xid line names no GPU address");
  std::optional<ComponentId> tray;
  if (e.host.empty()) {
    RC_ASSIGN_OR_RETURN(auto unique, Unique(e.address));
    if (unique) return ModelName(topo_, *unique);
    tray = Tray(e.host);  // "*" in the map
    if (!tray) tray = OnlyTray();
    if (!tray) return Status::NotFound(kNoHostHint);
  } else {
    tray = Tray(e.host);
    if (!tray) return Status::NotFound("no tray mapped for host '" + e.host + "' (add 'HOST TRAY' to --gpu-map)");
  }
  if (auto gpu = topo_.GpuByPci(*tray, e.address)) return topo_.at(*gpu).name;
  return Status::NotFound("no GPU with PCI " + e.address + " in " + topo_.at(*tray).name +
                          " (add 'HOST ADDRESS TARGET')");
}

// NICs by interface or PCI address through the map; a line without the interface ("Port module
// event") finds the NIC through an earlier line of the same host that printed both.
Result<std::string> ReplayNames::Nic(const incident::IncidentEvent& e) {
  const std::string pci_key = e.host + " " + e.address;
  auto target = Mapped(e.host, e.iface);
  if (!target) target = Mapped(e.host, e.address);
  if (!target) {
    if (auto it = nic_by_pci_.find(pci_key); it != nic_by_pci_.end()) target = it->second;
  }
  if (!target && e.host.empty()) {
    RC_ASSIGN_OR_RETURN(auto unique, Unique(e.iface));
    if (!unique) {
      RC_ASSIGN_OR_RETURN(unique, Unique(e.address));
    }
    if (!unique) return Status::NotFound(kNoHostHint);
    target = unique;
  }
  if (!target)
    return Status::NotFound("no NIC mapped for " + (e.iface.empty() ? e.address : e.iface) + " on host '" + e.host +
                            "' (add 'HOST IFACE r01.trayNN.nicN' to --gpu-map)");
  if (nic_by_pci_.size() < 65536) nic_by_pci_[pci_key] = *target;
  return ModelName(topo_, *target);
}

Result<std::string> ReplayNames::Component(const incident::IncidentEvent& e) const {
  if (auto t = Mapped(e.host, e.address)) return ModelName(topo_, *t);
  if (auto t = Mapped(e.host, e.iface)) return ModelName(topo_, *t);
  if (!e.address.empty()) {
    const std::string name = ModelName(topo_, e.address);
    if (topo_.ResolveTarget(name).ok()) return name;  // already a model name, in any padding
  }
  if (!e.address.empty() && e.address.find(':') != std::string::npos) return Gpu(e);
  if (e.address.empty() && !e.host.empty()) {
    if (auto tray = Tray(e.host)) return topo_.at(*tray).name;
  }
  return Status::NotFound("no model component for '" + e.address + "' on host '" + e.host + "'");
}

}  // namespace rackchaos::runner
