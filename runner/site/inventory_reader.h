// Reading a site inventory's YAML (runner/site/inventory.h): the key sections, a Reader that names
// file:line:column in every error, and the checks of single values. Internal to runner/inventory*.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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

inline std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The value under `key` of a map node, or a null node. yaml-cpp's operator[] on a missing key yields a
// "zombie" node that throws on use, so look the key up by hand.
inline YAML::Node Child(const YAML::Node& map, const std::string& key) {
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
    } else if (!std::filesystem::path(out).is_absolute()) {
      out = (std::filesystem::path(file_).parent_path() / out).lexically_normal().string();
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
  return why.empty() ? Status::Ok() : r.Error(v, std::string(key) + " '" + out + "' " + why);
}

}  // namespace rackchaos::runner::inventory_yaml
