#include "runner/campaign/sweep_grid.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <utility>

#include "runner/plan/plan_loader.h"

namespace rackchaos::runner {
namespace {

enum class Type { kName, kInt, kCount, kDuration, kSpan, kNumber };  // kSpan: a duration that may be 0

struct GridKey {
  const char* key;
  Type type;
  const char* example;
  std::function<void(Plan&, const std::string&)> plan;                // plan-level keys
  std::function<void(healer::Policy&, const std::string&)> policy;    // healer thresholds
};

int Int(const std::string& v) { return std::atoi(v.c_str()); }
Duration Dur(const std::string& v) { return *ParseDuration(v); }
double Num(const std::string& v) { return std::strtod(v.c_str(), nullptr); }

const std::vector<GridKey>& Keys() {
  static const std::vector<GridKey> kKeys = {
      {"healer", Type::kName, "default,aggressive", nullptr, nullptr},  // ValidateOptions::healer_policy
      {"chaos.scale", Type::kNumber, "0.5,2", [](Plan& p, const std::string& v) { p.chaos.scale = Num(v); }, nullptr},
      {"spares", Type::kCount, "0,2", [](Plan& p, const std::string& v) { p.cluster.spare_trays = Int(v); }, nullptr},
      {"checkpoint.interval", Type::kDuration, "10m,30m",
       [](Plan& p, const std::string& v) { for (JobSpec& j : p.jobs) j.checkpoint_interval = Dur(v); }, nullptr},
      {"healer.missed_beats", Type::kInt, "2,3", nullptr,
       [](healer::Policy& p, const std::string& v) { p.heartbeat_missed_beats = Int(v); }},
      {"healer.straggler_window", Type::kDuration, "1m,5m", nullptr,
       [](healer::Policy& p, const std::string& v) { p.straggler_window = Dur(v); }},
      {"healer.mad_threshold", Type::kNumber, "4,6", nullptr,
       [](healer::Policy& p, const std::string& v) { p.straggler_mad_threshold = Num(v); }},
      {"healer.temperature_c", Type::kNumber, "80,85", nullptr,
       [](healer::Policy& p, const std::string& v) { p.thermal_temperature_c = Num(v); }},
      {"healer.correlation_window", Type::kDuration, "10s,20s", nullptr,
       [](healer::Policy& p, const std::string& v) { p.correlation_window = Dur(v); }},
      {"healer.recheck", Type::kDuration, "5m,10m", nullptr,
       [](healer::Policy& p, const std::string& v) { p.recheck = Dur(v); }},
      {"healer.burn_in", Type::kSpan, "0s,2h", nullptr,
       [](healer::Policy& p, const std::string& v) { p.burn_in = Dur(v); }},
  };
  return kKeys;
}

const GridKey* Find(const std::string& key) {
  for (const GridKey& k : Keys())
    if (key == k.key) return &k;
  return nullptr;
}

bool Valid(Type type, const std::string& v) {
  switch (type) {
    case Type::kName:
      return !v.empty();
    case Type::kInt:
    case Type::kCount: {
      int n = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      return !v.empty() && ec == std::errc() && ptr == v.data() + v.size() && n >= (type == Type::kInt ? 1 : 0);
    }
    case Type::kDuration:
    case Type::kSpan: {
      auto d = ParseDuration(v);
      return d.ok() && (*d > Duration{} || (type == Type::kSpan && *d == Duration{}));
    }
    case Type::kNumber: {
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      return !v.empty() && end == v.c_str() + v.size() && std::isfinite(x) && x > 0;
    }
  }
  return false;
}

// The plan key a grid key sets, whose bounds (the plan key table) its values must keep.
const KeyInfo* PlanKeyOf(const std::string& grid_key) {
  const std::pair<std::string_view, std::string_view> where =
      grid_key == "chaos.scale"           ? std::pair{"chaos", "scale"}
      : grid_key == "checkpoint.interval" ? std::pair{"workload.jobs[].checkpoint", "interval"}
      : grid_key == "spares"              ? std::pair{"cluster", "spare_trays"}
                                          : std::pair{"", ""};
  for (const KeyInfo& k : PlanKeys())
    if (k.section == where.first && k.key == where.second) return &k;
  return nullptr;
}

// The policy key a healer.* grid key sets, whose bounds (healer::PolicyBounds) its values must keep.
const healer::PolicyBound* PolicyKeyOf(const std::string& grid_key) {
  static const std::pair<std::string_view, std::string_view> kKeys[] = {
      {"healer.missed_beats", "detectors.heartbeat.missed_beats"},
      {"healer.straggler_window", "detectors.straggler.window"},
      {"healer.mad_threshold", "detectors.straggler.mad_threshold"},
      {"healer.temperature_c", "detectors.thermal.temperature_c"},
      {"healer.correlation_window", "correlation_window"},
      {"healer.recheck", "return_to_service.recheck"},
      {"healer.burn_in", "return_to_service.burn_in"},
  };
  for (const auto& [grid, policy] : kKeys)
    if (grid == grid_key) return &healer::PolicyBoundOf(policy);
  return nullptr;
}

// Within the bounds of the plan or policy key the grid key sets ("" when it is, or has none), as their
// loaders would check it. Valid() has parsed `v` as the key's type.
std::string OutOfBounds(const std::string& grid_key, const std::string& v) {
  if (const healer::PolicyBound* b = PolicyKeyOf(grid_key)) {
    const double x = b->kind == healer::PolicyBound::Kind::kDuration ? ParseDuration(v)->Seconds() : Num(v);
    if (x >= b->min && x <= b->max) return "";
    return "is out of range; expected " + healer::DescribeBound(*b);
  }
  const KeyInfo* k = PlanKeyOf(grid_key);
  if (!k) return "";
  int64_t n = 0;
  if (k->type == KeyInfo::Type::kDuration) {
    n = ParseDuration(v)->us;
  } else {
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc()) n = k->max + 1;
  }
  if (n >= k->min && n <= k->max) return "";
  return "is out of range; expected " + DescribeType(*k);
}

}  // namespace

std::string GridKeyList() {
  std::string out;
  for (const GridKey& k : Keys()) out += (out.empty() ? "" : ", ") + std::string(k.key);
  return out;
}

Result<GridAxis> ParseGridAxis(const std::string& text) {
  size_t eq = text.find('=');
  GridAxis axis;
  axis.key = text.substr(0, eq);
  const GridKey* key = eq == std::string::npos ? nullptr : Find(axis.key);
  if (!key) return Status::Invalid("--grid '" + text + "': expected KEY=v1,v2 with KEY one of: " + GridKeyList());
  for (size_t start = eq + 1; start <= text.size();) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string v = text.substr(start, comma - start);
    if (!Valid(key->type, v))
      return Status::Invalid("--grid '" + text + "': '" + v + "' is not a valid " + axis.key + " value (e.g. " +
                             axis.key + "=" + key->example + ")");
    if (std::string why = OutOfBounds(axis.key, v); !why.empty())
      return Status::Invalid("--grid '" + text + "': " + axis.key + " '" + v + "' " + why);
    axis.values.push_back(v);
    start = comma + 1;
  }
  return axis;
}

Status ApplyGridToPlan(Plan& plan, const std::string& key, const std::string& value) {
  const GridKey* k = Find(key);
  if (!k || !k->plan) return Status::Ok();
  if (key == "chaos.scale" && plan.chaos.catalogue.empty())
    return Status::Invalid(plan.path + ": --grid chaos.scale needs a plan with a chaos: section");
  if (key == "checkpoint.interval" && plan.jobs.empty())
    return Status::Invalid(plan.path + ": --grid checkpoint.interval needs a plan with jobs");
  k->plan(plan, value);
  return Status::Ok();
}

void ApplyGridToPolicy(healer::Policy& policy, const std::string& key, const std::string& value) {
  const GridKey* k = Find(key);
  if (k && k->policy) k->policy(policy, value);
}

}  // namespace rackchaos::runner
