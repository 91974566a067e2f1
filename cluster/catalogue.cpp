#include "cluster/catalogue.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>

// The shipped catalogue files, embedded at build time (see rackchaos_embed in the top CMakeLists.txt).
extern const char* const kCatalogueGb200Nvl72;
extern const char* const kCatalogueGb300Nvl72;
extern const char* const kCatalogueVrNvl72;
extern const char* const kCatalogueGb200Nvl36x2;
extern const char* const kCatalogueHelios;
extern const char* const kCatalogueHgxB200;

namespace rackchaos::cluster {
namespace {

// The explicit table of shipped models.
const std::map<std::string, const char*>& ShippedModels() {
  static const std::map<std::string, const char*> kModels = {
      {"gb200-nvl72", kCatalogueGb200Nvl72},
      {"gb200-nvl36x2", kCatalogueGb200Nvl36x2},
      {"gb300-nvl72", kCatalogueGb300Nvl72},
      {"helios", kCatalogueHelios},
      {"hgx-b200", kCatalogueHgxB200},
      {"vr-nvl72", kCatalogueVrNvl72},
  };
  return kModels;
}

// Reads `section.key` from the YAML, turning absence or a bad type into a Status naming both.
class Reader {
 public:
  Reader(const YAML::Node& root, std::string origin) : root_(root), origin_(std::move(origin)) {}

  template <typename T>
  void Get(const char* section, const char* key, T& out) {
    if (!status_.ok()) return;
    std::string where = origin_ + ": " + (section ? std::string(section) + "." : "") + key;
    std::optional<YAML::Node> found;  // not `node = ...`: assigning a yaml-cpp node rewrites its target
    try {  // yaml-cpp throws when a scalar is subscripted ("nic: 400" where a map belongs)
      found.emplace(section ? root_[section][key] : root_[key]);
    } catch (const YAML::Exception& e) {
      status_ = Status::Invalid(where + ": " + (section ? std::string(section) : std::string("the file")) +
                                " is not a map (line " + std::to_string(e.mark.line + 1) + ")");
      return;
    }
    const YAML::Node& node = *found;
    if (!node) {
      status_ = Status::Invalid(where + " is missing");
      return;
    }
    try {
      out = node.as<T>();
    } catch (const YAML::Exception& e) {
      status_ = Status::Invalid(where + " has the wrong type (line " + std::to_string(node.Mark().line + 1) + ")");
    }
  }
  // An optional key: `out` keeps its default when the key (or its section) is absent.
  template <typename T>
  void GetOptional(const char* section, const char* key, T& out) {
    if (!status_.ok()) return;
    bool present = false;
    try {
      present =
          section ? root_[section] && root_[section].IsMap() && root_[section][key] : static_cast<bool>(root_[key]);
    } catch (const YAML::Exception&) {
      present = false;
    }
    if (present) Get(section, key, out);
  }
  void GetDuration(const char* section, const char* key, Duration& out) {
    std::string text;
    Get(section, key, text);
    if (!status_.ok()) return;
    auto d = ParseDuration(text);
    if (!d.ok()) status_ = d.status().WithContext(origin_ + ": " + section + "." + key);
    else out = *d;
  }
  const Status& status() const { return status_; }

 private:
  const YAML::Node& root_;
  std::string origin_;
  Status status_;
};

}  // namespace

const char* ShippedModelText(const std::string& name) {
  auto it = ShippedModels().find(name);
  return it == ShippedModels().end() ? nullptr : it->second;
}

std::vector<std::string> CatalogueModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : ShippedModels()) names.push_back(name);
  return names;
}

Result<RackModel> LoadRackModel(const std::string& name) {
  auto it = ShippedModels().find(name);
  if (it == ShippedModels().end()) {
    std::string known;
    for (const auto& n : CatalogueModelNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown rack model '" + name + "'; known models: " + known);
  }
  return ParseRackModel(it->second, "catalogue/" + name + ".yaml");
}

Result<RackModel> ParseRackModel(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  RackModel m;
  Reader r(root, origin);
  r.Get(nullptr, "model", m.name);
  r.Get(nullptr, "description", m.description);
  r.Get(nullptr, "compute_trays", m.compute_trays);
  r.Get(nullptr, "gpus_per_tray", m.gpus_per_tray);
  r.Get(nullptr, "cpus_per_tray", m.cpus_per_tray);
  r.Get(nullptr, "nics_per_tray", m.nics_per_tray);
  r.Get(nullptr, "switch_trays", m.switch_trays);
  r.Get("nvlink", "links_per_gpu", m.nvlink_links_per_gpu);
  r.Get("nvlink", "gbytes_per_s_per_gpu", m.nvlink_gbytes_per_s);
  r.Get("nvlink", "adaptive_bandwidth", m.adaptive_bandwidth);
  r.GetOptional("nvlink", "domain_racks", m.domain_racks);
  r.Get("nic", "gbit_per_s", m.nic_gbit_per_s);
  r.Get("gpu", "tdp_w", m.gpu_tdp_w);
  r.Get("gpu", "idle_w", m.gpu_idle_w);
  r.Get("gpu", "min_power_w", m.gpu_min_power_w);
  r.Get("gpu", "slowdown_c", m.gpu_slowdown_c);
  r.Get("gpu", "shutdown_c", m.gpu_shutdown_c);
  r.Get("gpu", "heat_capacity_j_per_k", m.gpu_heat_capacity_j_per_k);
  r.Get("gpu", "pci_bus_ids", m.gpu_pci_bus_ids);
  r.Get("cooling", "inlet_c", m.inlet_c);
  r.Get("cooling", "conductance_w_per_k", m.conductance_w_per_k);
  r.Get("cooling", "residual_conductance_w_per_k", m.residual_conductance_w_per_k);
  r.Get("cooling", "tray_flow_l_per_min", m.tray_flow_l_per_min);
  r.GetOptional("cooling", "pumps", m.cdu_pumps);
  r.GetOptional("cooling", "pumps_needed", m.cdu_pumps_needed);
  r.GetOptional(nullptr, "dpus_per_tray", m.dpus_per_tray);
  r.Get("power", "shelves", m.power_shelves);
  r.Get("power", "psus_per_shelf", m.psus_per_shelf);
  r.Get("power", "psu_kw", m.psu_kw);
  r.GetDuration("service", "gpu_reset", m.gpu_reset_time);
  r.GetDuration("service", "node_boot", m.node_boot_time);
  r.GetDuration("service", "diagnostic", m.diagnostic_time);
  if (root.IsMap() && root["storage"]) {
    r.Get("storage", "cache_gbytes_per_s_per_gpu", m.cache_gbytes_per_s_per_gpu);
    r.Get("storage", "object_store_gbytes_per_s_per_gpu", m.object_store_gbytes_per_s_per_gpu);
    RC_RETURN_IF_ERROR(r.status());
    if (!(m.cache_gbytes_per_s_per_gpu > 0) || !(m.object_store_gbytes_per_s_per_gpu > 0))
      return Status::Invalid(origin + ": storage read rates must be > 0 (or leave the storage section out)");
  }
  if (root.IsMap() && root["switch_tray"]) {
    r.Get("switch_tray", "power_w", m.switch_power_w);
    r.Get("switch_tray", "slowdown_c", m.switch_slowdown_c);
    r.Get("switch_tray", "shutdown_c", m.switch_shutdown_c);
    r.Get("switch_tray", "heat_capacity_j_per_k", m.switch_heat_capacity_j_per_k);
    r.Get("switch_tray", "conductance_w_per_k", m.switch_conductance_w_per_k);
    r.Get("switch_tray", "residual_conductance_w_per_k", m.switch_residual_conductance_w_per_k);
    r.Get("switch_tray", "throttle_bandwidth", m.switch_throttle_bandwidth);
    RC_RETURN_IF_ERROR(r.status());
    if (!(m.switch_power_w > 0) || !(m.inlet_c < m.switch_slowdown_c) || !(m.switch_slowdown_c < m.switch_shutdown_c) ||
        !(m.switch_heat_capacity_j_per_k > 0) || !(m.switch_conductance_w_per_k > 0) ||
        !(m.switch_residual_conductance_w_per_k > 0) || !(m.switch_throttle_bandwidth > 0) ||
        !(m.switch_throttle_bandwidth <= 1))
      return Status::Invalid(origin + ": switch_tray needs power_w, heat capacity and conductances > 0, "
                             "0 < throttle_bandwidth <= 1 and inlet_c < slowdown_c < shutdown_c (or leave the "
                             "switch_tray section out)");
  }
  RC_RETURN_IF_ERROR(r.status());
  if (m.compute_trays < 1 || m.gpus_per_tray < 1 || m.nvlink_links_per_gpu < 1 || m.nvlink_links_per_gpu > 64)
    return Status::Invalid(origin + ": tray, GPU and NVLink counts must be positive (links at most 64)");
  if (static_cast<int>(m.gpu_pci_bus_ids.size()) != m.gpus_per_tray)
    return Status::Invalid(origin + ": gpu.pci_bus_ids needs one entry per GPU in a tray");
  if (!(m.gpu_slowdown_c < m.gpu_shutdown_c) || !(m.inlet_c < m.gpu_slowdown_c))
    return Status::Invalid(origin + ": need inlet_c < slowdown_c < shutdown_c");
  if (!(m.conductance_w_per_k > 0) || !(m.residual_conductance_w_per_k > 0) || !(m.gpu_heat_capacity_j_per_k > 0))
    return Status::Invalid(origin + ": conductances and heat capacity must be > 0");
  if (m.cdu_pumps < 0 || m.cdu_pumps > 64 || m.cdu_pumps_needed < 0 || m.cdu_pumps_needed > m.cdu_pumps ||
      (m.cdu_pumps > 0 && m.cdu_pumps_needed < 1))
    return Status::Invalid(origin + ": cooling.pumps must be 0-64 and cooling.pumps_needed 1-pumps (got " +
                           std::to_string(m.cdu_pumps) + " and " + std::to_string(m.cdu_pumps_needed) + ")");
  if (m.domain_racks < 1 || m.domain_racks > 8)
    return Status::Invalid(origin + ": nvlink.domain_racks must be between 1 and 8 (got " +
                           std::to_string(m.domain_racks) + ")");
  if (m.dpus_per_tray < 0 || m.dpus_per_tray > std::max(1, m.nics_per_tray))
    return Status::Invalid(origin + ": dpus_per_tray must be between 0 and nics_per_tray (" +
                           std::to_string(m.nics_per_tray) + ")");
  return m;
}

}  // namespace rackchaos::cluster
