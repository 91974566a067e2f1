// Recovery and damage metrics, computed only from a run's recorded events (definitions in
// docs/metrics.md). Ground truth in the events (`cause` fields) attributes damage and detections to
// faults; nothing here is configured or estimated.
#pragma once

#include <string>
#include <vector>

#include "cluster/topology.h"
#include "core/event.h"
#include "core/metrics.h"

namespace rackchaos::healer {

struct JobInfo {
  JobId id = kNoJob;
  std::string name;
  int gpus = 0;
  Duration nominal_step{};
};

// `end` is when the run stopped; open intervals are closed there.
RunMetrics ComputeMetrics(const std::vector<Event>& events, const cluster::Topology& topo,
                          const std::vector<JobInfo>& jobs, Time end);

}  // namespace rackchaos::healer
