#include "runner/spec/validate_regions.h"

#include <algorithm>

#include "cluster/spare_racks.h"

namespace rackchaos::runner {
namespace {

std::string RegionNames(const cluster::Topology& topo) {
  std::string out;
  for (const cluster::Region& r : topo.regions()) out += (out.empty() ? "" : ", ") + topo.at(r.id).name;
  return out;
}

}  // namespace

std::vector<cluster::RegionSpec> RegionSpecs(const ClusterSpec& cluster) {
  std::vector<cluster::RegionSpec> out;
  for (const RegionPlan& r : cluster.regions) out.push_back({r.name, r.racks});
  return out;
}

namespace {

// Spare racks come in whole NVLink domains: the cluster's spares.racks and each region's.
Status CheckWholeDomains(int n, const SourcePos& pos, const cluster::RackModel& model, const std::string& region) {
  const int per_domain = std::max(1, model.domain_racks);
  if (n % per_domain == 0) return Status::Ok();
  return At(pos, "spares.racks " + std::to_string(n) + " splits an NVLink domain: a " + model.name + " domain spans " +
                     std::to_string(per_domain) + " racks" + (region.empty() ? "" : " (region '" + region + "')") +
                     ", so spare racks come in multiples of " + std::to_string(per_domain));
}

}  // namespace

Status CheckSpareRacks(const Plan& plan, RunSpec& spec) {
  const ClusterSpec& c = plan.cluster;
  spec.spare_racks = c.spare_racks;
  RC_RETURN_IF_ERROR(CheckWholeDomains(c.spare_racks, c.spares_pos, spec.topology->model(), ""));
  if (c.regions.empty()) {
    if (spec.spare_racks < c.racks) return Status::Ok();
    return At(c.spares_pos, "spares.racks " + std::to_string(spec.spare_racks) + " leaves no regular rack of " +
                                std::to_string(c.racks) + "; use at most " + std::to_string(c.racks - 1));
  }
  spec.spare_racks = 0;
  for (const RegionPlan& r : c.regions) {
    const int n = r.spare_racks >= 0 ? r.spare_racks : c.spare_racks;
    RC_RETURN_IF_ERROR(CheckWholeDomains(n, r.spare_racks >= 0 ? r.spares_pos : c.spares_pos, spec.topology->model(), r.name));
    if (n >= r.racks)
      return At(r.spare_racks >= 0 ? r.spares_pos : c.spares_pos,
                "spares.racks " + std::to_string(n) + " leaves region '" + r.name + "' no regular rack of its " +
                    std::to_string(r.racks) + "; use at most " + std::to_string(r.racks - 1));
    spec.region_spare_racks.push_back(n);
    spec.spare_racks += n;
  }
  return Status::Ok();
}

bool IsSpareRack(const RunSpec& spec, int rack) {
  return cluster::IsSpareRack(spec.topology, spec.spare_racks, spec.region_spare_racks, rack);
}

std::vector<int> FreeGpusPerRegion(const RunSpec& spec) {
  const cluster::Topology& topo = spec.topology;
  std::vector<int> free(std::max<size_t>(topo.regions().size(), 1), 0);
  std::vector<uint8_t> spare_rack(topo.racks().size());  // by rack: asked once per rack, not per tray
  for (size_t r = 0; r < spare_rack.size(); ++r) spare_rack[r] = IsSpareRack(spec, static_cast<int>(r));
  for (ComponentId t : topo.trays()) {
    const cluster::Component& tray = topo.at(t);
    if (!tray.spare && !spare_rack[static_cast<size_t>(tray.rack)])
      free[static_cast<size_t>(topo.RegionOfRack(tray.rack))] += topo.model().gpus_per_tray;
  }
  return free;
}

Status CheckJobFitsRegion(const JobSpec& job, cluster::JobConfig& config, const RunSpec& spec,
                          const std::vector<int>& free) {
  const cluster::Topology& topo = spec.topology;
  if (!job.region.text.empty()) {
    if (topo.regions().empty())
      return At(job.region.pos, "region '" + job.region.text + "': the plan has no regions; declare them in "
                                "cluster.regions or leave the job's region out");
    for (const cluster::Region& r : topo.regions())
      if (topo.at(r.id).name == job.region.text) config.region = topo.at(r.id).index;
    if (config.region < 0)
      return At(job.region.pos, "no region named '" + job.region.text + "'; the plan's regions: " + RegionNames(topo));
  }
  if (topo.regions().size() < 2) return Status::Ok();  // the cluster-wide count covers one region
  const auto best = std::max_element(free.begin(), free.end());
  if (config.region >= 0 && job.gpus > free[static_cast<size_t>(config.region)])
    return At(job.region.pos, "job '" + job.name + "' asks for " + std::to_string(job.gpus) + " GPUs but its region " +
                                  job.region.text + " has " + std::to_string(free[static_cast<size_t>(config.region)]) +
                                  " outside its spares; choose a bigger region or make the job smaller");
  if (job.gpus <= *best) return Status::Ok();
  const auto& region = topo.regions()[static_cast<size_t>(best - free.begin())];
  return At(job.pos, "job '" + job.name + "' asks for " + std::to_string(job.gpus) +
                         " GPUs but a job runs inside one region and the largest, " + topo.at(region.id).name +
                         ", has " + std::to_string(*best) +
                         " outside its spares; make the job smaller or the region bigger");
}

Status SetCopyTime(const ClusterSpec& cluster, const JobSpec& job, cluster::JobConfig& config) {
  if (job.checkpoint_size_gb <= 0 || job.checkpoint_copy > Duration{}) return Status::Ok();
  if (cluster.regions.size() < 2)
    return At(job.checkpoint_pos, "checkpoint.size_gb times the copy to another region, and the plan has " +
                                      std::string(cluster.regions.empty() ? "no regions" : "one region") +
                                      "; add a second region to cluster.regions or set checkpoint.copy_time");
  // Alone on the link, less the other traffic on it.
  const double rate = cluster.region_link_gbytes_per_s * (1 - cluster.region_link_background_percent / 100.0);
  config.checkpoint_copy = Duration::FromSecondsF(static_cast<double>(job.checkpoint_size_gb) / rate);
  config.checkpoint_size_gb = job.checkpoint_size_gb;  // the copy shares the link with the others in flight
  return Status::Ok();
}

Result<std::vector<cluster::Target>> MatchRegion(const Selector& sel, const FaultSpec& fault,
                                                 const injectors::Injector& injector, const cluster::Topology& topo) {
  if (topo.regions().empty())
    return At(fault.target.pos, "target '" + fault.target.text +
                                    "': the plan has no regions; declare them in cluster.regions (e.g. "
                                    "[{name: east, racks: 2}]) or use a name pattern");
  int region = -1;
  for (const cluster::Region& r : topo.regions())
    if (topo.at(r.id).name == sel.attribute_value()) region = topo.at(r.id).index;
  if (region < 0)
    return At(fault.target.pos, "target '" + fault.target.text + "': no region named '" + sel.attribute_value() +
                                    "'; the plan's regions: " + RegionNames(topo));
  std::vector<cluster::Target> out;
  for (const cluster::Component& c : topo.components())
    if (topo.RegionOf(c.id) == region && injector.CheckTarget(topo, {c.id, -1}).ok()) out.push_back({c.id, -1});
  if (out.empty())
    return At(fault.target.pos, "target '" + fault.target.text + "': region " + sel.attribute_value() + " has no " +
                                    std::string(injector.targets()) + " for " + std::string(injector.name()));
  return out;
}

}  // namespace rackchaos::runner
