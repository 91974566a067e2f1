// Plan validation for cluster.regions (validate.cpp calls these): spare racks per region, jobs that fit
// inside one region, the checkpoint copy over the link between regions, and `region=NAME` selectors.
// Every error names file:line:column and what would be valid.
#pragma once

#include <vector>

#include "injectors/injector.h"
#include "runner/plan/plan.h"
#include "runner/plan/selector.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// Fills spec.spare_racks (and spec.region_spare_racks with regions); each region keeps a regular rack.
Status CheckSpareRacks(const Plan& plan, RunSpec& spec);
// Whether the 0-based rack is a spare rack of its region (of the cluster without regions).
bool IsSpareRack(const RunSpec& spec, int rack);
// The GPUs of each region (of the cluster, as one entry, without regions) outside spare trays and spare
// racks. One pass over the trays.
std::vector<int> FreeGpusPerRegion(const RunSpec& spec);
// A job runs inside one region: `gpus` must fit the largest region outside its spare trays and racks,
// and its own region (job.region, set into config.region) if it names one. `free`: FreeGpusPerRegion's,
// computed once for all the jobs (a million-GPU plan has hundreds of jobs and 250,000 trays).
Status CheckJobFitsRegion(const JobSpec& job, cluster::JobConfig& config, const RunSpec& spec,
                          const std::vector<int>& free);
// checkpoint.size_gb: the far copy's time over cluster.region_link_gbytes_per_s (copy_time wins).
Status SetCopyTime(const ClusterSpec& cluster, const JobSpec& job, cluster::JobConfig& config);
// `region=NAME`: the parts of the region (itself, its stores, its racks and all under them) that the
// fault kind takes. An unknown region lists the plan's regions.
Result<std::vector<cluster::Target>> MatchRegion(const Selector& sel, const FaultSpec& fault,
                                                 const injectors::Injector& injector, const cluster::Topology& topo);

}  // namespace rackchaos::runner
