// Reading a plan's YAML against the plan key table (runner/plan/plan_loader.h): the Reader every section
// reader uses, and the sections read outside plan_loader.cpp. Internal to the plan loader (rackchaos_plan).
//
// A Reader names file:line:column in every error, refuses keys the table does not list (with the nearest
// key), duplicates and missing required keys, and counts every node it visits (kMaxPlanNodes).
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "runner/plan/plan_loader.h"
#include "runner/plan/selector.h"

namespace rackchaos::runner::plan_yaml {

using Type = KeyInfo::Type;

// ---- Reading YAML nodes against the key table ----

struct Field {
  std::string key;
  YAML::Node key_node, value;
  const KeyInfo* info = nullptr;  // null in open maps (params)
};

inline const char* NodeKind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "empty";
  }
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  SourcePos Pos(const YAML::Node& n) const {
    YAML::Mark m = n.Mark();
    return m.is_null() ? SourcePos{file_, 0, 0} : SourcePos{file_, m.line + 1, m.column + 1};
  }
  // An empty value has no useful mark of its own (yaml-cpp points at the next line): use the key's.
  SourcePos Pos(const Field& f) const { return f.value.IsNull() ? Pos(f.key_node) : Pos(f.value); }

  // Every node the walk touches goes through here, so an alias-heavy document cannot make it explode.
  Status Visit(const YAML::Node& n) {
    if (++visited_ <= kMaxPlanNodes) return Status::Ok();
    return At(Pos(n), "the plan has more than " + std::to_string(kMaxPlanNodes) +
                          " values (alias bomb?); a plan needs a few hundred");
  }

  std::string Expected(const Field& f) const {
    if (f.info == nullptr) return "expected a scalar value";
    return "expected " + DescribeType(*f.info) + " (e.g. " + f.key + ": " + std::string(f.info->example) + ")";
  }

  Status TypeError(const Field& f, const std::string& problem) const {
    return At(Pos(f), f.key + ": " + problem + "; " + Expected(f));
  }

  // Checks `node` is a map (or empty) with scalar, known, unique keys; returns its entries in order.
  Result<std::vector<Field>> Fields(const YAML::Node& node, const SourcePos& pos, std::string_view section,
                                    const std::string& where, bool open = false) {
    RC_RETURN_IF_ERROR(Visit(node));
    std::vector<Field> out;
    if (node.IsNull()) return out;
    if (!node.IsMap()) {
      return At(pos, where + " is " + NodeKind(node) + "; expected a map of keys: " + KeyList(section));
    }
    std::map<std::string, SourcePos> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      RC_RETURN_IF_ERROR(Visit(it->second));
      if (!it->first.IsScalar()) return At(Pos(it->first), "a key in " + where + " is not a plain word");
      Field f{it->first.Scalar(), it->first, it->second, Find(section, it->first.Scalar())};
      if (f.info == nullptr && !open) return At(Pos(f.key_node), UnknownKey(f.key, section, where));
      auto [first, inserted] = seen.emplace(f.key, Pos(f.key_node));
      if (!inserted) {
        return At(Pos(f.key_node), "duplicate key '" + f.key + "' (first at " + first->second.ToString() +
                                       "); each key may appear once in " + where);
      }
      out.push_back(std::move(f));
    }
    return out;
  }

  // Fails naming the first required key of `section` that `fields` lacks.
  Status Require(const std::vector<Field>& fields, const SourcePos& pos, std::string_view section,
                 const std::string& where) const {
    for (const KeyInfo& k : PlanKeys()) {
      if (k.section != section || !k.required) continue;
      auto has = [&](const Field& f) { return f.key == k.key; };
      if (std::none_of(fields.begin(), fields.end(), has)) {
        return At(pos, "missing required key '" + std::string(k.key) + "' in " + where + "; expected " +
                           DescribeType(k) + " (e.g. " + std::string(k.key) + ": " + std::string(k.example) + ")");
      }
    }
    return Status::Ok();
  }

  Status Scalar(const Field& f, std::string& out) const {
    if (!f.value.IsScalar()) return TypeError(f, std::string("the value is ") + NodeKind(f.value));
    out = f.value.Scalar();
    return Status::Ok();
  }

  Status Read(const Field& f, std::string& out) const {
    RC_RETURN_IF_ERROR(Scalar(f, out));
    if (out.empty()) return TypeError(f, "the value is an empty string");
    return Status::Ok();
  }

  Status Read(const Field& f, int& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Scalar(f, text));
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
      if (value >= f.info->min && value <= f.info->max) {
        out = static_cast<int>(value);
        return Status::Ok();
      }
      return TypeError(f, "'" + text + "' is out of range");
    }
    return TypeError(f, "'" + text + "' " + NotAnInteger(text, ec));
  }

  Status Read(const Field& f, bool& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Scalar(f, text));
    if (text == "true" || text == "false") {
      out = text == "true";
      return Status::Ok();
    }
    return TypeError(f, "'" + text + "' is not a boolean");
  }

  Status Read(const Field& f, uint64_t& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Scalar(f, text));
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec == std::errc() && ptr == text.data() + text.size()) return Status::Ok();
    bool negative = !text.empty() && text[0] == '-' &&
                    std::from_chars(text.data() + 1, text.data() + text.size(), out).ec == std::errc();
    return TypeError(f, "'" + text + "' " + (negative ? "is out of range" : NotAnInteger(text, ec)));
  }

  Status Read(const Field& f, Duration& out) const {
    std::string text;
    RC_RETURN_IF_ERROR(Scalar(f, text));
    auto parsed = ParseDuration(text);
    if (!parsed.ok()) return At(Pos(f), f.key + ": " + parsed.status().message());
    out = parsed.value();
    return Status::Ok();
  }

  // The entries of a list-valued field; an empty value is an empty list.
  Result<std::vector<YAML::Node>> Items(const Field& f) {
    std::vector<YAML::Node> out;
    if (f.value.IsNull()) return out;
    if (!f.value.IsSequence()) return TypeError(f, std::string("the value is ") + NodeKind(f.value));
    for (const YAML::Node& item : f.value) {
      RC_RETURN_IF_ERROR(Visit(item));
      out.push_back(item);
    }
    return out;
  }

 private:
  static const KeyInfo* Find(std::string_view section, std::string_view key) {
    for (const KeyInfo& k : PlanKeys()) {
      if (k.section == section && k.key == key) return &k;
    }
    return nullptr;
  }

  static std::string KeyList(std::string_view section) {
    std::string out;
    for (const KeyInfo& k : PlanKeys()) {
      if (k.section == section) out += (out.empty() ? "" : ", ") + std::string(k.key);
    }
    return out.empty() ? "(any)" : out;
  }

  static std::string UnknownKey(const std::string& key, std::string_view section, const std::string& where) {
    std::string message = "unknown key '" + key + "'" + (section.empty() ? "" : " in " + where) +
                          "; expected one of: " + KeyList(section);
    const KeyInfo* best = nullptr;
    size_t best_distance = 0;
    for (const KeyInfo& k : PlanKeys()) {
      size_t d = EditDistance(key, k.key);
      if (k.section == section && (best == nullptr || d < best_distance)) {
        best = &k;
        best_distance = d;
      }
    }
    if (best != nullptr && (best_distance <= 2 || best_distance <= key.size() / 3)) {
      message += " (did you mean '" + std::string(best->key) + "'?)";
    }
    return message;
  }

  // Why `text` is not an integer: huge, fractional, or not a number at all.
  static std::string NotAnInteger(const std::string& text, std::errc ec) {
    if (ec == std::errc::result_out_of_range) return "is out of range";
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    bool numeric = !text.empty() && end == text.c_str() + text.size() && std::isfinite(d) &&
                   text.find_first_of("xXpP") == std::string::npos;
    if (!numeric) return "is not a number";
    if (d != std::floor(d)) return "is not a whole number";
    return std::fabs(d) >= 9.2e18 ? "is out of range" : "is not written as a plain integer";
  }

  std::string file_;
  size_t visited_ = 0;
};

inline std::string Indexed(const std::string& list, size_t i) { return list + "[" + std::to_string(i) + "]"; }

// plan_load_cluster_jobs.cpp: cluster (with regions and spares) and workload (jobs).
Status ReadCluster(Reader& r, const Field& field, ClusterSpec& cluster);
Status ReadWorkload(Reader& r, const Field& field, std::vector<JobSpec>& jobs);

}  // namespace rackchaos::runner::plan_yaml
