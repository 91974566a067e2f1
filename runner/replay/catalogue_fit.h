// A site's own failure catalogue from its history (`rackchaos catalogue fit`, docs/catalogue.md): the
// failures in imported incident logs (runner/incident/: kernel Xids and NIC link changes, Slurm drains and
// downs from slurmctld, sacctmgr show event, sinfo -R), counted per cause over a time window, divided by
// the exposure of the cluster (component-days per class: GPUs, NICs, compute trays x days).
//
// What counts as one failure (in the window, on the wall-clock axis):
//   a root Xid (not caused by an earlier one) whose action needs a reset or reboot -> gpu, gpu_fail {xid}
//   a root Xid whose action is restart_app (13, 31, 43, ...)                     -> gpu, process_crash
//   a NIC link down                                                              -> nic, link_down
//   a Slurm drain or down whose reason names a part (GPU, network, PSU, SSD, memory, CPU, maintenance,
//   not responding)                                                              -> its class, by the reason
// Not counted again: an Xid on a GPU that failed within the hour, a NIC down while it is down, a drain or
// down of a host within the hour after a counted failure on it (its consequence) or while it is drained.
// Listed as not classified (with counts and the first FILE:LINE): SXids, NVLink Xids, Xids with no action
// or an unknown one, drain reasons that name no part. Job requeues and kills, NCCL lines and notes are
// consequences of failures, not failures, and are counted only.
// Repair times are the median of what the logs show (drain to resume, link down to up, Xid to the host's
// resume); a cause with none gets its class's default (gpu 4h, nic 2h, node 2h), marked a guess.
#pragma once

#include <string>
#include <vector>

#include "cluster/failure_catalogue.h"
#include "runner/incident/incident.h"

namespace rackchaos::runner {

struct FitOptions {
  std::string name = "site";  // the catalogue's name
  std::string source;         // its `source:` text
  double since = 0, until = 0;  // the window, Unix seconds (UTC); until > since
  double components[3] = {0, 0, 0};  // GPUs, NICs, compute trays of the cluster (index: FailureClass)
};

struct FitCause {
  cluster::FailureCause cause;  // rate_per_hour, events and interval set
  bool repair_measured = false;  // from the logs (else the class default)
  int repairs_seen = 0;
};

struct NotFitted {
  std::string what;   // "SXid 12028 (NVSwitch)", "Slurm drain reason 'kill task failed'"
  int count = 0;
  std::string first;  // "FILE:LINE" of the first
};

struct CatalogueFit {
  std::vector<FitCause> causes;          // by class, then most events first
  double component_days[3] = {0, 0, 0};  // exposure per class
  std::vector<NotFitted> unclassified;   // could not be given a class and a cause
  std::vector<NotFitted> not_failures;   // repeats, consequences, informational lines
  std::vector<std::string> warnings;     // too few events, an empty class, events without wall time
  int failures = 0;                      // counted
  int outside_window = 0, no_wall_time = 0;
  cluster::FailureCatalogue Catalogue(const FitOptions& options) const;
};

// Causes with fewer events than this get a warning: their rate is barely more than a guess.
inline constexpr int kFewEvents = 3;

CatalogueFit FitCatalogue(const incident::Incident& incident, const FitOptions& options);

// The catalogue as YAML that LoadFailureCatalogue reads back: `rate` per component-day, `events` and
// `interval`, with the window, exposure and each guessed repair in comments.
std::string FittedCatalogueYaml(const CatalogueFit& fit, const FitOptions& options);

}  // namespace rackchaos::runner
