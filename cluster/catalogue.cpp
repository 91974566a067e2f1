#include "cluster/catalogue.h"

#include <algorithm>
#include <climits>
#include <string_view>
#include <variant>

#include "core/embedded.h"
#include "core/strings.h"
#include "core/yaml_reader.h"

namespace rackchaos::cluster {
namespace {

const yaml::Format kModelFormat{"rack model", 64, 3};

// One key of a rack model file and the member it sets. `section` is "" for the top level; keys of the
// optional sections (kOptionalSections) are required only when their section is there.
using Member = std::variant<int RackModel::*, double RackModel::*, bool RackModel::*, std::string RackModel::*,
                            Duration RackModel::*, std::vector<std::string> RackModel::*>;
struct ModelKey {
  std::string_view section, key;
  Member member;
  bool required = true;
};
constexpr bool kOptional = false;

// In file order (messages list a section's keys in this order).
const ModelKey kModelKeys[] = {
    {"", "model", &RackModel::name},
    {"", "description", &RackModel::description},
    {"", "compute_trays", &RackModel::compute_trays},
    {"", "gpus_per_tray", &RackModel::gpus_per_tray},
    {"", "cpus_per_tray", &RackModel::cpus_per_tray},
    {"", "nics_per_tray", &RackModel::nics_per_tray},
    {"", "switch_trays", &RackModel::switch_trays},
    {"", "dpus_per_tray", &RackModel::dpus_per_tray, kOptional},
    {"nvlink", "links_per_gpu", &RackModel::nvlink_links_per_gpu},
    {"nvlink", "gbytes_per_s_per_gpu", &RackModel::nvlink_gbytes_per_s},
    {"nvlink", "adaptive_bandwidth", &RackModel::adaptive_bandwidth},
    {"nvlink", "domain_racks", &RackModel::domain_racks, kOptional},
    {"nic", "gbit_per_s", &RackModel::nic_gbit_per_s},
    {"gpu", "tdp_w", &RackModel::gpu_tdp_w},
    {"gpu", "idle_w", &RackModel::gpu_idle_w},
    {"gpu", "min_power_w", &RackModel::gpu_min_power_w},
    {"gpu", "slowdown_c", &RackModel::gpu_slowdown_c},
    {"gpu", "shutdown_c", &RackModel::gpu_shutdown_c},
    {"gpu", "heat_capacity_j_per_k", &RackModel::gpu_heat_capacity_j_per_k},
    {"gpu", "pci_bus_ids", &RackModel::gpu_pci_bus_ids},
    {"cooling", "inlet_c", &RackModel::inlet_c},
    {"cooling", "conductance_w_per_k", &RackModel::conductance_w_per_k},
    {"cooling", "residual_conductance_w_per_k", &RackModel::residual_conductance_w_per_k},
    {"cooling", "tray_flow_l_per_min", &RackModel::tray_flow_l_per_min},
    {"cooling", "pumps", &RackModel::cdu_pumps, kOptional},
    {"cooling", "pumps_needed", &RackModel::cdu_pumps_needed, kOptional},
    {"switch_tray", "power_w", &RackModel::switch_power_w},
    {"switch_tray", "slowdown_c", &RackModel::switch_slowdown_c},
    {"switch_tray", "shutdown_c", &RackModel::switch_shutdown_c},
    {"switch_tray", "heat_capacity_j_per_k", &RackModel::switch_heat_capacity_j_per_k},
    {"switch_tray", "conductance_w_per_k", &RackModel::switch_conductance_w_per_k},
    {"switch_tray", "residual_conductance_w_per_k", &RackModel::switch_residual_conductance_w_per_k},
    {"switch_tray", "throttle_bandwidth", &RackModel::switch_throttle_bandwidth},
    {"power", "shelves", &RackModel::power_shelves},
    {"power", "psus_per_shelf", &RackModel::psus_per_shelf},
    {"power", "psu_kw", &RackModel::psu_kw},
    {"storage", "cache_gbytes_per_s_per_gpu", &RackModel::cache_gbytes_per_s_per_gpu},
    {"storage", "object_store_gbytes_per_s_per_gpu", &RackModel::object_store_gbytes_per_s_per_gpu},
    {"service", "gpu_reset", &RackModel::gpu_reset_time},
    {"service", "node_boot", &RackModel::node_boot_time},
    {"service", "diagnostic", &RackModel::diagnostic_time},
};
constexpr std::string_view kOptionalSections[] = {"switch_tray", "storage"};

bool IsSection(std::string_view name) {
  return std::any_of(std::begin(kModelKeys), std::end(kModelKeys), [&](const ModelKey& k) { return k.section == name; });
}

// The keys of `section`, and of those the required ones; at the top level the sections count as keys.
void KeysOf(std::string_view section, std::vector<std::string>& keys, std::vector<std::string>& required) {
  for (const ModelKey& k : kModelKeys) {
    const std::string_view key = section.empty() && !k.section.empty() ? k.section : k.key;
    if (k.section != section && !(section.empty() && !k.section.empty())) continue;
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    keys.emplace_back(key);
    const bool optional_section = std::find(std::begin(kOptionalSections), std::end(kOptionalSections), key) !=
                                  std::end(kOptionalSections);
    if (k.section == section ? k.required : !optional_section) required.emplace_back(key);
  }
}

Status ReadValue(yaml::Reader& r, const yaml::Entry& e, const Member& member, RackModel& m) {
  struct Visitor {
    yaml::Reader& r;
    const yaml::Entry& e;
    RackModel& m;
    Status operator()(int RackModel::*f) const { return r.Int(e, INT_MIN, INT_MAX, m.*f, "an integer"); }
    Status operator()(double RackModel::*f) const { return r.Number(e, m.*f); }
    Status operator()(bool RackModel::*f) const { return r.Bool(e, m.*f); }
    Status operator()(std::string RackModel::*f) const { return r.String(e, m.*f); }
    Status operator()(Duration RackModel::*f) const { return r.Dur(e, m.*f); }
    Status operator()(std::vector<std::string> RackModel::*f) const { return r.StringList(e, m.*f); }
  };
  return std::visit(Visitor{r, e, m}, member);
}

// Reads the keys of `section` ("" = the top level, whose sections it reads in turn) from `node`; adds the
// sections it meets to `seen`.
Status ReadSection(yaml::Reader& r, const YAML::Node& node, std::string_view section, const SourcePos& pos,
                   RackModel& m, std::vector<std::string>& seen) {
  std::vector<std::string> keys, required;
  KeysOf(section, keys, required);
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(node, std::string(section), keys));
  if (std::string missing = yaml::Reader::Missing(entries, required); !missing.empty()) {
    return At(pos, "missing required key '" + missing + "' in " +
                       (section.empty() ? std::string("the rack model") : std::string(section)));
  }
  for (yaml::Entry& e : entries) {
    if (section.empty() && IsSection(e.key)) {
      seen.push_back(e.key);
      RC_RETURN_IF_ERROR(ReadSection(r, e.value, e.key, r.Pos(e), m, seen));
      continue;
    }
    if (!section.empty()) e.name = std::string(section) + "." + e.key;
    for (const ModelKey& k : kModelKeys)
      if (k.section == section && k.key == e.key) RC_RETURN_IF_ERROR(ReadValue(r, e, k.member, m));
  }
  return Status::Ok();
}

}  // namespace

const char* ShippedModelText(const std::string& name) {
  const EmbeddedText* t = FindEmbedded(kRackModelText, name);
  return t == nullptr ? nullptr : t->text.data();
}

std::vector<std::string> CatalogueModelNames() { return EmbeddedNames(kRackModelText); }

Result<RackModel> LoadRackModel(const std::string& name) {
  const EmbeddedText* t = FindEmbedded(kRackModelText, name);
  if (t == nullptr) {
    return Status::NotFound("unknown rack model " + Quote(name) + "; known models: " + Join(CatalogueModelNames()));
  }
  return ParseRackModel(std::string(t->text), std::string(t->file));
}

Result<RackModel> ParseRackModel(const std::string& yaml_text, const std::string& origin) {
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(yaml_text, origin, kModelFormat));
  RackModel m;
  yaml::Reader r(origin, kModelFormat);
  std::vector<std::string> sections;
  RC_RETURN_IF_ERROR(OneLine(ReadSection(r, root, "", {origin, 1, 1}, m, sections)));
  auto has = [&](std::string_view section) { return std::find(sections.begin(), sections.end(), section) != sections.end(); };
  if (has("storage")) {
    if (!(m.cache_gbytes_per_s_per_gpu > 0) || !(m.object_store_gbytes_per_s_per_gpu > 0))
      return Status::Invalid(origin + ": storage read rates must be > 0 (or leave the storage section out)");
  }
  if (has("switch_tray")) {
    if (!(m.switch_power_w > 0) || !(m.inlet_c < m.switch_slowdown_c) || !(m.switch_slowdown_c < m.switch_shutdown_c) ||
        !(m.switch_heat_capacity_j_per_k > 0) || !(m.switch_conductance_w_per_k > 0) ||
        !(m.switch_residual_conductance_w_per_k > 0) || !(m.switch_throttle_bandwidth > 0) ||
        !(m.switch_throttle_bandwidth <= 1))
      return Status::Invalid(origin + ": switch_tray needs power_w, heat capacity and conductances > 0, "
                             "0 < throttle_bandwidth <= 1 and inlet_c < slowdown_c < shutdown_c (or leave the "
                             "switch_tray section out)");
  }
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
