#include "healer/policy.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/units.h"

extern const char* const kPolicyDefault;
extern const char* const kPolicyConservative;
extern const char* const kPolicyAggressive;

namespace rackchaos::healer {
namespace {

const std::map<std::string, const char*>& Shipped() {
  static const std::map<std::string, const char*> kPolicies = {
      {"aggressive", kPolicyAggressive}, {"conservative", kPolicyConservative}, {"default", kPolicyDefault}};
  return kPolicies;
}

// Reads optional keys; a present key with a bad value is an error naming origin:line and the key.
class Reader {
 public:
  Reader(YAML::Node root, std::string origin) : root_(std::move(root)), origin_(std::move(origin)) {}

  // `expected` says what a valid value looks like ("true or false"), for the wrong-type message.
  void Read(const std::vector<std::string>& path, const char* expected,
            const std::function<Status(const YAML::Node&)>& set) {
    std::string dotted;
    for (const auto& k : path) known_[dotted].insert(k), dotted += (dotted.empty() ? "" : ".") + k;
    if (!status_.ok()) return;
    YAML::Node n = root_;
    for (const auto& key : path) {
      const YAML::Node& parent = n;  // const lookup: never inserts the key
      if (!parent.IsMap() || !parent[key]) return;
      // reset() rebinds `n`; `n = parent[key]` would assign through the shared node and overwrite root_
      // with the child, so every key read after the first nested one was silently ignored.
      n.reset(parent[key]);
    }
    std::string where = Where(n);
    try {
      Status s = set(n);
      if (!s.ok()) status_ = Status::Invalid(where + s.message());
    } catch (const YAML::Exception&) {
      std::string key;
      for (const auto& k : path) key += (key.empty() ? "" : ".") + k;
      status_ = Status::Invalid(where + key + " must be " + expected + "; `rackchaos explain default` shows every key");
    }
  }
  void Int(const std::vector<std::string>& path, int& out, int lo, int hi) {
    Read(path, "a whole number", [&](const YAML::Node& n) {
      int v = n.as<int>();
      if (v < lo || v > hi)
        return Status::Invalid(Dotted(path) + " is " + std::to_string(v) + "; it must be a whole number from " +
                               std::to_string(lo) + " to " + std::to_string(hi));
      out = v;
      return Status::Ok();
    });
  }
  void Double(const std::vector<std::string>& path, double& out) {
    Read(path, "a number", [&](const YAML::Node& n) { out = n.as<double>(); return Status::Ok(); });
  }
  void Bool(const std::vector<std::string>& path, bool& out) {
    Read(path, "true or false", [&](const YAML::Node& n) { out = n.as<bool>(); return Status::Ok(); });
  }
  void Dur(const std::vector<std::string>& path, Duration& out) {
    Read(path, "a duration such as 90s or 5m", [&](const YAML::Node& n) {
      auto d = ParseDuration(n.as<std::string>());
      if (!d.ok()) return d.status();
      out = *d;
      return Status::Ok();
    });
  }
  void Frac(const std::vector<std::string>& path, double& out) {
    Read(path, "a fraction such as 30% or 0.3", [&](const YAML::Node& n) {
      auto f = ParseFraction(n.as<std::string>());
      if (!f.ok()) return f.status();
      out = *f;
      return Status::Ok();
    });
  }
  const Status& status() const { return status_; }

  // Every key in the document must be one Read() knows: a misspelt key would otherwise silently leave
  // its default in place. Call after all reads.
  Status CheckKeys() const { return CheckMap(root_, ""); }

 private:
  static std::string Dotted(const std::vector<std::string>& path) {
    std::string out;
    for (const auto& k : path) out += (out.empty() ? "" : ".") + k;
    return out;
  }
  std::string Where(const YAML::Node& n) const {
    return origin_ + ":" + std::to_string(n.Mark().line + 1) + ":" + std::to_string(n.Mark().column + 1) + ": ";
  }
  Status CheckMap(const YAML::Node& map, const std::string& prefix) const {
    auto known = known_.find(prefix);
    std::string list;
    for (const auto& k : known->second) list += (list.empty() ? "" : ", ") + k;
    if (!map.IsMap())
      return Status::Invalid(Where(map) + prefix + " must be a map with keys: " + list);
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      if (!known->second.count(key))
        return Status::Invalid(Where(it->first) + "unknown policy key '" + key + "'" +
                               (prefix.empty() ? "" : " in " + prefix) + "; known keys: " + list);
      std::string child = prefix.empty() ? key : prefix + "." + key;
      if (known_.count(child)) RC_RETURN_IF_ERROR(CheckMap(it->second, child));
    }
    return Status::Ok();
  }

  std::map<std::string, std::set<std::string>> known_;  // dotted parent ("" = top) -> keys read under it
  YAML::Node root_;
  std::string origin_;
  Status status_;
};

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

std::vector<std::string> ShippedPolicyNames() {
  std::vector<std::string> out;
  for (const auto& [name, text] : Shipped()) out.push_back(name);
  return out;
}

const char* ShippedPolicyText(const std::string& name) {
  auto it = Shipped().find(name);
  return it == Shipped().end() ? nullptr : it->second;
}

Result<Policy> LoadPolicy(const std::string& name_or_path) {
  auto it = Shipped().find(name_or_path);
  if (it != Shipped().end()) return ParsePolicy(it->second, "policy " + name_or_path);
  bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") ||
                 name_or_path.ends_with(".yml");
  if (!is_path) {
    std::string known;
    for (const auto& n : ShippedPolicyNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown healer policy '" + name_or_path + "'; shipped policies: " + known +
                            " (or give a path to a policy YAML)");
  }
  std::ifstream in(name_or_path);
  if (!in) return Status::NotFound("cannot read healer policy file " + name_or_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePolicy(ss.str(), name_or_path);
}

Result<Policy> ParsePolicy(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(origin + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                           ": " + e.msg);
  }
  if (!root.IsMap()) return Status::Invalid(origin + ": a policy is a YAML map");
  Policy p;
  Reader r(root, origin);
  r.Read({"name"}, "a string", [&](const YAML::Node& n) { p.name = n.as<std::string>(); return Status::Ok(); });
  r.Read({"description"}, "a string", [&](const YAML::Node& n) { p.description = n.as<std::string>(); return Status::Ok(); });
  r.Int({"detectors", "heartbeat", "missed_beats"}, p.heartbeat_missed_beats, 1, 1000);
  r.Dur({"detectors", "straggler", "window"}, p.straggler_window);
  r.Int({"detectors", "straggler", "min_reports"}, p.straggler_min_reports, 1, 100000);
  r.Double({"detectors", "straggler", "mad_threshold"}, p.straggler_mad_threshold);
  r.Frac({"detectors", "straggler", "min_slowdown"}, p.straggler_min_slowdown);
  r.Dur({"detectors", "slow_link", "window"}, p.slow_link.window);
  r.Int({"detectors", "slow_link", "min_reports"}, p.slow_link.min_reports, 1, 100000);
  r.Double({"detectors", "slow_link", "mad_threshold"}, p.slow_link.mad_threshold);
  r.Frac({"detectors", "slow_link", "min_slowdown"}, p.slow_link.min_slowdown);
  r.Dur({"detectors", "slow_link", "min_excess"}, p.slow_link.min_excess);
  r.Double({"detectors", "thermal", "temperature_c"}, p.thermal_temperature_c);
  r.Int({"detectors", "thermal", "samples"}, p.thermal_samples, 1, 1000);
  r.Frac({"detectors", "thermal", "flow_drop"}, p.thermal_flow_drop);
  r.Dur({"correlation_window"}, p.correlation_window);
  r.Int({"shared_domain_min_trays"}, p.shared_domain_min_trays, 2, 1000);
  r.Frac({"circuit_breaker", "max_share"}, p.breaker_max_share);
  r.Dur({"circuit_breaker", "window"}, p.breaker_window);
  r.Bool({"remediation", "restart_jobs"}, p.restart_jobs);
  r.Bool({"remediation", "gpu_reset"}, p.gpu_reset);
  r.Bool({"remediation", "reboot"}, p.reboot);
  r.Dur({"remediation", "reboot_wait"}, p.reboot_wait);
  r.Bool({"remediation", "wait_for_repair"}, p.wait_for_repair);
  r.Bool({"remediation", "shrink"}, p.shrink);
  for (auto [key, field] : std::initializer_list<std::pair<const char*, Duration*>>{
           {"gpu", &p.repair.gpu}, {"tray", &p.repair.tray}, {"nic", &p.repair.nic}, {"cooling", &p.repair.cooling},
           {"switch_tray", &p.repair.switch_tray}, {"power", &p.repair.power}, {"rack", &p.repair.rack}})
    r.Dur({"repair", key}, *field);
  r.Dur({"return_to_service", "recheck"}, p.recheck);
  r.Dur({"return_to_service", "burn_in"}, p.burn_in);
  RC_RETURN_IF_ERROR(r.status());
  RC_RETURN_IF_ERROR(r.CheckKeys());
  if (p.name.empty()) return Status::Invalid(origin + ": a policy needs a name");
  return p;
}

}  // namespace rackchaos::healer
