#include "runner/site/inventory.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "core/strings.h"
#include "core/user_file.h"
#include "runner/site/inventory_reader.h"
#include "runner/ssh/command_template.h"

namespace rackchaos::runner {
namespace {

using namespace inventory_yaml;

// Host fields shared by `defaults` and each host.
Status ReadHostField(Reader& r, const YAML::Node& k, const YAML::Node& v, InventoryHost& h) {
  const std::string key = k.Scalar();
  ssh::HostSpec& s = h.spec;
  if (key == "name") return r.Text(v, "name", s.name);
  if (key == "address") return CheckedText(r, v, "address", s.address, CheckAddress);
  if (key == "port") return r.Int(v, "port", InventoryKeyOf("host", "port"), s.port);
  if (key == "user") return CheckedText(r, v, "user", s.user, CheckUser);
  if (key == "identity_file") return r.Path(v, "identity_file", "private key file", s.identity_file);
  if (key == "agent") return r.Bool(v, "agent", s.use_agent);
  if (key == "known_hosts") return r.Path(v, "known_hosts", "known_hosts file", s.known_hosts_file);
  if (key == "env") return r.StringMap(v, "env", true, h.env);
  if (key == "vars") return r.StringMap(v, "vars", false, h.vars);
  return r.Error(k, "unhandled key " + key);
}

Status ReadHosts(Reader& r, const YAML::Node& node, const InventoryHost& defaults, Inventory& inv) {
  if (!node.IsSequence()) return r.Error(node, "hosts must be a list of {name, address, ...}");
  for (const YAML::Node& item : node) {
    InventoryHost h = defaults;
    h.pos = r.Pos(item);
    RC_ASSIGN_OR_RETURN(auto entries, r.Entries(item, "host", "hosts[" + std::to_string(inv.hosts.size()) + "]"));
    for (const auto& [k, v] : entries) RC_RETURN_IF_ERROR(ReadHostField(r, k, v, h));
    if (h.spec.name.empty()) return r.Error(item, "a host needs a name (e.g. name: tray01)");
    if (h.spec.address.empty()) return r.Error(item, "host '" + h.spec.name + "' needs an address");
    if (h.spec.user.empty()) return r.Error(item, "host '" + h.spec.name + "' needs a user (here or in defaults)");
    if (!h.spec.use_agent && h.spec.identity_file.empty())
      return r.Error(item, "host '" + h.spec.name + "' needs identity_file or agent: true (here or in defaults)");
    if (inv.hosts.count(h.spec.name)) return r.Error(item, "two hosts are named '" + h.spec.name + "'");
    inv.hosts[h.spec.name] = h;
  }
  return Status::Ok();
}

Status ReadTray(Reader& r, const YAML::Node& k, const YAML::Node& v, Inventory& inv) {
  TrayMapping t;
  t.tray = k.Scalar();
  t.pos = r.Pos(k);
  if (v.IsScalar()) {  // "r01.tray01: host01" is the short form
    RC_RETURN_IF_ERROR(r.Text(v, "trays." + t.tray, t.host));
  } else {
    RC_ASSIGN_OR_RETURN(auto entries, r.Entries(v, "tray", "trays." + t.tray));
    for (const auto& [key, value] : entries) {
      const std::string name = key.Scalar();
      if (name == "host") RC_RETURN_IF_ERROR(r.Text(value, "host", t.host));
      if (name == "bmc") RC_RETURN_IF_ERROR(r.Text(value, "bmc", t.bmc));
      if (name == "serial") RC_RETURN_IF_ERROR(r.Text(value, "serial", t.serial));
      if (name == "gpus") RC_RETURN_IF_ERROR(r.StringList(value, "gpus", t.gpus, CheckGpu));
      if (name == "nics") RC_RETURN_IF_ERROR(r.StringList(value, "nics", t.nics, CheckInterfaceName));
      if (name == "vars") RC_RETURN_IF_ERROR(r.StringMap(value, "vars", false, t.vars));
      if (name == "valve") {
        RC_ASSIGN_OR_RETURN(auto valve, r.Entries(value, "valve", "trays." + t.tray + ".valve"));
        for (const auto& [vk, vv] : valve)
          RC_RETURN_IF_ERROR(r.Text(vv, "valve." + vk.Scalar(), vk.Scalar() == "endpoint" ? t.valve_endpoint : t.valve_object));
      }
    }
  }
  if (t.host.empty()) return r.Error(k, "tray " + t.tray + " needs a host (e.g. host: tray01)");
  if (!inv.hosts.count(t.host))
    return r.Error(k, "tray " + t.tray + " maps to host '" + t.host + "', which hosts does not list");
  inv.trays[t.tray] = t;
  return Status::Ok();
}

// Every template must parse and use only placeholders its action provides or the site defines.
Status CheckTemplates(Reader& r, const YAML::Node& node, const std::string& action, const ActionTemplates& a,
                      const std::set<std::string>& var_names) {
  std::map<std::string, std::string> values;
  std::vector<std::string> names = CommonPlaceholders();
  for (const std::string& n : ActionPlaceholders().at(action)) names.push_back(n);
  for (const std::string& n : names) values[n] = "x";
  for (const std::string& n : var_names) values[n] = "x";
  std::vector<std::string> listed;
  for (const std::string& n : names) listed.push_back("{" + n + "}");
  const std::pair<const char*, const std::string*> templates[] = {
      {"apply", &a.apply}, {"revert", &a.revert}, {"verify", &a.verify}, {"baseline", &a.baseline}};
  for (const auto& [key, text] : templates) {
    if (text->empty()) continue;
    auto rendered = ssh::RenderTemplate(*text, values);
    if (!rendered.ok())
      return r.Error(Child(node, key), "injectors." + action + "." + key + ": " + rendered.status().message() +
                                    "; " + action + " provides " + Join(listed) + " and the site's vars");
  }
  return Status::Ok();
}

Status ReadAction(Reader& r, const YAML::Node& k, const YAML::Node& v, const std::set<std::string>& var_names,
                  bool healer_section, Inventory& inv) {
  const std::string action = k.Scalar();
  const std::vector<std::string>& allowed = healer_section ? HealerActionNames() : ActionNames();
  if (std::find(allowed.begin(), allowed.end(), action) == allowed.end())
    return r.Error(k, std::string("unknown ") + (healer_section ? "healer" : "injector") + " action " +
                          (IsPlainWord(action) ? Quote(action) : "(not a plain word, not shown)") +
                          "; expected one of: " + Join(allowed) +
                          (NearestWord(action, allowed).empty() ? "" : " (did you mean '" + NearestWord(action, allowed) + "'?)"));
  ActionTemplates a;
  a.pos = r.Pos(k);
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(v, "action", "injectors." + action));
  for (const auto& [key, value] : entries) {
    const std::string name = key.Scalar();
    std::string* field = name == "apply" ? &a.apply : name == "revert" ? &a.revert : name == "verify" ? &a.verify
                       : name == "baseline" ? &a.baseline : &a.run_on;
    RC_RETURN_IF_ERROR(r.Text(value, "injectors." + action + "." + name, *field));
  }
  const bool value_action = IsValueAction(action);
  if (healer_section) {
    if (a.apply.empty() || !a.revert.empty() || !a.verify.empty() || !a.baseline.empty())
      return r.Error(k, "healer." + action + " takes one command, apply (and run_on)");
    if (IsSiteAction(action) && a.run_on.empty())
      return r.Error(k, "healer." + action + " concerns no single tray and needs run_on (the host that runs it)");
  } else if (a.apply.empty() || a.revert.empty())
    return r.Error(k, "injectors." + action + " needs both apply and revert templates");
  if (value_action && a.baseline.empty())
    return r.Error(k, "injectors." + action + " needs a baseline template (prints the current value, read "
                      "before apply and to verify apply and revert)");
  if (value_action && !a.verify.empty())
    return r.Error(Child(v, "verify"), "injectors." + action + " is verified by reading its baseline template back; "
                                "'verify' is for link_down, link_degrade, nvlink_down and tray_pull");
  if (!value_action && !a.baseline.empty())
    return r.Error(Child(v, "baseline"), "injectors." + action + " has no value to read; use 'verify' (exit 0 while the "
                                  "fault is in effect, 1 when it is not)");
  if (!a.run_on.empty() && !inv.hosts.count(a.run_on))
    return r.Error(Child(v, "run_on"), "injectors." + action + ".run_on names host '" + a.run_on + "', which hosts does not list");
  RC_RETURN_IF_ERROR(CheckTemplates(r, v, action, a, var_names));
  inv.actions[action] = a;
  return Status::Ok();
}

// observe.bmc.points[]: each a url, a component name (checked against the model later, CheckObserve)
// and one of the metrics a Redfish reading gives.
Status ReadPoints(Reader& r, const YAML::Node& node, ObserveSpec& o) {
  if (!node.IsSequence()) return r.Error(node, "observe.bmc.points must be a list of {url, component, metric}");
  static const std::vector<std::string> kMetrics = {"gpu_temperature", "switch_temperature", "coolant_flow",
                                                    "leak", "psu_ok", "part_ok"};
  for (const YAML::Node& item : node) {
    RedfishPointSpec p;
    p.pos = r.Pos(item);
    const std::string where = "observe.bmc.points[" + std::to_string(o.points.size()) + "]";
    RC_ASSIGN_OR_RETURN(auto entries, r.Entries(item, "point", where));
    for (const auto& [k, v] : entries) {
      const std::string key = k.Scalar();
      RC_RETURN_IF_ERROR(r.Text(v, where + "." + key, key == "url" ? p.url : key == "component" ? p.component : p.metric));
    }
    if (p.url.empty() || p.component.empty() || p.metric.empty())
      return r.Error(item, where + " needs url, component and metric");
    if (std::find(kMetrics.begin(), kMetrics.end(), p.metric) == kMetrics.end())
      return r.Error(Child(item, "metric"), where + ".metric " + Quote(p.metric) + " is not a Redfish reading; expected one of: " +
                                                Join(kMetrics));
    o.points.push_back(std::move(p));
  }
  return Status::Ok();
}

// One source of `observe:`. Its command template may use the common placeholders and the site's vars
// (and {url} for bmc); the arguments rackchaos appends are its own.
Status ReadObserveSource(Reader& r, const YAML::Node& k, const YAML::Node& v, const std::set<std::string>& var_names,
                         Inventory& inv) {
  const std::string name = k.Scalar();
  ObserveSpec o;
  o.pos = r.Pos(k);
  const std::string where = "observe." + name;
  if (!v.IsNull()) {
    RC_ASSIGN_OR_RETURN(auto entries, r.Entries(v, "source", where));
    for (const auto& [fk, fv] : entries) {
      const std::string key = fk.Scalar();
      if (key == "tool") RC_RETURN_IF_ERROR(r.Text(fv, where + ".tool", o.tool));
      if (key == "command") RC_RETURN_IF_ERROR(r.Text(fv, where + ".command", o.command));
      if (key == "run_on") RC_RETURN_IF_ERROR(r.Text(fv, where + ".run_on", o.run_on));
      if (key == "period") RC_RETURN_IF_ERROR(r.Dur(fv, where + ".period", InventoryKeyOf("source", "period"), o.period));
      if (key == "timeout") RC_RETURN_IF_ERROR(r.Dur(fv, where + ".timeout", InventoryKeyOf("source", "timeout"), o.timeout));
      if (key == "points") RC_RETURN_IF_ERROR(ReadPoints(r, fv, o));
      if (key == "tool" && name != "gpu")
        return r.Error(fk, where + " has one tool; `tool` is for observe.gpu (nvidia-smi or dcgmi)");
      if ((key == "run_on" || key == "points") && name != "bmc")
        return r.Error(fk, where + "." + key + " is for observe.bmc only (its Redfish GETs run on one host)");
    }
  }
  if (name == "gpu") {
    if (o.tool.empty()) o.tool = "nvidia-smi";
    if (o.tool != "nvidia-smi" && o.tool != "dcgmi")
      return r.Error(Child(v, "tool"), "observe.gpu.tool " + Quote(o.tool) + " is not a GPU telemetry tool; expected nvidia-smi or dcgmi");
  }
  if (name == "bmc") {
    if (o.run_on.empty()) return r.Error(k, "observe.bmc needs run_on: the host that runs the Redfish GETs");
    if (!inv.hosts.count(o.run_on))
      return r.Error(Child(v, "run_on"), "observe.bmc.run_on names host '" + o.run_on + "', which hosts does not list");
    if (o.points.empty()) return r.Error(k, "observe.bmc needs points: the Redfish readings to take");
  }
  if (!o.command.empty()) {
    std::map<std::string, std::string> values;
    for (const std::string& n : CommonPlaceholders()) values[n] = "x";
    for (const std::string& n : var_names) values[n] = "x";
    if (name == "bmc") values["url"] = "x";
    auto rendered = ssh::RenderTemplate(o.command, values);
    if (!rendered.ok())
      return r.Error(Child(v, "command"), where + ".command: " + rendered.status().message() + "; it may use {host}, "
                                          "{address}, {tray}, {bmc}, {serial}" + (name == "bmc" ? ", {url}" : "") +
                                          " and the site's vars");
  }
  inv.observe[name] = std::move(o);
  return Status::Ok();
}

void CollectVarNames(const YAML::Node& root, std::set<std::string>& out) {
  auto add = [&](const YAML::Node& vars) {
    if (!vars.IsMap()) return;
    for (auto it = vars.begin(); it != vars.end(); ++it)
      if (it->first.IsScalar()) out.insert(it->first.Scalar());
  };
  add(Child(Child(root, "defaults"), "vars"));
  const YAML::Node hosts = Child(root, "hosts");
  if (hosts.IsSequence())
    for (const YAML::Node& h : hosts) add(Child(h, "vars"));
  const YAML::Node trays = Child(root, "trays");
  if (trays.IsMap())
    for (auto it = trays.begin(); it != trays.end(); ++it) add(Child(it->second, "vars"));
}

// ssh.fire_lead must leave the hosts time to get the instant, and ssh.arm_lead must come before it
// and end before an armed command times out.
Status CheckLeads(Reader& r, const YAML::Node& ssh, const Inventory& inv) {
  auto at = [&](const char* key, const char* otherwise) {  // the key's position, else the other's, else the map's
    YAML::Node n = Child(ssh, key);
    if (n.IsNull()) n = Child(ssh, otherwise);
    return n.IsNull() ? ssh : n;
  };
  if (inv.arm_lead <= inv.fire_lead)
    return r.Error(at("arm_lead", "fire_lead"), "ssh.arm_lead " + FormatDuration(inv.arm_lead) +
                                                    " must be longer than ssh.fire_lead " + FormatDuration(inv.fire_lead));
  if (inv.arm_lead + Duration::Seconds(1) > inv.command_timeout)
    return r.Error(at("arm_lead", "command_timeout"),
                   "ssh.arm_lead " + FormatDuration(inv.arm_lead) + " must be at least 1s shorter than "
                   "ssh.command_timeout " + FormatDuration(inv.command_timeout) + " (an armed fault waits within it)");
  return Status::Ok();
}

Status ReadRoot(Reader& r, const YAML::Node& root, Inventory& inv) {
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(root, "", "inventory"));
  InventoryHost defaults;
  std::set<std::string> var_names;
  CollectVarNames(root, var_names);
  // Hosts before trays and injectors, which refer to them, whatever the order in the file.
  for (const auto& [k, v] : entries) {
    const std::string key = k.Scalar();
    if (key == "site") RC_RETURN_IF_ERROR(r.Text(v, "site", inv.site));
    if (key == "model") RC_RETURN_IF_ERROR(r.Text(v, "model", inv.model));
    if (key == "racks") RC_RETURN_IF_ERROR(r.Int(v, "racks", InventoryKeyOf("", "racks"), inv.racks));
    if (key == "expiry_grace")
      RC_RETURN_IF_ERROR(r.Dur(v, "expiry_grace", InventoryKeyOf("", "expiry_grace"), inv.expiry_grace));
    if (key == "ssh") {
      RC_ASSIGN_OR_RETURN(auto ssh, r.Entries(v, "ssh", "ssh"));
      for (const auto& [sk, sv] : ssh) {
        const InventoryKey& info = InventoryKeyOf("ssh", sk.Scalar());  // Entries refused any other key
        if (sk.Scalar() == "connect_timeout") RC_RETURN_IF_ERROR(r.Dur(sv, "connect_timeout", info, inv.connect_timeout));
        if (sk.Scalar() == "command_timeout") RC_RETURN_IF_ERROR(r.Dur(sv, "command_timeout", info, inv.command_timeout));
        if (sk.Scalar() == "max_concurrent") RC_RETURN_IF_ERROR(r.Int(sv, "max_concurrent", info, inv.max_concurrent));
        if (sk.Scalar() == "arm_lead") RC_RETURN_IF_ERROR(r.Dur(sv, "ssh.arm_lead", info, inv.arm_lead));
        if (sk.Scalar() == "fire_lead") RC_RETURN_IF_ERROR(r.Dur(sv, "ssh.fire_lead", info, inv.fire_lead));
      }
      RC_RETURN_IF_ERROR(CheckLeads(r, v, inv));
    }
    if (key == "prometheus") RC_RETURN_IF_ERROR(ReadPrometheus(r, v, inv));
    if (key == "defaults") {
      RC_ASSIGN_OR_RETURN(auto fields, r.Entries(v, "defaults", "defaults"));
      for (const auto& [dk, dv] : fields) RC_RETURN_IF_ERROR(ReadHostField(r, dk, dv, defaults));
    }
  }
  if (inv.model.empty()) return r.Error(root, "the inventory needs the rack model it maps (e.g. model: gb200-nvl72)");
  const YAML::Node hosts = Child(root, "hosts");
  if (!hosts.IsDefined() || hosts.IsNull()) return r.Error(root, "the inventory lists no hosts");
  RC_RETURN_IF_ERROR(ReadHosts(r, hosts, defaults, inv));
  RC_ASSIGN_OR_RETURN(auto trays, r.OpenEntries(Child(root, "trays"), "trays"));
  for (const auto& [k, v] : trays) RC_RETURN_IF_ERROR(ReadTray(r, k, v, inv));
  RC_ASSIGN_OR_RETURN(auto actions, r.OpenEntries(Child(root, "injectors"), "injectors"));
  for (const auto& [k, v] : actions) RC_RETURN_IF_ERROR(ReadAction(r, k, v, var_names, false, inv));
  RC_ASSIGN_OR_RETURN(auto healer, r.OpenEntries(Child(root, "healer"), "healer"));
  for (const auto& [k, v] : healer) {
    if (k.Scalar() == "observe_period") {
      RC_RETURN_IF_ERROR(r.Dur(v, "healer.observe_period", InventoryKeyOf("healer", "observe_period"), inv.observe_period));
      continue;
    }
    RC_RETURN_IF_ERROR(ReadAction(r, k, v, var_names, true, inv));
  }
  RC_ASSIGN_OR_RETURN(auto observe, r.Entries(Child(root, "observe"), "observe", "observe"));
  for (const auto& [k, v] : observe) RC_RETURN_IF_ERROR(ReadObserveSource(r, k, v, var_names, inv));
  for (auto& [name, o] : inv.observe)
    if (o.period == Duration{}) o.period = inv.observe_period;
  RC_RETURN_IF_ERROR(CheckOneSourceEach(r, root, inv));
  return Status::Ok();
}

}  // namespace

Result<Inventory> ParseInventory(const std::string& text, const std::string& path_for_messages) {
  Inventory inv;
  inv.path = path_for_messages;
  inv.pos = {path_for_messages, 1, 1};
  if (text.size() > kMaxInventoryBytes) {
    return Status::Invalid(path_for_messages + ": is " + std::to_string(text.size()) + " bytes; a site inventory is at most " +
                           FormatBytes(kMaxInventoryBytes));
  }
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(text, path_for_messages, kInventoryFormat));
  if (!root.IsMap()) {
    return At({path_for_messages, 1, 1}, std::string("the site inventory is ") + yaml::NodeKind(root) +
                                             "; a site inventory is a map of keys: " + Join(Sections().at("")));
  }
  Reader r(path_for_messages);
  // Messages may quote the inventory's values, which may hold control characters: keep them one line.
  RC_RETURN_IF_ERROR(OneLine(ReadRoot(r, root, inv)));
  return inv;
}

Result<Inventory> LoadInventory(const std::string& path) {
  RC_ASSIGN_OR_RETURN(std::string text, ReadUserFile(path, {kInventoryFormat.what, kMaxInventoryBytes}));
  return ParseInventory(text, path);
}

}  // namespace rackchaos::runner
