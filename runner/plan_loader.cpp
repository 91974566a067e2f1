#include "runner/plan_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include "runner/selector.h"
#include "runner/yaml_guard.h"

namespace rackchaos::runner {
namespace {

using Type = KeyInfo::Type;

// ---- Reading YAML nodes against the key table ----

struct Field {
  std::string key;
  YAML::Node key_node, value;
  const KeyInfo* info = nullptr;  // null in open maps (params)
};

const char* NodeKind(const YAML::Node& n) {
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

// ---- Sections ----

std::string Indexed(const std::string& list, size_t i) { return list + "[" + std::to_string(i) + "]"; }

// A spares map ({racks: N}) of the cluster or of one region.
Status ReadSpares(Reader& r, const Field& f, const std::string& section, int& racks, SourcePos& pos) {
  pos = r.Pos(f);
  RC_ASSIGN_OR_RETURN(auto spares, r.Fields(f.value, pos, section, section));
  RC_RETURN_IF_ERROR(r.Require(spares, pos, section, section));
  for (const Field& s : spares) {  // only "racks"
    RC_RETURN_IF_ERROR(r.Read(s, racks));
    pos = r.Pos(s);
  }
  return Status::Ok();
}

bool RegionNameOk(const std::string& name) {
  const bool word = !name.empty() && name[0] >= 'a' && name[0] <= 'z' &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
                    });
  const bool rack_like = name.size() > 1 && name[0] == 'r' &&
                         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return word && !rack_like;
}

// cluster.regions: a list of {name, racks, spares}; names unique; `racks` becomes their sum.
Status ReadRegions(Reader& r, const Field& field, ClusterSpec& cluster) {
  cluster.regions_pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  if (items.empty())
    return At(cluster.regions_pos, "regions is empty; give at least one, e.g. [{name: east, racks: 2}]");
  std::map<std::string, SourcePos> names;
  for (size_t i = 0; i < items.size(); ++i) {
    RegionPlan region;
    region.pos = r.Pos(items[i]);
    const std::string where = Indexed("cluster.regions", i);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], region.pos, "cluster.regions[]", where));
    RC_RETURN_IF_ERROR(r.Require(fields, region.pos, "cluster.regions[]", where));
    for (const Field& f : fields) {
      if (f.key == "name") {
        RC_RETURN_IF_ERROR(r.Read(f, region.name));
        if (!RegionNameOk(region.name))
          return At(r.Pos(f), where + ".name '" + region.name +
                                  "' is not a region name; use a lowercase word of "
                                  "letters, digits, '-' or '_' that is not a rack name (e.g. east, eu-west)");
        auto [first, inserted] = names.emplace(region.name, r.Pos(f));
        if (!inserted)
          return At(r.Pos(f), "duplicate region name '" + region.name + "' (first at " + first->second.ToString() +
                                  "); region names must be unique");
      } else if (f.key == "racks") {
        RC_RETURN_IF_ERROR(r.Read(f, region.racks));
      } else {
        RC_RETURN_IF_ERROR(ReadSpares(r, f, "cluster.regions[].spares", region.spare_racks, region.spares_pos));
      }
    }
    cluster.regions.push_back(std::move(region));
  }
  return Status::Ok();
}

Status ReadCluster(Reader& r, const Field& field, ClusterSpec& cluster) {
  cluster.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, cluster.pos, "cluster", "cluster"));
  for (const Field& f : fields) {
    if (f.key == "model")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.model));
    else if (f.key == "racks") {
      RC_RETURN_IF_ERROR(r.Read(f, cluster.racks));
      cluster.racks_pos = r.Pos(f);
    } else if (f.key == "regions")
      RC_RETURN_IF_ERROR(ReadRegions(r, f, cluster));
    else if (f.key == "region_link_gbytes_per_s")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.region_link_gbytes_per_s));
    else if (f.key == "object_store_gbytes_per_s")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.object_store_gbytes_per_s));
    else if (f.key == "spare_trays")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.spare_trays));
    else if (f.key == "inventory")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.inventory));
    else if (f.key == "nvlink_mode")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.nvlink_mode));
    else if (f.key == "fabric") {
      RC_ASSIGN_OR_RETURN(auto fabric, r.Fields(f.value, r.Pos(f), "cluster.fabric", "cluster.fabric"));
      RC_RETURN_IF_ERROR(r.Require(fabric, r.Pos(f), "cluster.fabric", "cluster.fabric"));
      for (const Field& t : fabric) RC_RETURN_IF_ERROR(r.Read(t, cluster.fabric_tiers));  // only "tiers"
    } else if (f.key == "spares") {
      RC_RETURN_IF_ERROR(ReadSpares(r, f, "cluster.spares", cluster.spare_racks, cluster.spares_pos));
    }
  }
  if (cluster.regions.empty()) return Status::Ok();
  int64_t sum = 0;
  for (const RegionPlan& region : cluster.regions) sum += region.racks;
  if (sum > 100000)
    return At(cluster.regions_pos, "the regions hold " + std::to_string(sum) + " racks; at most 100000");
  if (cluster.racks_pos.line > 0 && cluster.racks != sum)
    return At(cluster.racks_pos, "racks is " + std::to_string(cluster.racks) + " but the regions hold " +
                                     std::to_string(sum) + "; leave racks out or make it their sum");
  cluster.racks = static_cast<int>(sum);
  return Status::Ok();
}

// The members the keys of `parallelism` and `collectives` set (the key table lists the same keys).
struct IntKey {
  std::string_view key;
  int JobSpec::*member;
};
constexpr IntKey kDegrees[] = {{"tp", &JobSpec::tp}, {"pp", &JobSpec::pp}, {"dp", &JobSpec::dp}, {"ep", &JobSpec::ep}};
constexpr IntKey kShares[] = {
    {"tp", &JobSpec::tp_pct}, {"dp", &JobSpec::dp_pct}, {"ep", &JobSpec::ep_pct}, {"pp", &JobSpec::pp_pct}};

// Reads a map of integer keys into their members; a key missing from `keys` is a programmer error
// (Fields() has already refused keys the key table does not list), reported, not written anywhere.
Status ReadInts(Reader& r, const Field& f, std::string_view section, const std::string& where,
                std::span<const IntKey> keys, JobSpec& job) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, r.Pos(f), std::string(section), where));
  for (const Field& k : fields) {
    auto it = std::find_if(keys.begin(), keys.end(), [&](const IntKey& m) { return m.key == k.key; });
    if (it == keys.end()) return At(r.Pos(k), "internal: no member for key '" + k.key + "' in " + where);
    RC_RETURN_IF_ERROR(r.Read(k, job.*(it->member)));
  }
  return Status::Ok();
}

Status ReadJobMaps(Reader& r, const Field& f, const std::string& where, JobSpec& job) {
  if (f.key == "parallelism") {
    RC_RETURN_IF_ERROR(ReadInts(r, f, "workload.jobs[].parallelism", where + ".parallelism", kDegrees, job));
  } else if (f.key == "collectives") {
    job.collectives_pos = r.Pos(f);
    RC_RETURN_IF_ERROR(ReadInts(r, f, "workload.jobs[].collectives", where + ".collectives", kShares, job));
  } else if (f.key == "elastic") {
    job.elastic_pos = r.Pos(f);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, r.Pos(f), "workload.jobs[].elastic", where + ".elastic"));
    RC_RETURN_IF_ERROR(r.Require(fields, job.elastic_pos, "workload.jobs[].elastic", where + ".elastic"));
    for (const Field& e : fields) {  // only "min_gpus"
      RC_RETURN_IF_ERROR(r.Read(e, job.min_gpus));
      job.elastic_pos = r.Pos(e);
    }
  } else {
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, r.Pos(f), "workload.jobs[].checkpoint", where + ".checkpoint"));
    for (const Field& c : fields) {
      if (c.key == "size_gb") {
        job.checkpoint_pos = r.Pos(c);
        RC_RETURN_IF_ERROR(r.Read(c, job.checkpoint_size_gb));
        continue;
      }
      RC_RETURN_IF_ERROR(r.Read(c, c.key == "interval"     ? job.checkpoint_interval
                                   : c.key == "copy_time" ? job.checkpoint_copy
                                                          : job.checkpoint_write));
    }
  }
  return Status::Ok();
}

Result<JobSpec> ReadJob(Reader& r, const YAML::Node& node, const std::string& where) {
  JobSpec job;
  job.pos = r.Pos(node);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(node, job.pos, "workload.jobs[]", where));
  RC_RETURN_IF_ERROR(r.Require(fields, job.pos, "workload.jobs[]", where));
  SourcePos parallelism_pos = job.pos;
  for (const Field& f : fields) {
    if (f.key == "name")
      RC_RETURN_IF_ERROR(r.Read(f, job.name));
    else if (f.key == "gpus")
      RC_RETURN_IF_ERROR(r.Read(f, job.gpus));
    else if (f.key == "step_time")
      RC_RETURN_IF_ERROR(r.Read(f, job.step_time));
    else if (f.key == "restart_overhead")
      RC_RETURN_IF_ERROR(r.Read(f, job.restart_overhead));
    else if (f.key == "collective_timeout")
      RC_RETURN_IF_ERROR(r.Read(f, job.collective_timeout));
    else if (f.key == "region") {
      job.region.pos = r.Pos(f);
      RC_RETURN_IF_ERROR(r.Read(f, job.region.text));
    } else if (f.key == "input_from") {
      std::string from;
      RC_RETURN_IF_ERROR(r.Read(f, from));
      if (from != "cache" && from != "object_store")
        return At(r.Pos(f), "input_from '" + from + "' is not a source; valid: cache, object_store");
      job.input_from_object_store = from == "object_store";
    } else if (f.key == "input_mb_per_s") {
      RC_RETURN_IF_ERROR(r.Read(f, job.input_mb_per_s));
      job.input_pos = r.Pos(f);
    } else
      RC_RETURN_IF_ERROR(ReadJobMaps(r, f, where, job));
    if (f.key == "parallelism") {
      parallelism_pos = r.Pos(f);
      job.has_parallelism = true;
    }
  }
  job.parallelism_pos = parallelism_pos;  // validate.cpp checks the degrees (cluster::CheckGroups) there
  if (job.min_gpus > job.gpus)
    return At(job.elastic_pos, "elastic.min_gpus " + std::to_string(job.min_gpus) + " is more than the job's gpus " +
                                   std::to_string(job.gpus) + "; choose 1.." + std::to_string(job.gpus));
  return job;
}

Status ReadWorkload(Reader& r, const Field& field, std::vector<JobSpec>& jobs) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, r.Pos(field), "workload", "workload"));
  std::map<std::string, SourcePos> names;
  for (const Field& f : fields) {  // only "jobs"
    RC_ASSIGN_OR_RETURN(auto items, r.Items(f));
    for (size_t i = 0; i < items.size(); ++i) {
      RC_ASSIGN_OR_RETURN(JobSpec job, ReadJob(r, items[i], Indexed("workload.jobs", i)));
      auto [first, inserted] = names.emplace(job.name, job.pos);
      if (!inserted) {
        return At(job.pos, "duplicate job name '" + job.name + "' (first at " + first->second.ToString() +
                               "); job names must be unique");
      }
      jobs.push_back(std::move(job));
    }
  }
  return Status::Ok();
}

Status ReadFaultField(Reader& r, const Field& f, const std::string& where, FaultSpec& fault) {
  if (f.key == "at") return r.Read(f, fault.at);
  if (f.key == "kind") {
    fault.kind_pos = r.Pos(f);
    return r.Read(f, fault.kind);
  }
  if (f.key == "for") return r.Read(f, fault.duration.emplace());
  if (f.key == "target") {
    fault.target.pos = r.Pos(f);
    RC_RETURN_IF_ERROR(r.Read(f, fault.target.text));
    auto selector = ParseSelector(fault.target.text);
    return selector.ok() ? Status::Ok() : At(fault.target.pos, "target: " + selector.status().message());
  }
  if (f.key == "pick") {
    fault.pick_pos = r.Pos(f);
    RC_RETURN_IF_ERROR(r.Read(f, fault.pick));
    auto pick = ParsePick(fault.pick);
    return pick.ok() ? Status::Ok() : At(fault.pick_pos, "pick: " + pick.status().message());
  }
  // params: any keys; each value a scalar, kept as text for the injector to check.
  RC_ASSIGN_OR_RETURN(auto params, r.Fields(f.value, r.Pos(f), "faults[].params", where + ".params", true));
  for (const Field& p : params) {
    PlanValue value{"", r.Pos(p)};
    RC_RETURN_IF_ERROR(r.Scalar(p, value.text));
    fault.params.emplace(p.key, std::move(value));
  }
  return Status::Ok();
}

Status ReadFaults(Reader& r, const Field& field, std::vector<FaultSpec>& faults) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  for (size_t i = 0; i < items.size(); ++i) {
    FaultSpec fault;
    fault.pos = r.Pos(items[i]);
    const std::string where = Indexed("faults", i);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], fault.pos, "faults[]", where));
    RC_RETURN_IF_ERROR(r.Require(fields, fault.pos, "faults[]", where));
    for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadFaultField(r, f, where, fault));
    faults.push_back(std::move(fault));
  }
  return Status::Ok();
}

// An item is a gate string, or a map {gate: "...", continuous: true}.
Status ReadExpect(Reader& r, const Field& field, std::vector<Expectation>& expect) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  for (size_t i = 0; i < items.size(); ++i) {
    Field item{Indexed("expect", i), field.key_node, items[i], nullptr};
    Expectation e{"", false, r.Pos(item)};
    if (items[i].IsMap()) {
      RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], e.pos, "expect[]", item.key));
      RC_RETURN_IF_ERROR(r.Require(fields, e.pos, "expect[]", item.key));
      for (const Field& f : fields) {
        if (f.key == "gate") {
          e.pos = r.Pos(f);
          RC_RETURN_IF_ERROR(r.Read(f, e.text));
        } else {
          RC_RETURN_IF_ERROR(r.Read(f, e.continuous));
        }
      }
    } else {
      RC_RETURN_IF_ERROR(r.Scalar(item, e.text));
    }
    if (e.text.empty()) return At(e.pos, item.key + " is empty; write a gate such as \"ttr.max < 30m\"");
    expect.push_back(std::move(e));
  }
  return Status::Ok();
}

Status ReadChaosClasses(Reader& r, const Field& field, ChaosSpec& chaos) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, r.Pos(field), "chaos.classes", "chaos.classes"));
  for (const Field& f : fields) {
    int& percent = f.key == "gpu" ? chaos.gpu_percent : f.key == "nic" ? chaos.nic_percent : chaos.node_percent;
    RC_RETURN_IF_ERROR(r.Read(f, percent));
  }
  return Status::Ok();
}

Status ReadChaos(Reader& r, const Field& field, ChaosSpec& chaos) {
  chaos.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, chaos.pos, "chaos", "chaos"));
  RC_RETURN_IF_ERROR(r.Require(fields, chaos.pos, "chaos", "chaos"));
  for (const Field& f : fields) {
    if (f.key == "catalogue")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.catalogue));
    else if (f.key == "scale")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.scale));
    else if (f.key == "from")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.from));
    else if (f.key == "until")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.until.emplace()));
    else if (f.key == "one_per_domain")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.one_per_domain));
    else if (f.key == "min_gap")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.min_gap.emplace()));
    else if (f.key == "classes")
      RC_RETURN_IF_ERROR(ReadChaosClasses(r, f, chaos));
  }
  return Status::Ok();
}

Status ReadAbort(Reader& r, const Field& field, AbortSpec& abort) {
  abort.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, abort.pos, "safety.abort", "safety.abort"));
  for (const Field& f : fields) {
    std::optional<int>& limit = f.key == "gpus_offline"      ? abort.gpus_offline
                                : f.key == "gpu_temperature" ? abort.gpu_temperature
                                : f.key == "jobs_down"       ? abort.jobs_down
                                                             : abort.faults_at_once;
    RC_RETURN_IF_ERROR(r.Read(f, limit.emplace()));
  }
  return Status::Ok();
}

Status ReadSafety(Reader& r, const Field& field, SafetySpec& safety) {
  safety.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, safety.pos, "safety", "safety"));
  for (const Field& f : fields) {
    if (f.key == "max_faults_at_once") {
      RC_RETURN_IF_ERROR(r.Read(f, safety.max_faults_at_once.emplace()));
    } else if (f.key == "max_gpus_impaired") {
      RC_RETURN_IF_ERROR(r.Read(f, safety.max_gpus_impaired.emplace()));
    } else if (f.key == "abort") {
      RC_RETURN_IF_ERROR(ReadAbort(r, f, safety.abort));
    } else {  // allow
      RC_ASSIGN_OR_RETURN(auto items, r.Items(f));
      auto& allow = safety.allow.emplace();
      for (size_t i = 0; i < items.size(); ++i) {
        Field item{Indexed("safety.allow", i), f.key_node, items[i], nullptr};
        PlanValue kind{"", r.Pos(item)};
        RC_RETURN_IF_ERROR(r.Scalar(item, kind.text));
        allow.push_back(std::move(kind));
      }
    }
  }
  return Status::Ok();
}

Status ReadTop(Reader& r, const Field& f, Plan& plan) {
  if (f.key == "name") return r.Read(f, plan.name);
  if (f.key == "description") return r.Scalar(f, plan.description);
  if (f.key == "seed") return r.Read(f, plan.seed);
  if (f.key == "duration") return r.Read(f, plan.duration.emplace());
  if (f.key == "cluster") return ReadCluster(r, f, plan.cluster);
  if (f.key == "workload") return ReadWorkload(r, f, plan.jobs);
  if (f.key == "faults") return ReadFaults(r, f, plan.faults);
  if (f.key == "expect") return ReadExpect(r, f, plan.expect);
  if (f.key == "chaos") return ReadChaos(r, f, plan.chaos);
  if (f.key == "safety") return ReadSafety(r, f, plan.safety);
  plan.healer.pos = r.Pos(f);  // healer
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, plan.healer.pos, "healer", "healer"));
  for (const Field& h : fields) {
    plan.healer.pos = r.Pos(h);
    RC_RETURN_IF_ERROR(r.Read(h, plan.healer.policy));
  }
  return Status::Ok();
}

// Parses the YAML and walks it; yaml-cpp reports problems by throwing, so this is where that stops.
Status Walk(const std::string& text, Reader& r, Plan& plan) {
  const SourcePos start{r.file(), 1, 1};
  try {
    // YAML::Load, not LoadAll: LoadAll in yaml-cpp 0.7 loops forever on input such as ","
    // (jbeder/yaml-cpp#1040); CheckOneDocument has already refused a second document.
    const YAML::Node root = YAML::Load(text);
    if (root.IsNull()) {
      return At(start, "the plan is empty; a plan is a map with at least a name, e.g. name: quickstart");
    }
    if (!root.IsMap()) {
      return At(r.Pos(root), std::string("the plan is ") + NodeKind(root) +
                                 "; a plan is a map of keys such as name:, cluster:, workload:, faults:");
    }
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(root, start, "", "the plan"));
    RC_RETURN_IF_ERROR(r.Require(fields, r.Pos(root), "", "the plan"));
    for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadTop(r, f, plan));
    return Status::Ok();
  } catch (const YAML::ParserException& e) {
    SourcePos pos = e.mark.is_null() ? start : SourcePos{r.file(), e.mark.line + 1, e.mark.column + 1};
    return At(pos,
              "YAML syntax error: " + e.msg + "; check the indentation (spaces, not tabs), quotes and brackets here");
  } catch (const std::exception& e) {
    return At(start, std::string("could not read the YAML: ") + e.what());
  }
}

}  // namespace

Result<Plan> ParsePlan(const std::string& text, const std::string& path_for_messages) {
  if (text.size() > kMaxPlanBytes) {
    return Status::Invalid(path_for_messages + ": the plan is " + std::to_string(text.size()) +
                           " bytes; plans are limited to 16 MiB");
  }
  RC_RETURN_IF_ERROR(GuardYamlText(text, path_for_messages, {"plan", kMaxPlanDepth, 5}));
  Plan plan;
  plan.path = path_for_messages;
  plan.text = text;
  Reader reader(path_for_messages);
  // Messages quote the plan's own values, which may hold newlines.
  RC_RETURN_IF_ERROR(OneLine(Walk(text, reader, plan)));
  return plan;
}

Result<Plan> LoadPlan(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return Status::NotFound(path + ": no such plan file");
  if (std::filesystem::is_directory(status)) return Status::IoError(path + ": is a directory, not a plan file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError(path + ": cannot read: " + ec.message());
  if (size > kMaxPlanBytes) {
    return Status::IoError(path + ": the file is " + std::to_string(size) + " bytes; plans are limited to 16 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    if (size != 0) return Status::IoError(path + ": cannot read the file");
  }
  return ParsePlan(text.str(), path);
}

}  // namespace rackchaos::runner
