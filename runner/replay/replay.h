// Post-incident replay, the pure part: an imported Incident (runner/incident/) becomes a list of faults
// on the model's components at the offsets the logs recorded, and that list becomes plan text that
// LoadPlan/ValidatePlan accept. The command around it (runner/cli/replay_cmd.h) runs the plan and prints
// the incident and the simulated healer side by side.
//
// Which events become which fault (docs/replay.md has the table):
//   Xid with action reset_gpu/reboot_node/drain_and_reset/bus_reset/system_reboot -> gpu_fail {xid}
//   Xid with action check_nvlink (74, 144-150)       -> link_down on <gpu>.nvlink<link>
//   Xid with action restart_app (13, 31, 43, 94)      -> process_crash on the GPU
//   Xid caused by an earlier one (45, 154, 63)        -> a follow-up of the fault its cause started
//   NIC link down .. link up                          -> link_down on the NIC for that long
//   Slurm down with no fault imported on the node     -> tray_pull until the node is resumed
//   timeline rows naming a fault kind .. end row      -> that fault, params from "key=value" in detail
// A fault already open on the same target is a follow-up (not a second fault); a node resume ends
// every fault still open on its tray (the node was repaired). Everything else is listed as not replayed, with why.
//
// The site's side: a drain (or down) of a tray is measured from the first fatal fault open on it (a
// non-fatal one before it, an Xid 13, is not what the site drained for); only when no fatal fault is
// open, from the first fault. Job requeues and kills keep their time, job id and node; NCCL's view of
// the job (watchdog timeouts, warnings, errors) is summarized.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/topology.h"
#include "core/status.h"
#include "runner/incident/host_map.h"
#include "runner/incident/incident.h"
#include "runner/site/inventory.h"
#include "runner/plan/plan.h"

namespace rackchaos::runner {

using incident::HostMap;

// Trays from the inventory's tray -> host table (host name and its address both map), GPUs given as
// PCI bus ids and NIC interface names of each tray.
HostMap HostMapFromInventory(const Inventory& inventory);

struct ReplayFault {
  std::string kind;    // an injector name
  std::string target;  // a model target name
  std::map<std::string, std::string> params;
  double at = 0;              // seconds from the start of the incident
  std::optional<double> end;  // seconds from the start of the incident; unset = until the end
  std::string source;         // "FILE:LINE xid 79 on node07 0000:3b:00"
  bool fatal = true;          // the event that started it took the part out of service (incident.h Severity)
  int follow_ups = 0;         // later events on the same target folded into this fault
  std::vector<std::string> consequences;  // Xids caused by its event: "xid 154 (reboot_node)", at most 8
  // What the site's scheduler did to the fault's node, in seconds after the fault (when the logs say).
  std::optional<double> drained_after, resumed_after;
  std::string drain_reason;
};

struct NotReplayed {
  std::string source;
  std::string why;
};

// A Slurm job requeue or kill, at its offset, with the fault of its node it follows (when known).
struct ReplayJobEvent {
  double at = 0;
  std::string kind;  // "requeue" or "kill"
  std::string job;   // as Slurm printed it
  std::string node;  // empty when the line names none
  int fault = -1;    // index in ReplayTimeline::faults of the latest fault before it on its node's tray
                     // (any tray when the node is unknown); -1 = none
  std::string source;
};

// NCCL's view of the job: counts, the first of each kind (offset and text), ranks and hosts involved.
struct NcclSummary {
  int64_t timeouts = 0, warnings = 0, errors = 0;
  std::optional<double> first_timeout, first_warning, first_error;
  std::string first_timeout_detail, first_warning_detail, first_error_detail;
  std::vector<int> ranks;          // ranks that timed out, sorted, at most 4096
  std::vector<std::string> hosts;  // hosts with NCCL warnings, sorted, at most 64
};

inline constexpr size_t kMaxNotReplayedListed = 200;
inline constexpr size_t kMaxJobEventsListed = 1000;

struct ReplayTimeline {
  std::vector<ReplayFault> faults;        // by time
  std::vector<NotReplayed> not_replayed;  // the first kMaxNotReplayedListed
  int64_t not_replayed_count = 0;
  int64_t follow_ups = 0;
  int64_t requeues = 0, kills = 0;
  std::vector<ReplayJobEvent> job_events;  // requeues and kills by time, the first kMaxJobEventsListed
  NcclSummary nccl;
  int64_t hostless = 0;  // events not replayed because their line names no host (see --host)
  std::optional<double> first_fatal;  // offset of the first fatal fault
  double span = 0;  // seconds from the first event to the last
};

// Wall-clock and relative events are each measured from the first event on their axis.
ReplayTimeline BuildReplayTimeline(const incident::Incident& incident, const cluster::Topology& topo,
                                   const HostMap& map);

struct ReplayPlanOptions {
  std::string name = "replay";
  std::string description;
  std::vector<std::string> comments;  // written as '#' lines at the top
  ClusterSpec cluster;                // model, racks, spare trays (always a simulated cluster)
  std::vector<JobSpec> jobs;
  std::string healer = "default";
  uint64_t seed = 1;
  Duration lead = Duration::Minutes(10);  // the incident starts this long into the run
  Duration tail = Duration::Hours(2);     // the run goes on this long after the last event
};

// Plan text for `timeline`. Times are written in whole seconds.
std::string ReplayPlanYaml(const ReplayTimeline& timeline, const ReplayPlanOptions& options);

// A job on every GPU of the cluster's non-spare trays (tp = GPUs per tray): the workload of a replay
// whose --cluster names no jobs.
JobSpec DefaultReplayJob(const cluster::Topology& topo);

}  // namespace rackchaos::runner
