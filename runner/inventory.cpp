#include "runner/inventory.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "runner/ssh/command_template.h"
#include "runner/yaml_guard.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxInventoryBytes = 4u << 20;

// Keys per section, in documentation order (messages list them), derived from InventoryKeys().
const std::map<std::string, std::vector<std::string>>& Sections() {
  static const std::map<std::string, std::vector<std::string>> kKeys = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const InventoryKey& k : InventoryKeys()) out[k.section].push_back(k.key);
    return out;
  }();
  return kKeys;
}

std::map<std::string, std::vector<std::string>> PlaceholderMap() {
  std::map<std::string, std::vector<std::string>> out;
  for (const ActionInfo& a : InventoryActions()) out[a.name] = a.placeholders;
  for (const ActionInfo& a : HealerActions()) out[a.name] = a.placeholders;
  return out;
}
const std::map<std::string, std::vector<std::string>>& ActionPlaceholders() {
  static const auto kNames = PlaceholderMap();
  return kNames;
}

// Healer actions that concern a job or the whole site rather than a tray: they need run_on.
bool IsSiteAction(const std::string& action) {
  for (const ActionInfo& a : HealerActions())
    if (a.name == action) return a.target == kSiteAction;
  return false;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The value under `key` of a map node, or a null node. yaml-cpp's operator[] on a missing key yields a
// "zombie" node that throws on use, so look the key up by hand.
YAML::Node Child(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return YAML::Node();
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node();
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourcePos Pos(const YAML::Node& n) const {
    YAML::Mark m = n.Mark();
    return m.is_null() ? SourcePos{file_, 0, 0} : SourcePos{file_, m.line + 1, m.column + 1};
  }
  Status Error(const YAML::Node& n, const std::string& message) const { return At(Pos(n), message); }

  // The entries of a map node whose keys must come from `section`, with duplicates refused.
  Result<std::vector<std::pair<YAML::Node, YAML::Node>>> Entries(const YAML::Node& node, const std::string& section,
                                                                 const std::string& where) const {
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    if (node.IsNull()) return out;
    if (!node.IsMap()) return Error(node, where + " is not a map");
    std::set<std::string> seen;
    const std::vector<std::string>* keys = &Sections().at(section);
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) return Error(it->first, "a key in " + where + " is not a plain word");
      const std::string key = it->first.Scalar();
      if (std::find(keys->begin(), keys->end(), key) == keys->end())
        return Error(it->first, "unknown key '" + key + "' in " + where + "; expected one of: " + Join(*keys));
      if (!seen.insert(key).second) return Error(it->first, "duplicate key '" + key + "' in " + where);
      out.emplace_back(it->first, it->second);
    }
    return out;
  }
  // A map with free keys (env, vars, trays, injectors).
  Result<std::vector<std::pair<YAML::Node, YAML::Node>>> OpenEntries(const YAML::Node& node,
                                                                     const std::string& where) const {
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    if (node.IsNull()) return out;
    if (!node.IsMap()) return Error(node, where + " is not a map");
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) return Error(it->first, "a key in " + where + " is not a plain word");
      if (!seen.insert(it->first.Scalar()).second)
        return Error(it->first, "duplicate key '" + it->first.Scalar() + "' in " + where);
      out.emplace_back(it->first, it->second);
    }
    return out;
  }

  Status Text(const YAML::Node& n, const std::string& what, std::string& out) const {
    if (!n.IsScalar()) return Error(n, what + " must be a single value (a string)");
    out = n.Scalar();
    if (out.empty()) return Error(n, what + " is empty");
    if (out.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
      return Error(n, what + " spans lines; values reach command lines and must be one line of text");
    return Status::Ok();
  }
  Status Int(const YAML::Node& n, const std::string& what, int lo, int hi, int& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Text(n, what, text));
    char* end = nullptr;
    long v = std::strtol(text.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi)
      return Error(n, what + " '" + text + "' is not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    out = static_cast<int>(v);
    return Status::Ok();
  }
  Status Bool(const YAML::Node& n, const std::string& what, bool& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Text(n, what, text));
    if (text == "true" || text == "yes") out = true;
    else if (text == "false" || text == "no") out = false;
    else return Error(n, what + " '" + text + "' is not true or false");
    return Status::Ok();
  }
  Status Dur(const YAML::Node& n, const std::string& what, Duration& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Text(n, what, text));
    auto d = ParseDuration(text);
    if (!d.ok()) return Error(n, what + ": " + d.status().message());
    out = *d;
    return Status::Ok();
  }
  // A path relative to the inventory's directory; "~/" means $HOME.
  Status Path(const YAML::Node& n, const std::string& what, std::string& out) const {
    RC_RETURN_IF_ERROR(Text(n, what, out));
    if (out.rfind("~/", 0) == 0) {
      const char* home = std::getenv("HOME");
      out = std::string(home ? home : "") + out.substr(1);
    } else if (!fs::path(out).is_absolute()) {
      out = (fs::path(file_).parent_path() / out).lexically_normal().string();
    }
    return Status::Ok();
  }
  Status StringMap(const YAML::Node& n, const std::string& what, bool env_names,
                   std::map<std::string, std::string>& out) const {
    RC_ASSIGN_OR_RETURN(auto entries, OpenEntries(n, what));
    for (const auto& [k, v] : entries) {
      const std::string key = k.Scalar();
      bool ok = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
      for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (!env_names && c == '-'));
      if (!ok)
        return Error(k, "'" + key + "' in " + what + " is not a valid name (letters, digits and _" +
                            (env_names ? "" : ", -") + ")");
      RC_RETURN_IF_ERROR(Text(v, what + "." + key, out[key]));
    }
    return Status::Ok();
  }
  // A list of values; `check` returns why a value is refused ("" = fine).
  Status StringList(const YAML::Node& n, const std::string& what, std::vector<std::string>& out,
                    std::string (*check)(const std::string&)) const {
    if (n.IsNull()) return Status::Ok();
    if (!n.IsSequence()) return Error(n, what + " must be a list, e.g. [0, 1, 2, 3]");
    for (const YAML::Node& item : n) {
      out.emplace_back();
      const std::string name = what + "[" + std::to_string(out.size() - 1) + "]";
      RC_RETURN_IF_ERROR(Text(item, name, out.back()));
      if (std::string why = check(out.back()); !why.empty()) return Error(item, name + " '" + out.back() + "' " + why);
    }
    return Status::Ok();
  }

 private:
  std::string file_;
};

// Linux's own rule for interface names (dev_valid_name): 1-15 bytes, not . or .., no '/', ':' or space.
std::string CheckInterfaceName(const std::string& v) {
  if (v.size() > 15) return "is longer than 15 characters, so it is not a Linux interface name";
  if (v == "." || v == "..") return "is not an interface name";
  for (char c : v)
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)))
      return "is not a Linux interface name (no '/', ':' or whitespace)";
  return "";
}

// A GPU as nvidia-smi -i takes it: an index, or a PCI bus id such as 00000008:01:00.0.
std::string CheckGpu(const std::string& v) {
  for (char c : v)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
      return "is not a GPU index or PCI bus id (e.g. 0, or 00000008:01:00.0)";
  return "";
}

// A host name or an IP literal (IPv6 may carry brackets and a %zone): what an SSH client connects to.
std::string CheckAddress(const std::string& v) {
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-._:%[]").find(c) == std::string_view::npos)
      return "is not a host name or IP address (letters, digits, '-', '.', ':')";
  return "";
}

// A login name as useradd accepts it.
std::string CheckUser(const std::string& v) {
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-._$").find(c) == std::string_view::npos)
      return "is not a user name (letters, digits, '-', '.', '_')";
  return "";
}

// A text field checked by `check`, which says what is wrong ("" = fine).
Status CheckedText(const Reader& r, const YAML::Node& v, const char* key, std::string& out,
                   std::string (*check)(const std::string&)) {
  RC_RETURN_IF_ERROR(r.Text(v, key, out));
  const std::string why = check(out);
  return why.empty() ? Status::Ok() : r.Error(v, std::string(key) + " '" + out + "' " + why);
}

// Host fields shared by `defaults` and each host.
Status ReadHostField(const Reader& r, const YAML::Node& k, const YAML::Node& v, InventoryHost& h) {
  const std::string key = k.Scalar();
  ssh::HostSpec& s = h.spec;
  if (key == "name") return r.Text(v, "name", s.name);
  if (key == "address") return CheckedText(r, v, "address", s.address, CheckAddress);
  if (key == "port") return r.Int(v, "port", 1, 65535, s.port);
  if (key == "user") return CheckedText(r, v, "user", s.user, CheckUser);
  if (key == "identity_file") return r.Path(v, "identity_file", s.identity_file);
  if (key == "agent") return r.Bool(v, "agent", s.use_agent);
  if (key == "known_hosts") return r.Path(v, "known_hosts", s.known_hosts_file);
  if (key == "env") return r.StringMap(v, "env", true, h.env);
  if (key == "vars") return r.StringMap(v, "vars", false, h.vars);
  return r.Error(k, "unhandled key " + key);
}

Status ReadHosts(const Reader& r, const YAML::Node& node, const InventoryHost& defaults, Inventory& inv) {
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

Status ReadTray(const Reader& r, const YAML::Node& k, const YAML::Node& v, Inventory& inv) {
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
Status CheckTemplates(const Reader& r, const YAML::Node& node, const std::string& action, const ActionTemplates& a,
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

Status ReadAction(const Reader& r, const YAML::Node& k, const YAML::Node& v, const std::set<std::string>& var_names,
                  bool healer_section, Inventory& inv) {
  const std::string action = k.Scalar();
  const std::vector<std::string>& allowed = healer_section ? HealerActionNames() : ActionNames();
  if (std::find(allowed.begin(), allowed.end(), action) == allowed.end())
    return r.Error(k, std::string("unknown ") + (healer_section ? "healer" : "injector") + " action '" + action +
                          "'; expected one of: " + Join(allowed));
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
Status CheckLeads(const Reader& r, const YAML::Node& ssh, const Inventory& inv) {
  auto at = [&](const char* key, const char* otherwise) {  // the key's position, else the other's, else the map's
    YAML::Node n = Child(ssh, key);
    if (n.IsNull()) n = Child(ssh, otherwise);
    return n.IsNull() ? ssh : n;
  };
  if (inv.fire_lead < Duration::Millis(10))
    return r.Error(at("fire_lead", ""), "ssh.fire_lead " + FormatDuration(inv.fire_lead) + " is too short (at least 10ms)");
  if (inv.arm_lead <= inv.fire_lead)
    return r.Error(at("arm_lead", "fire_lead"), "ssh.arm_lead " + FormatDuration(inv.arm_lead) +
                                                    " must be longer than ssh.fire_lead " + FormatDuration(inv.fire_lead));
  if (inv.arm_lead + Duration::Seconds(1) > inv.command_timeout)
    return r.Error(at("arm_lead", "command_timeout"),
                   "ssh.arm_lead " + FormatDuration(inv.arm_lead) + " must be at least 1s shorter than "
                   "ssh.command_timeout " + FormatDuration(inv.command_timeout) + " (an armed fault waits within it)");
  return Status::Ok();
}

Status ReadRoot(const Reader& r, const YAML::Node& root, Inventory& inv) {
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(root, "", "inventory"));
  InventoryHost defaults;
  std::set<std::string> var_names;
  CollectVarNames(root, var_names);
  // Hosts before trays and injectors, which refer to them, whatever the order in the file.
  for (const auto& [k, v] : entries) {
    const std::string key = k.Scalar();
    if (key == "site") RC_RETURN_IF_ERROR(r.Text(v, "site", inv.site));
    if (key == "model") RC_RETURN_IF_ERROR(r.Text(v, "model", inv.model));
    if (key == "racks") RC_RETURN_IF_ERROR(r.Int(v, "racks", 1, 100000, inv.racks));
    if (key == "expiry_grace") RC_RETURN_IF_ERROR(r.Dur(v, "expiry_grace", inv.expiry_grace));
    if (key == "ssh") {
      RC_ASSIGN_OR_RETURN(auto ssh, r.Entries(v, "ssh", "ssh"));
      for (const auto& [sk, sv] : ssh) {
        if (sk.Scalar() == "connect_timeout") RC_RETURN_IF_ERROR(r.Dur(sv, "connect_timeout", inv.connect_timeout));
        if (sk.Scalar() == "command_timeout") RC_RETURN_IF_ERROR(r.Dur(sv, "command_timeout", inv.command_timeout));
        if (sk.Scalar() == "max_concurrent") RC_RETURN_IF_ERROR(r.Int(sv, "max_concurrent", 1, 100000, inv.max_concurrent));
        if (sk.Scalar() == "arm_lead") RC_RETURN_IF_ERROR(r.Dur(sv, "ssh.arm_lead", inv.arm_lead));
        if (sk.Scalar() == "fire_lead") RC_RETURN_IF_ERROR(r.Dur(sv, "ssh.fire_lead", inv.fire_lead));
      }
      RC_RETURN_IF_ERROR(CheckLeads(r, v, inv));
    }
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
      RC_RETURN_IF_ERROR(r.Dur(v, "healer.observe_period", inv.observe_period));
      if (inv.observe_period < Duration::Millis(100)) return r.Error(v, "healer.observe_period must be at least 100ms");
      continue;
    }
    RC_RETURN_IF_ERROR(ReadAction(r, k, v, var_names, true, inv));
  }
  return Status::Ok();
}

std::string Lookup(const std::vector<std::string>& list, int index) {
  return index >= 0 && static_cast<size_t>(index) < list.size() ? list[index] : "";
}

}  // namespace

const std::vector<std::string>& ActionNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const ActionInfo& a : InventoryActions()) out.push_back(a.name);
    return out;
  }();
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
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const ActionInfo& a : HealerActions()) out.push_back(a.name);
    return out;
  }();
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

Result<Inventory> ParseInventory(const std::string& text, const std::string& path_for_messages) {
  Inventory inv;
  inv.path = path_for_messages;
  inv.pos = {path_for_messages, 1, 1};
  if (text.size() > kMaxInventoryBytes)
    return Status::Invalid(path_for_messages + ": larger than " + std::to_string(kMaxInventoryBytes >> 20) + " MiB");
  RC_RETURN_IF_ERROR(GuardYamlText(text, path_for_messages, {"inventory", 64, 4}));
  Reader r(path_for_messages);
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return Status::Invalid(path_for_messages + ":1:1: an inventory is a map of keys: " +
                                              Join(Sections().at("")));
    RC_RETURN_IF_ERROR(ReadRoot(r, root, inv));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path_for_messages + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return inv;
}

Result<Inventory> LoadInventory(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return Status::NotFound("site inventory '" + path + "' does not exist");
  if (fs::is_directory(status)) return Status::IoError("site inventory '" + path + "' is a directory, not a file");
  const auto size = fs::file_size(path, ec);
  if (ec) return Status::IoError("cannot read site inventory '" + path + "': " + ec.message());
  if (size > kMaxInventoryBytes) return Status::IoError("site inventory '" + path + "' is larger than 4 MiB");
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in && !in.eof()) return Status::IoError("cannot read site inventory '" + path + "'");
  return ParseInventory(buf.str(), path);
}

Status CheckModel(const Inventory& inv, const ClusterSpec& cluster) {
  if (inv.model != cluster.model || inv.racks != cluster.racks)
    return Status::Invalid(cluster.pos.ToString() + ": the plan's cluster is " + cluster.model + " x" +
                           std::to_string(cluster.racks) + " but site inventory " + inv.path + " maps " + inv.model +
                           " x" + std::to_string(inv.racks) + "; make them agree");
  return Status::Ok();
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
