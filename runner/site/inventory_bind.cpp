// Binding a site inventory to what the runner and the healer do: the action table's views
// (injectors/real_actions.h), a verb's action, and the placeholder values of a tray, GPU or NIC target
// (or of the site, for job and site-wide healer actions).
#include <string>
#include <vector>

#include "injectors/real_actions.h"
#include "runner/site/inventory.h"

namespace rackchaos::runner {
namespace {

using injectors::RealAction;
using injectors::RealTarget;

std::string Lookup(const std::vector<std::string>& list, int index) {
  return index >= 0 && static_cast<size_t>(index) < list.size() ? list[index] : "";
}

std::vector<ActionInfo> InfosOf(bool healer) {
  std::vector<ActionInfo> out;
  for (const RealAction& a : injectors::RealActions())
    if (a.healer == healer) out.push_back({a.name, a.injector, a.target_text, a.placeholders, a.checked_by});
  return out;
}

std::vector<std::string> NamesOf(const std::vector<ActionInfo>& actions) {
  std::vector<std::string> out;
  for (const ActionInfo& a : actions) out.push_back(a.name);
  return out;
}

// What the inventory lacks when it does not define `a`, in the words of its own section.
Status Undefined(const Inventory& inv, const RealAction& a) {
  if (a.healer) return Status::NotSupported("site inventory " + inv.path + " defines no healer." + a.name + " command");
  return Status::NotSupported("site inventory " + inv.path + " defines no '" + a.name + "' templates (injectors." +
                              a.name + ": apply, revert" +
                              (a.check == injectors::RealCheck::kBaseline ? ", baseline" : "") + ")");
}

// The placeholders the target gives `a`'s commands, by the kind of target it takes.
Status BindComponent(const Inventory& inv, const cluster::Topology& topo, const RealAction& a,
                     const cluster::Target& target, const TrayMapping& m, TargetBinding& b) {
  const cluster::Component& c = topo.at(target.component);
  const std::string name = topo.TargetName(target);
  switch (a.target) {
    case RealTarget::kNic: {
      std::string iface = Lookup(m.nics, c.index);
      if (iface.empty())
        return Status::NotFound("site inventory " + inv.path + " maps no interface for " + name + " (trays." + m.tray +
                                ".nics has " + std::to_string(m.nics.size()) + ")");
      b.values["iface"] = iface;
      b.values["nic"] = std::to_string(c.index);
      return Status::Ok();
    }
    case RealTarget::kNvlinkPort:
    case RealTarget::kGpu: {
      std::string gpu = Lookup(m.gpus, c.index);
      if (gpu.empty())
        return Status::NotFound("site inventory " + inv.path + " maps no GPU index for " + name + " (trays." + m.tray +
                                ".gpus has " + std::to_string(m.gpus.size()) + ")");
      b.values["gpu"] = gpu;
      if (target.port >= 0) b.values["port"] = std::to_string(target.port);
      return Status::Ok();
    }
    case RealTarget::kValve:
      if (m.valve_endpoint.empty() || m.valve_object.empty())
        return Status::NotFound("site inventory " + inv.path + " maps no valve for " + m.tray + " (trays." + m.tray +
                                ".valve: {endpoint, object})");
      b.values["valve_endpoint"] = m.valve_endpoint;
      b.values["valve_object"] = m.valve_object;
      return Status::Ok();
    case RealTarget::kTray:
    case RealTarget::kSite: return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

const std::vector<ActionInfo>& InventoryActions() {
  static const std::vector<ActionInfo> kActions = InfosOf(false);
  return kActions;
}

const std::vector<ActionInfo>& HealerActions() {
  static const std::vector<ActionInfo> kActions = InfosOf(true);
  return kActions;
}

const std::vector<std::string>& ActionNames() {
  static const std::vector<std::string> kNames = NamesOf(InventoryActions());
  return kNames;
}

const std::vector<std::string>& HealerActionNames() {
  static const std::vector<std::string> kNames = NamesOf(HealerActions());
  return kNames;
}

std::string ActionFor(cluster::Verb verb) {
  const RealAction* a = injectors::RealActionFor(verb);
  return a ? a->name : "";
}

bool IsValueAction(const std::string& action) {
  const RealAction* a = injectors::FindRealAction(action);
  return a && a->check == injectors::RealCheck::kBaseline;
}

std::vector<cluster::Verb> VerbsForTarget(std::string_view injector, const cluster::Topology& topo,
                                          const cluster::Target& target) {
  std::vector<cluster::Verb> verbs;
  for (const RealAction* a : injectors::RealActionsOf(injector, topo, target))
    if (a->verb) verbs.push_back(*a->verb);
  return verbs;
}

Result<TargetBinding> BindSite(const Inventory& inv, const std::string& action) {
  auto a = inv.actions.find(action);
  if (a == inv.actions.end())
    return Status::NotSupported("site inventory " + inv.path + " defines no healer." + action + " command");
  auto h = inv.hosts.find(a->second.run_on);  // the loader requires run_on for site-wide actions only
  if (h == inv.hosts.end())
    return Status::NotSupported("healer." + action + " in site inventory " + inv.path +
                                " is not a site-wide action (it runs on a target's host, not on one run_on host)");
  TargetBinding b;
  b.host = a->second.run_on;
  const InventoryHost& host = h->second;
  b.values = host.vars;
  b.values["host"] = host.spec.name;
  b.values["address"] = host.spec.address;
  for (const char* common : {"tray", "bmc", "serial"}) b.values[common] = "";
  return b;
}

Result<TargetBinding> BindTarget(const Inventory& inv, const cluster::Topology& topo, const std::string& action,
                                 const cluster::Target& target) {
  const RealAction* row = injectors::FindRealAction(action);
  if (!row) return Status::NotSupported("'" + action + "' is not a real-mode action");
  auto a = inv.actions.find(action);
  if (a == inv.actions.end()) return Undefined(inv, *row);
  if (row->target == RealTarget::kSite) return BindSite(inv, action);
  const std::string name = topo.TargetName(target);
  if (!injectors::TargetFits(row->target, topo, target))
    return Status::NotSupported(action + " on real hosts takes " +
                                (row->target_text.empty() ? std::string("another kind of target") : row->target_text) +
                                " (" + name + " is not one)");
  const ComponentId tray_id = topo.TrayOf(target.component);
  if (tray_id == kNoComponent) return Status::NotFound(name + " is not in a compute tray");
  const cluster::Component& tray = topo.at(tray_id);
  auto t = inv.trays.find(tray.name);
  if (t == inv.trays.end())
    return Status::NotFound("site inventory " + inv.path + " maps no host for tray " + tray.name +
                            " (trays: " + tray.name + ": {host: ...})");
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
  RC_RETURN_IF_ERROR(BindComponent(inv, topo, *row, target, m, b));
  // A Redfish template needs the tray's BMC: say so here, not with an empty {bmc} on the wire.
  const ActionTemplates& tmpl = a->second;
  for (const std::string* text : {&tmpl.apply, &tmpl.revert, &tmpl.verify, &tmpl.baseline})
    if (m.bmc.empty() && text->find("{bmc}") != std::string::npos)
      return Status::NotFound("site inventory " + inv.path + " maps no bmc for " + tray.name);
  return b;
}

}  // namespace rackchaos::runner
