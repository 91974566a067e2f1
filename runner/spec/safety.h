// Safety: what a plan could do at worst, checked before it runs, and the stop file that halts every run
// on the machine.
//
// The static check walks the resolved timeline (plan faults and drawn chaos, runner/spec/validate.h): a fault
// is active from `at` until `at + for` (or the horizon). At equal times reverts come before injections,
// so a fault that ends when another starts is not counted with it. A fault impairs the GPUs its target
// serves (Topology::GpusServedBy); faults active at once add up, even when they overlap, which
// over-estimates on purpose.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "runner/plan/plan.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// One inject or revert on the resolved timeline, with what is active right after it.
struct TimelineStep {
  Time at{};
  bool inject = true;
  const ResolvedFault* fault = nullptr;  // points into the RunSpec it was built from
  int gpus = 0;                          // GPUs this fault's target serves
  int active_faults = 0;
  int gpus_impaired = 0;                 // summed over the active faults
};

// Every inject and revert of `spec.faults` in time order (reverts at the horizon are left out).
std::vector<TimelineStep> BuildTimeline(const RunSpec& spec);

struct WorstCase {
  int faults = 0;
  Time faults_at{};
  int gpus = 0;
  Time gpus_at{};
};
WorstCase FindWorstCase(const std::vector<TimelineStep>& timeline);

// Refuses (kInvalidArgument, "FILE:LINE:COL: reason") a plan using a kind not in safety.allow (pointing
// at the fault, or at chaos: for drawn faults) or whose worst case exceeds safety.max_gpus_impaired
// (pointing at the fault that tips it over). Ok when the plan has no safety section.
Status CheckSafety(const Plan& plan, const RunSpec& spec);

// The stop file: $RACKCHAOS_STOP_FILE if set and not empty, else /run/rackchaos/stop.
std::string StopFilePath();
// True when the stop file exists: `run` refuses to start and running runs stop as if interrupted.
bool StopFileExists();

}  // namespace rackchaos::runner
