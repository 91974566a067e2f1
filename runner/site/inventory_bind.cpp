// Binding a site inventory to what the runner and the healer do: action names, a verb's action, and the
// placeholder values of a tray, GPU or NIC target (or of the site, for job and site-wide healer actions).
#include <string>
#include <vector>

#include "runner/site/inventory.h"

namespace rackchaos::runner {
namespace {

std::string Lookup(const std::vector<std::string>& list, int index) {
  return index >= 0 && static_cast<size_t>(index) < list.size() ? list[index] : "";
}

std::vector<std::string> NamesOf(const std::vector<ActionInfo>& actions) {
  std::vector<std::string> out;
  for (const ActionInfo& a : actions) out.push_back(a.name);
  return out;
}

}  // namespace

const std::vector<std::string>& ActionNames() {
  static const std::vector<std::string> kNames = NamesOf(InventoryActions());
  return kNames;
}

std::string ActionFor(cluster::Verb verb) {
  switch (verb) {
    case cluster::Verb::kNicLink: return "link_down";
    case cluster::Verb::kNvlinkPort: return "nvlink_down";
    case cluster::Verb::kLinkBandwidth: return "link_degrade";
    case cluster::Verb::kPowerCap: return "gpu_throttle";
    case cluster::Verb::kValve: return "valve_fail";
    case cluster::Verb::kTrayPresence: return "tray_pull";
    case cluster::Verb::kDrain: return "drain";
    case cluster::Verb::kResume: return "resume";
    case cluster::Verb::kRequeueJob: return "requeue_job";
    case cluster::Verb::kDiagnostic: return "diagnostic";
    default: return "";
  }
}

const std::vector<std::string>& HealerActionNames() {
  static const std::vector<std::string> kNames = NamesOf(HealerActions());
  return kNames;
}

Result<TargetBinding> BindSite(const Inventory& inv, const std::string& action) {
  auto a = inv.actions.find(action);
  if (a == inv.actions.end())
    return Status::NotSupported("site inventory " + inv.path + " defines no healer." + action + " command");
  TargetBinding b;
  b.host = a->second.run_on;
  const InventoryHost& host = inv.hosts.at(b.host);
  b.values = host.vars;
  b.values["host"] = host.spec.name;
  b.values["address"] = host.spec.address;
  for (const char* common : {"tray", "bmc", "serial"}) b.values[common] = "";
  return b;
}

bool IsValueAction(const std::string& action) { return action == "gpu_throttle" || action == "valve_fail"; }

std::vector<cluster::Verb> VerbsForTarget(std::string_view injector, const cluster::Topology& topo,
                                          const cluster::Target& target) {
  if (injector == "link_down")
    return {topo.at(target.component).kind == cluster::Kind::kNic ? cluster::Verb::kNicLink : cluster::Verb::kNvlinkPort};
  if (injector == "link_degrade") return {cluster::Verb::kLinkBandwidth};
  if (injector == "gpu_throttle") return {cluster::Verb::kPowerCap};
  if (injector == "valve_fail") return {cluster::Verb::kValve};
  if (injector == "tray_pull") return {cluster::Verb::kTrayPresence};
  return {};
}

Result<TargetBinding> BindTarget(const Inventory& inv, const cluster::Topology& topo, const std::string& action,
                                 const cluster::Target& target) {
  auto a = inv.actions.find(action);
  if (a == inv.actions.end())
    return Status::NotSupported("site inventory " + inv.path + " defines no '" + action + "' templates (injectors." +
                                action + ": apply, revert" + (IsValueAction(action) ? ", baseline" : "") + ")");
  const std::string name = topo.TargetName(target);
  const ComponentId tray_id = topo.TrayOf(target.component);
  if (tray_id == kNoComponent) return Status::NotFound(name + " is not in a compute tray");
  const cluster::Component& tray = topo.at(tray_id);
  auto t = inv.trays.find(tray.name);
  if (t == inv.trays.end())
    return Status::NotFound("site inventory " + inv.path + " maps no host for tray " + tray.name + " (trays: " +
                            tray.name + ": {host: ...})");
  const TrayMapping& m = t->second;
  TargetBinding b;
  b.host = a->second.run_on.empty() ? m.host : a->second.run_on;
  const InventoryHost& tray_host = inv.hosts.at(m.host);
  const InventoryHost& host = inv.hosts.at(b.host);
  b.values = host.vars;
  for (const auto& [k, v] : m.vars) b.values[k] = v;
  b.values["host"] = tray_host.spec.name;
  b.values["address"] = tray_host.spec.address;
  b.values["tray"] = tray.name;
  b.values["bmc"] = m.bmc;
  b.values["serial"] = m.serial;
  const cluster::Component& c = topo.at(target.component);
  if (action == "link_degrade" && c.kind != cluster::Kind::kNic)
    return Status::NotSupported("link_degrade on real hosts takes a NIC (" + name + " is not one): a site has no "
                                "command that slows one NVLink port");
  if (action == "link_down" || action == "link_degrade") {
    std::string iface = Lookup(m.nics, c.index);
    if (iface.empty()) return Status::NotFound("site inventory " + inv.path + " maps no interface for " + name +
                                               " (trays." + tray.name + ".nics has " + std::to_string(m.nics.size()) + ")");
    b.values["iface"] = iface;
    b.values["nic"] = std::to_string(c.index);
  } else if (action == "nvlink_down" || action == "gpu_throttle") {
    std::string gpu = Lookup(m.gpus, c.index);
    if (gpu.empty()) return Status::NotFound("site inventory " + inv.path + " maps no GPU index for " + name +
                                             " (trays." + tray.name + ".gpus has " + std::to_string(m.gpus.size()) + ")");
    b.values["gpu"] = gpu;
    if (target.port >= 0) b.values["port"] = std::to_string(target.port);
  } else if (action == "valve_fail") {
    if (m.valve_endpoint.empty() || m.valve_object.empty())
      return Status::NotFound("site inventory " + inv.path + " maps no valve for " + tray.name +
                              " (trays." + tray.name + ".valve: {endpoint, object})");
    b.values["valve_endpoint"] = m.valve_endpoint;
    b.values["valve_object"] = m.valve_object;
  } else if (action == "tray_pull" && m.bmc.empty() && a->second.apply.find("{bmc}") != std::string::npos) {
    return Status::NotFound("site inventory " + inv.path + " maps no bmc for " + tray.name);
  }
  return b;
}

}  // namespace rackchaos::runner
