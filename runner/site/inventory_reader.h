// Reading a site inventory's YAML (runner/site/inventory.h): the key sections, a Reader over the one YAML
// reader (core/yaml_reader.h) that names file:line:column in every error, and the checks of single values.
// Internal to runner/site/inventory*.cpp.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "core/user_file.h"
#include "core/yaml_reader.h"
#include "runner/site/inventory.h"

namespace rackchaos::runner::inventory_yaml {

// Keys per section, in documentation order (messages list them), derived from InventoryKeys().
inline const std::map<std::string, std::vector<std::string>>& Sections() {
  static const std::map<std::string, std::vector<std::string>> kKeys = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const InventoryKey& k : InventoryKeys()) out[k.section].push_back(k.key);
    return out;
  }();
  return kKeys;
}

inline std::map<std::string, std::vector<std::string>> PlaceholderMap() {
  std::map<std::string, std::vector<std::string>> out;
  for (const ActionInfo& a : InventoryActions()) out[a.name] = a.placeholders;
  for (const ActionInfo& a : HealerActions()) out[a.name] = a.placeholders;
  return out;
}
inline const std::map<std::string, std::vector<std::string>>& ActionPlaceholders() {
  static const auto kNames = PlaceholderMap();
  return kNames;
}

// Healer actions that concern a job or the whole site rather than a tray: they need run_on.
inline bool IsSiteAction(const std::string& action) {
  for (const ActionInfo& a : HealerActions())
    if (a.name == action) return a.target == kSiteAction;
  return false;
}

using yaml::Child;

inline const yaml::Format kInventoryFormat{"site inventory", 64, 4};

// The inventory's view of the one YAML reader (core/yaml_reader.h): sections of InventoryKeys(), and the
// checks of single values that reach command lines (one line of text, names, paths).
class Reader {
 public:
  using Pairs = std::vector<std::pair<YAML::Node, YAML::Node>>;

  explicit Reader(std::string file) : yaml_(std::move(file), kInventoryFormat) {}

  const std::string& file() const { return yaml_.file(); }
  SourcePos Pos(const YAML::Node& n) const { return yaml_.Pos(n); }
  Status Error(const YAML::Node& n, const std::string& message) const { return yaml_.Error(n, message); }

  // The entries of a map node whose keys must come from `section` ("" = the top level), with unknown keys
  // (and the nearest valid one) and duplicates refused.
  Result<Pairs> Entries(const YAML::Node& node, const std::string& section, const std::string& where) {
    return Collect(yaml_.Entries(node, section.empty() ? "" : where, Sections().at(section)));
  }
  // A map with free keys (env, vars, trays, injectors).
  Result<Pairs> OpenEntries(const YAML::Node& node, const std::string& where) {
    return Collect(yaml_.Entries(node, where, {}, true));
  }

  // One line of text: values reach command lines.
  Status Text(const YAML::Node& n, const std::string& what, std::string& out) const {
    RC_RETURN_IF_ERROR(yaml_.String(Value(n, what), out, "one line of text"));
    if (out.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
      return Error(n, what + " spans lines; values reach command lines and must be one line of text");
    return Status::Ok();
  }
  Status Int(const YAML::Node& n, const std::string& what, int lo, int hi, int& out) const {
    return yaml_.Int(Value(n, what), lo, hi, out);
  }
  Status Bool(const YAML::Node& n, const std::string& what, bool& out) const {
    return yaml_.Bool(Value(n, what), out);
  }
  Status Dur(const YAML::Node& n, const std::string& what, Duration& out) const {
    return yaml_.Dur(Value(n, what), out);
  }
  // A number key of the table (InventoryKeyOf), refused outside its bounds with the range.
  Status Int(const YAML::Node& n, const std::string& what, const InventoryKey& key, int& out) const {
    return Int(n, what, static_cast<int>(key.min), static_cast<int>(key.max), out);
  }
  Status Dur(const YAML::Node& n, const std::string& what, const InventoryKey& key, Duration& out) const {
    Duration d;
    RC_RETURN_IF_ERROR(Dur(n, what, d));
    if (d.us < key.min || d.us > key.max)
      return Error(n, what + " '" + n.Scalar() + "' is out of range; expected a duration " + DescribeRange(key));
    out = d;
    return Status::Ok();
  }
  // A path relative to the inventory's directory; "~/" means $HOME. libssh reads the file (`kind` in
  // messages) later: one that is there must be a regular file (a FIFO or a device would hang or flood it).
  Status Path(const YAML::Node& n, const std::string& what, std::string_view kind, std::string& out) const {
    RC_RETURN_IF_ERROR(Text(n, what, out));
    if (out.rfind("~/", 0) == 0) {
      const char* home = std::getenv("HOME");
      out = std::string(home ? home : "") + out.substr(1);
    } else if (!std::filesystem::path(out).is_absolute()) {
      out = (std::filesystem::path(file()).parent_path() / out).lexically_normal().string();
    }
    const Status special = CheckNotSpecialFile(out, {kind, 0});
    return special.ok() ? special : Error(n, what + ": " + special.message());
  }
  Status StringMap(const YAML::Node& n, const std::string& what, bool env_names, std::map<std::string, std::string>& out) {
    RC_ASSIGN_OR_RETURN(auto entries, OpenEntries(n, what));
    for (const auto& [k, v] : entries) {
      const std::string key = k.Scalar();
      bool ok = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
      for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (!env_names && c == '-'));
      if (!ok)
        return Error(k, Quote(key) + " in " + what + " is not a valid name (letters, digits and _" +
                            (env_names ? "" : ", -") + ")");
      RC_RETURN_IF_ERROR(Text(v, what + "." + key, out[key]));
    }
    return Status::Ok();
  }
  // A list of values; `check` returns why a value is refused ("" = fine).
  Status StringList(const YAML::Node& n, const std::string& what, std::vector<std::string>& out,
                    std::string (*check)(const std::string&)) {
    RC_ASSIGN_OR_RETURN(auto items, yaml_.Items(Value(n, what), "a list, e.g. [0, 1, 2, 3]"));
    for (const YAML::Node& item : items) {
      out.emplace_back();
      const std::string name = what + "[" + std::to_string(out.size() - 1) + "]";
      RC_RETURN_IF_ERROR(Text(item, name, out.back()));
      if (std::string why = check(out.back()); !why.empty()) return Error(item, name + " " + Quote(out.back()) + " " + why);
    }
    return Status::Ok();
  }

 private:
  // A value named `what` in messages, at its own position.
  static yaml::Entry Value(const YAML::Node& n, const std::string& what) { return {what, what, n, n}; }
  static Result<Pairs> Collect(Result<std::vector<yaml::Entry>> entries) {
    if (!entries.ok()) return entries.status();
    Pairs out;
    for (yaml::Entry& e : *entries) out.emplace_back(e.key_node, e.value);
    return out;
  }

  yaml::Reader yaml_;
};

// Linux's own rule for interface names (dev_valid_name): 1-15 bytes, not . or .., no '/', ':' or space.
inline std::string CheckInterfaceName(const std::string& v) {
  if (v.size() > 15) return "is longer than 15 characters, so it is not a Linux interface name";
  if (v == "." || v == "..") return "is not an interface name";
  for (char c : v)
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)))
      return "is not a Linux interface name (no '/', ':' or whitespace)";
  return "";
}

// A GPU as nvidia-smi -i takes it: an index, or a PCI bus id such as 00000008:01:00.0.
inline std::string CheckGpu(const std::string& v) {
  for (char c : v)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
      return "is not a GPU index or PCI bus id (e.g. 0, or 00000008:01:00.0)";
  return "";
}

// A host name or an IP literal (IPv6 may carry brackets and a %zone): what an SSH client connects to.
inline std::string CheckAddress(const std::string& v) {
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-._:%[]").find(c) == std::string_view::npos)
      return "is not a host name or IP address (letters, digits, '-', '.', ':')";
  return "";
}

// A login name as useradd accepts it.
inline std::string CheckUser(const std::string& v) {
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-._$").find(c) == std::string_view::npos)
      return "is not a user name (letters, digits, '-', '.', '_')";
  return "";
}

// A text field checked by `check`, which says what is wrong ("" = fine).
inline Status CheckedText(const Reader& r, const YAML::Node& v, const char* key, std::string& out,
                          std::string (*check)(const std::string&)) {
  RC_RETURN_IF_ERROR(r.Text(v, key, out));
  const std::string why = check(out);
  return why.empty() ? Status::Ok() : r.Error(v, std::string(key) + " " + Quote(out) + " " + why);
}

// The `prometheus:` section (runner/site/inventory_prometheus.cpp).
Status ReadPrometheus(Reader& r, const YAML::Node& node, Inventory& inv);
// Each observation comes from one source: prometheus.provides may not name one that observe.gpu,
// observe.kernel_log or healer.observe_links already gives.
Status CheckOneSourceEach(Reader& r, const YAML::Node& root, const Inventory& inv);

}  // namespace rackchaos::runner::inventory_yaml
