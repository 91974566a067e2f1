#include "healer/policy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "core/embedded.h"
#include "core/strings.h"
#include "core/units.h"
#include "core/user_file.h"
#include "core/yaml_reader.h"

namespace rackchaos::healer {
namespace {

const yaml::Format kPolicyFormat{"healer policy", 64, 4};

// One key of a policy file: its dotted path, the member it sets and how its value reads. Every key the
// loader accepts is here, so a misspelt one is refused instead of silently leaving its default.
template <typename T>
using Member = T& (*)(Policy&);
struct PolicyKey {
  std::string_view path;
  std::variant<Member<std::string>, Member<int>, Member<double>, Member<Duration>, Member<bool>> member;
};

// In documentation order (messages list the keys of a section in this order).
const PolicyKey kPolicyKeys[] = {
    {"name", [](Policy& p) -> std::string& { return p.name; }},
    {"description", [](Policy& p) -> std::string& { return p.description; }},
    {"detectors.heartbeat.missed_beats", [](Policy& p) -> int& { return p.heartbeat_missed_beats; }},
    {"detectors.straggler.window", [](Policy& p) -> Duration& { return p.straggler_window; }},
    {"detectors.straggler.min_reports", [](Policy& p) -> int& { return p.straggler_min_reports; }},
    {"detectors.straggler.mad_threshold", [](Policy& p) -> double& { return p.straggler_mad_threshold; }},
    {"detectors.straggler.min_slowdown", [](Policy& p) -> double& { return p.straggler_min_slowdown; }},
    {"detectors.slow_link.window", [](Policy& p) -> Duration& { return p.slow_link.window; }},
    {"detectors.slow_link.min_reports", [](Policy& p) -> int& { return p.slow_link.min_reports; }},
    {"detectors.slow_link.mad_threshold", [](Policy& p) -> double& { return p.slow_link.mad_threshold; }},
    {"detectors.slow_link.min_slowdown", [](Policy& p) -> double& { return p.slow_link.min_slowdown; }},
    {"detectors.slow_link.min_excess", [](Policy& p) -> Duration& { return p.slow_link.min_excess; }},
    {"detectors.thermal.temperature_c", [](Policy& p) -> double& { return p.thermal_temperature_c; }},
    {"detectors.thermal.samples", [](Policy& p) -> int& { return p.thermal_samples; }},
    {"detectors.thermal.flow_drop", [](Policy& p) -> double& { return p.thermal_flow_drop; }},
    {"detectors.clock.enabled", [](Policy& p) -> bool& { return p.clock_enabled; }},
    {"detectors.clock.min_clock", [](Policy& p) -> double& { return p.clock_min_fraction; }},
    {"detectors.clock.samples", [](Policy& p) -> int& { return p.clock_samples; }},
    {"correlation_window", [](Policy& p) -> Duration& { return p.correlation_window; }},
    {"shared_domain_min_trays", [](Policy& p) -> int& { return p.shared_domain_min_trays; }},
    {"circuit_breaker.max_share", [](Policy& p) -> double& { return p.breaker_max_share; }},
    {"circuit_breaker.window", [](Policy& p) -> Duration& { return p.breaker_window; }},
    {"remediation.restart_jobs", [](Policy& p) -> bool& { return p.restart_jobs; }},
    {"remediation.gpu_reset", [](Policy& p) -> bool& { return p.gpu_reset; }},
    {"remediation.reboot", [](Policy& p) -> bool& { return p.reboot; }},
    {"remediation.reboot_wait", [](Policy& p) -> Duration& { return p.reboot_wait; }},
    {"remediation.wait_for_repair", [](Policy& p) -> bool& { return p.wait_for_repair; }},
    {"remediation.shrink", [](Policy& p) -> bool& { return p.shrink; }},
    {"repair.gpu", [](Policy& p) -> Duration& { return p.repair.gpu; }},
    {"repair.tray", [](Policy& p) -> Duration& { return p.repair.tray; }},
    {"repair.switch_tray", [](Policy& p) -> Duration& { return p.repair.switch_tray; }},
    {"repair.nic", [](Policy& p) -> Duration& { return p.repair.nic; }},
    {"repair.cooling", [](Policy& p) -> Duration& { return p.repair.cooling; }},
    {"repair.power", [](Policy& p) -> Duration& { return p.repair.power; }},
    {"repair.rack", [](Policy& p) -> Duration& { return p.repair.rack; }},
    {"return_to_service.recheck", [](Policy& p) -> Duration& { return p.recheck; }},
    {"return_to_service.burn_in", [](Policy& p) -> Duration& { return p.burn_in; }},
};

const PolicyKey* FindKey(std::string_view path) {
  for (const PolicyKey& k : kPolicyKeys)
    if (k.path == path) return &k;
  return nullptr;
}

// The keys directly under `prefix` ("" = the top level), each once, in table order: leaves and sections.
std::vector<std::string> KeysUnder(const std::string& prefix) {
  std::vector<std::string> out;
  for (const PolicyKey& k : kPolicyKeys) {
    std::string_view rest = k.path;
    if (!prefix.empty()) {
      if (!rest.starts_with(prefix) || rest.size() <= prefix.size() || rest[prefix.size()] != '.') continue;
      rest.remove_prefix(prefix.size() + 1);
    }
    std::string key(rest.substr(0, rest.find('.')));
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  }
  return out;
}

Status ReadKey(const yaml::Reader& r, const yaml::Entry& e, const PolicyKey& key, Policy& p) {
  struct Visitor {
    const yaml::Reader& r;
    const yaml::Entry& e;
    const PolicyKey& key;
    Policy& p;
    Status operator()(Member<std::string> m) const {
      return key.path == "name" ? r.String(e, m(p)) : r.Scalar(e, m(p), "a string");
    }
    // Every number within its bound (PolicyBounds()); a refusal names the key, its value and the range.
    Status OutOfRange() const {
      return r.Error(e.value, std::string(key.path) + " is " + e.value.Scalar() + "; it must be " +
                                  DescribeBound(PolicyBoundOf(key.path)));
    }
    Status operator()(Member<int> m) const {
      const PolicyBound& b = PolicyBoundOf(key.path);
      int v = 0;
      if (!r.Int(e, static_cast<int>(b.min), static_cast<int>(b.max), v).ok()) return OutOfRange();
      m(p) = v;
      return Status::Ok();
    }
    Status operator()(Member<double> m) const {
      const PolicyBound& b = PolicyBoundOf(key.path);
      double v = 0;
      const bool fraction = b.kind == PolicyBound::Kind::kFraction;  // written as 30% or 0.3
      if (!(fraction ? r.Fraction(e, v) : r.Number(e, v)).ok() || !(v >= b.min && v <= b.max)) return OutOfRange();
      m(p) = v;
      return Status::Ok();
    }
    Status operator()(Member<Duration> m) const {
      const PolicyBound& b = PolicyBoundOf(key.path);
      Duration v;
      RC_RETURN_IF_ERROR(r.Dur(e, v));  // not a duration: the reader's own message says what one looks like
      if (v.Seconds() < b.min || v.Seconds() > b.max) return OutOfRange();
      m(p) = v;
      return Status::Ok();
    }
    Status operator()(Member<bool> m) const { return r.Bool(e, m(p)); }
  };
  return std::visit(Visitor{r, e, key, p}, key.member);
}

// Reads the map under `prefix` ("" = the document): its leaves into `p`, its sections recursively.
Status ReadSection(yaml::Reader& r, const YAML::Node& node, const std::string& prefix, Policy& p) {
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(node, prefix, KeysUnder(prefix)));
  for (yaml::Entry& e : entries) {
    e.name = prefix.empty() ? e.key : prefix + "." + e.key;
    if (const PolicyKey* key = FindKey(e.name))
      RC_RETURN_IF_ERROR(ReadKey(r, e, *key, p));
    else
      RC_RETURN_IF_ERROR(ReadSection(r, e.value, e.name, p));
  }
  return Status::Ok();
}

}  // namespace

Duration RepairTimes::Of(const std::string& cls) const {
  if (cls == "gpu") return gpu;
  if (cls == "nic") return nic;
  if (cls == "cooling") return cooling;
  if (cls == "switch_tray") return switch_tray;
  if (cls == "power") return power;
  if (cls == "rack") return rack;
  return tray;
}

const char* RepairClassOf(cluster::Kind kind) {
  switch (kind) {
    case cluster::Kind::kGpu: return "gpu";
    case cluster::Kind::kNic:
    case cluster::Kind::kLeaf:  // the scale-out network: a cable, transceiver or switch swap
    case cluster::Kind::kRail:
    case cluster::Kind::kSpine:
    case cluster::Kind::kSuperSpine:
    case cluster::Kind::kDpu: return "nic";
    case cluster::Kind::kValve:
    case cluster::Kind::kCdu:
    case cluster::Kind::kPump: return "cooling";
    case cluster::Kind::kSwitchTray: return "switch_tray";
    case cluster::Kind::kPowerShelf:
    case cluster::Kind::kPsu: return "power";
    case cluster::Kind::kRack:
    case cluster::Kind::kNvlinkDomain: return "rack";
    case cluster::Kind::kRegion:
    case cluster::Kind::kObjectStore:
    case cluster::Kind::kCheckpointStore: return "rack";
    case cluster::Kind::kComputeTray:
    case cluster::Kind::kCpu: return "tray";
  }
  return "tray";
}

std::vector<std::string> ShippedPolicyNames() { return EmbeddedNames(kHealerPolicyText); }

const char* ShippedPolicyText(const std::string& name) {
  const EmbeddedText* t = FindEmbedded(kHealerPolicyText, name);
  return t == nullptr ? nullptr : t->text.data();
}

Result<Policy> LoadPolicy(const std::string& name_or_path) {
  if (const EmbeddedText* t = FindEmbedded(kHealerPolicyText, name_or_path))
    return ParsePolicy(std::string(t->text), std::string(t->file));
  bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") ||
                 name_or_path.ends_with(".yml");
  if (!is_path) {
    return Status::NotFound("unknown healer policy " + Quote(name_or_path) + "; shipped policies: " +
                            Join(ShippedPolicyNames()) + " (or give a path to a policy YAML)");
  }
  RC_ASSIGN_OR_RETURN(std::string text, ReadUserFile(name_or_path, {kPolicyFormat.what, kMaxPolicyBytes}));
  return ParsePolicy(text, name_or_path);
}

const std::vector<PolicyBound>& PolicyBounds() {
  // What a detector or a repair could mean, with room. A zero is refused where the healer repeats on it (a
  // window, a recheck period, a reboot wait); a repair, the burn-in, the correlation window and the slow-link
  // excess may be 0 (no wait, no slack).
  using K = PolicyBound::Kind;
  constexpr double kHour = 3600, kDay = 24 * kHour;
  static const std::vector<PolicyBound> kBounds = {
      {"detectors.heartbeat.missed_beats", K::kInt, 1, 1000},
      {"detectors.straggler.window", K::kDuration, 1, kDay},
      {"detectors.straggler.min_reports", K::kInt, 1, 100000},
      {"detectors.straggler.mad_threshold", K::kNumber, 0.5, 1000},
      {"detectors.straggler.min_slowdown", K::kFraction, 0, 1},
      {"detectors.slow_link.window", K::kDuration, 1, kDay},
      {"detectors.slow_link.min_reports", K::kInt, 1, 100000},
      {"detectors.slow_link.mad_threshold", K::kNumber, 0.5, 1000},
      {"detectors.slow_link.min_slowdown", K::kFraction, 0, 1},
      {"detectors.slow_link.min_excess", K::kDuration, 0, kHour},
      {"detectors.thermal.temperature_c", K::kNumber, 20, 150},
      {"detectors.thermal.samples", K::kInt, 1, 1000},
      {"detectors.thermal.flow_drop", K::kFraction, 0, 1},
      {"detectors.clock.min_clock", K::kFraction, 0, 1},
      {"detectors.clock.samples", K::kInt, 1, 1000},
      {"correlation_window", K::kDuration, 0, kHour},
      {"shared_domain_min_trays", K::kInt, 2, 1000},
      {"circuit_breaker.max_share", K::kFraction, 0, 1},
      {"circuit_breaker.window", K::kDuration, 1, 30 * kDay},
      {"remediation.reboot_wait", K::kDuration, 1, kDay},
      {"repair.gpu", K::kDuration, 0, 365 * kDay},
      {"repair.tray", K::kDuration, 0, 365 * kDay},
      {"repair.nic", K::kDuration, 0, 365 * kDay},
      {"repair.cooling", K::kDuration, 0, 365 * kDay},
      {"repair.switch_tray", K::kDuration, 0, 365 * kDay},
      {"repair.power", K::kDuration, 0, 365 * kDay},
      {"repair.rack", K::kDuration, 0, 365 * kDay},
      {"return_to_service.recheck", K::kDuration, 1, kDay},
      {"return_to_service.burn_in", K::kDuration, 0, 30 * kDay},
  };
  return kBounds;
}

const PolicyBound& PolicyBoundOf(std::string_view key) {
  for (const PolicyBound& b : PolicyBounds())
    if (b.key == key) return b;
  std::abort();  // every caller names a key of the table above
}

std::string DescribeBound(const PolicyBound& b) {
  const auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  switch (b.kind) {
    case PolicyBound::Kind::kInt:
      return "a whole number from " + number(b.min) + " to " + number(b.max);
    case PolicyBound::Kind::kNumber:
      return "a number from " + number(b.min) + " to " + number(b.max);
    case PolicyBound::Kind::kDuration:
      return "a duration from " + FormatDuration(Duration::FromSecondsF(b.min)) + " to " +
             FormatDuration(Duration::FromSecondsF(b.max));
    case PolicyBound::Kind::kFraction:
      return "a fraction from " + number(b.min * 100) + "% to " + number(b.max * 100) + "%";
  }
  return "";
}

Result<Policy> ParsePolicy(const std::string& yaml_text, const std::string& origin) {
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(yaml_text, origin, kPolicyFormat));
  Policy p;
  yaml::Reader r(origin, kPolicyFormat);
  // Messages may quote the file's values, which may hold control characters: keep them one line.
  RC_RETURN_IF_ERROR(OneLine(ReadSection(r, root, "", p)));
  if (p.name.empty()) return At({origin, 1, 1}, "a healer policy needs a name (e.g. name: site)");
  return p;
}

}  // namespace rackchaos::healer
