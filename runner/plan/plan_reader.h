// Reading a plan's YAML against the plan key table (runner/plan/plan_loader.h): the Reader every section
// reader uses, and the sections read outside plan_loader.cpp. Internal to the plan loader (rackchaos_plan).
//
// A Reader names file:line:column in every error, refuses keys the table does not list (with the nearest
// key), duplicates and missing required keys, and counts every node it visits (kMaxPlanNodes): the one
// YAML reader (core/yaml_reader.h) does that, this adds the plan key table's types and examples.
#pragma once

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/yaml_reader.h"
#include "runner/plan/plan_loader.h"
#include "runner/plan/selector.h"

namespace rackchaos::runner::plan_yaml {

using Type = KeyInfo::Type;

inline const yaml::Format kPlanFormat{"plan", kMaxPlanDepth, 5, kMaxPlanNodes};

// A map entry with the key table's row for it (null in open maps: params).
struct Field : yaml::Entry {
  const KeyInfo* info = nullptr;
};

using yaml::NodeKind;

// The plan's view of the one YAML reader (core/yaml_reader.h): sections of the plan key table, and
// messages that say what a key takes with its example ("expected an integer from 1 to 100000 (e.g.
// racks: 2)").
class Reader {
 public:
  explicit Reader(std::string file) : yaml_(std::move(file), kPlanFormat) {}

  const std::string& file() const { return yaml_.file(); }
  SourcePos Pos(const YAML::Node& n) const { return yaml_.Pos(n); }
  SourcePos Pos(const Field& f) const { return yaml_.Pos(f); }

  // "a duration such as 90s, 5m, 2h (e.g. at: 30m)", or "a scalar value" in open maps.
  static std::string Expected(const Field& f) {
    if (f.info == nullptr) return "a scalar value";
    return DescribeType(*f.info) + " (e.g. " + f.key + ": " + std::string(f.info->example) + ")";
  }

  // Checks `node` is a map (or empty) with scalar, known, unique keys of `section`; returns its entries in
  // order. `where` names it in messages ("the plan" for the top level).
  Result<std::vector<Field>> Fields(const YAML::Node& node, std::string_view section, const std::string& where,
                                    bool open = false) {
    const SectionKeys& keys = Section(section);
    RC_ASSIGN_OR_RETURN(auto entries, yaml_.Entries(node, section.empty() ? "" : where, keys.names, open));
    std::vector<Field> out;
    for (yaml::Entry& e : entries) {
      const KeyInfo* info = nullptr;
      for (const KeyInfo* k : keys.infos)
        if (k->key == e.key) info = k;
      out.push_back({std::move(e), info});
    }
    return out;
  }

  // Fails naming the first required key of `section` that `fields` lacks.
  Status Require(const std::vector<Field>& fields, const SourcePos& pos, std::string_view section,
                 const std::string& where) const {
    const SectionKeys& keys = Section(section);
    std::vector<yaml::Entry> entries(fields.begin(), fields.end());
    const std::string missing = yaml::Reader::Missing(entries, keys.required);
    if (missing.empty()) return Status::Ok();
    const KeyInfo& k = **std::find_if(keys.infos.begin(), keys.infos.end(), [&](const KeyInfo* i) { return i->key == missing; });
    return At(pos, "missing required key '" + missing + "' in " + where + "; expected " + DescribeType(k) + " (e.g. " +
                       missing + ": " + std::string(k.example) + ")");
  }

  Status Scalar(const Field& f, std::string& out) const { return yaml_.Scalar(f, out, Expected(f)); }
  Status Read(const Field& f, std::string& out) const { return yaml_.String(f, out, Expected(f)); }
  Status Read(const Field& f, int& out) const {
    int64_t value = 0;
    RC_RETURN_IF_ERROR(yaml_.Int(f, f.info->min, f.info->max, value, Expected(f)));
    out = static_cast<int>(value);  // the key table's bounds are within int
    return Status::Ok();
  }
  Status Read(const Field& f, double& out) const {
    double value = 0;
    RC_RETURN_IF_ERROR(yaml_.Number(f, value, Expected(f)));
    if (value < static_cast<double>(f.info->min) || value > static_cast<double>(f.info->max))
      return yaml_.TypeError(f, "is out of range", Expected(f));
    out = value;
    return Status::Ok();
  }
  Status Read(const Field& f, bool& out) const { return yaml_.Bool(f, out, Expected(f)); }
  Status Read(const Field& f, uint64_t& out) const { return yaml_.Uint64(f, out, Expected(f)); }
  // A duration, inside its key's bounds where the table gives them (min/max in microseconds).
  Status Read(const Field& f, Duration& out) const {
    RC_RETURN_IF_ERROR(yaml_.Dur(f, out));
    if (f.info && (out.us < f.info->min || out.us > f.info->max))
      return yaml_.TypeError(f, "'" + f.value.Scalar() + "' is out of range", Expected(f));
    return Status::Ok();
  }

  // The entries of a list-valued field; an empty value is an empty list.
  Result<std::vector<YAML::Node>> Items(const Field& f) { return yaml_.Items(f, Expected(f)); }

 private:
  // One section of the plan key table, gathered once.
  struct SectionKeys {
    std::vector<std::string> names, required;
    std::vector<const KeyInfo*> infos;
  };
  static const SectionKeys& Section(std::string_view section) {
    static const std::map<std::string, SectionKeys, std::less<>> kSections = [] {
      std::map<std::string, SectionKeys, std::less<>> out;
      for (const KeyInfo& k : PlanKeys()) {
        SectionKeys& s = out[std::string(k.section)];
        s.names.emplace_back(k.key);
        s.infos.push_back(&k);
        if (k.required) s.required.emplace_back(k.key);
      }
      return out;
    }();
    static const SectionKeys kNone;
    auto it = kSections.find(section);
    return it == kSections.end() ? kNone : it->second;
  }

  yaml::Reader yaml_;
};

inline std::string Indexed(const std::string& list, size_t i) { return list + "[" + std::to_string(i) + "]"; }

// plan_relations.cpp: values that are each in range but wrong together (a fault after the plan's end, a
// chaos window that ends before it starts); names the later value's file:line:column.
Status CheckRelations(const Plan& plan);

// plan_load_cluster_jobs.cpp: cluster (with regions and spares) and workload (jobs).
Status ReadCluster(Reader& r, const Field& field, ClusterSpec& cluster);
Status ReadWorkload(Reader& r, const Field& field, std::vector<JobSpec>& jobs);

}  // namespace rackchaos::runner::plan_yaml
