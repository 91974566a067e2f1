// The rack catalogue: rack models as data (cluster/catalogue/*.yaml, embedded in the binary), never as
// constants in code. Each number in the YAML carries its source in a comment.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace rackchaos::cluster {

struct RackModel {
  std::string name;
  std::string description;
  int compute_trays = 0;
  int gpus_per_tray = 0;
  int cpus_per_tray = 0;
  int nics_per_tray = 0;
  int switch_trays = 0;

  int nvlink_links_per_gpu = 0;
  double nvlink_gbytes_per_s = 0;   // per GPU per direction
  bool adaptive_bandwidth = false;
  // Racks per NVLink domain (optional key nvlink.domain_racks, default 1): 2 for GB200 NVL36x2, whose
  // switch trays are cabled across the pair. Every per-rack count above is per physical rack; the
  // domain's GPUs and switch trays are domain_racks times those. Power and cooling stay per rack.
  int domain_racks = 1;
  double nic_gbit_per_s = 0;

  double gpu_tdp_w = 0;
  double gpu_idle_w = 0;
  double gpu_min_power_w = 0;
  double gpu_slowdown_c = 0;
  double gpu_shutdown_c = 0;
  double gpu_heat_capacity_j_per_k = 0;
  std::vector<std::string> gpu_pci_bus_ids;  // one per GPU slot in a tray

  double inlet_c = 0;
  double conductance_w_per_k = 0;           // die to coolant at full valve opening
  double residual_conductance_w_per_k = 0;  // with the valve shut
  double tray_flow_l_per_min = 0;
  // NVLink switch trays on the same liquid loop (optional section switch_tray; power 0 = not modelled):
  // cluster/sim_switch_thermal.cpp, the GPUs' first-order model with the switch tray's own numbers.
  double switch_power_w = 0;
  double switch_slowdown_c = 0;
  double switch_shutdown_c = 0;
  double switch_heat_capacity_j_per_k = 0;
  double switch_conductance_w_per_k = 0;           // to the coolant at full valve opening and CDU flow
  double switch_residual_conductance_w_per_k = 0;  // with the valve shut
  double switch_throttle_bandwidth = 1;  // share of its ports' bandwidth kept while in thermal slowdown
  // The CDU's pumps: `cdu_pumps` installed, `cdu_pumps_needed` of them carry full flow (N+1: needed =
  // pumps - 1). Optional keys cooling.pumps / cooling.pumps_needed; 0 pumps = no pump components.
  int cdu_pumps = 0;
  int cdu_pumps_needed = 0;
  // BlueField DPUs per compute tray (optional key dpus_per_tray, 0 = none). DPU d fronts an equal block
  // of the tray's NICs (nic n behind dpu n * dpus / nics): its loss cuts their scale-out path.
  int dpus_per_tray = 0;
  // Scale-out fabric tiers: 2 (leaves and spines) or 3 (pods of leaves and spines under super-spines).
  // Not a catalogue key: a plan sets it (cluster.fabric.tiers).
  int fabric_tiers = 2;

  int power_shelves = 0;
  int psus_per_shelf = 0;
  double psu_kw = 0;

  // The storage path a job's input reads from (optional `storage:` section; 0 = not modelled): each
  // tray's local NVMe cache, and the region's object store behind it when the cache is lost.
  double cache_gbytes_per_s_per_gpu = 0;
  double object_store_gbytes_per_s_per_gpu = 0;

  Duration gpu_reset_time{};
  Duration node_boot_time{};
  Duration diagnostic_time{};

  int gpus() const { return compute_trays * gpus_per_tray; }  // per physical rack
  int domain_gpus() const { return gpus() * domain_racks; }
};

// Names of the models shipped in the binary, sorted.
std::vector<std::string> CatalogueModelNames();
// The YAML text of a shipped model (with its source comments), or nullptr for an unknown name.
const char* ShippedModelText(const std::string& name);
// Loads a shipped model by name; an unknown name lists the known ones.
Result<RackModel> LoadRackModel(const std::string& name);
// Parses a model from YAML text (a shipped file or a site's own); `origin` names it in errors.
Result<RackModel> ParseRackModel(const std::string& yaml_text, const std::string& origin);

}  // namespace rackchaos::cluster
