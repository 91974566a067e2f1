// Expectations: gates on recorded metrics, e.g. "ttr.max < 30m", "ettr.min >= 0.9",
// "healer.precision == 1", "blast.jobs.max <= 1".
//
// A gate is METRIC OP VALUE. METRIC is one of the names in ExpectationMetrics(); OP one of
// < <= > >= == !=; VALUE a duration for time metrics (90s, 5m) and a number or percentage otherwise.
// Time gates see what the report's fault table shows: every fault with a time, and every fault that had an
// effect (took a GPU out or slowed it, or touched a job), whose missing time (never detected, isolated or
// recovered) counts as infinitely late. A fault with neither (a crash on an idle GPU nobody noticed) is
// left out.
// A gate over a per-fault or per-job metric with nothing to measure (no fault had an effect or a time, no
// job ran) says "no data" and fails, unless the gate allows it to be empty (allow_empty): a gate that
// measured nothing has not shown anything.
#pragma once

#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/status.h"

namespace rackchaos::runner {

struct Gate {
  std::string text;
  std::string metric;
  std::string op;
  double value = 0;  // seconds for time metrics
  bool continuous = false;  // also checked while running (see EvaluateGateSoFar)
  bool allow_empty = false;  // passes when the metric has no data (see EvaluateGate)
};

struct GateResult {
  Gate gate;
  bool passed = false;
  double actual = 0;
  std::string message;  // "ttr.max < 30m: 12.4m (pass)"
};

// The metric names a gate may use, with a one-line description each.
const std::vector<std::pair<std::string, std::string>>& ExpectationMetrics();
// True when gate values of `metric` are durations (ttd, tti, ttr); false for numbers and percentages.
bool IsTimeMetric(const std::string& metric);
// True when a larger value of `metric` is better (ettr, goodput, job.mttf, healer.precision, healer.recall);
// false for the others (times, blast, GPU-hours, failures, drains, false isolations) and unknown names.
bool HigherIsBetter(const std::string& metric);
Result<Gate> ParseGate(const std::string& text);
GateResult EvaluateGate(const Gate& gate, const RunMetrics& metrics);

// What a metric is measured over: a gate on it has no data when the run has none of them.
enum class GateSubject { kRun, kFaults, kJobs };
GateSubject SubjectOf(const std::string& metric);

// A continuous gate must be one that, once failed on the metrics so far, fails at the end too: an upper
// bound (< <=) on a metric that never decreases while a run goes on (ttd/tti/ttr.max, blast.*.max/total,
// gpu_hours_lost.*, healer.false_isolations). Fails with kInvalidArgument naming those otherwise.
Status CheckContinuous(const Gate& gate);
// The gate on the metrics of a run still going at `now`: a fault not yet detected, isolated or recovered
// counts as `now - injected` late (a lower bound of its final time) instead of never. No data so far
// passes: the run may yet produce some.
GateResult EvaluateGateSoFar(const Gate& gate, const RunMetrics& metrics, Time now);

}  // namespace rackchaos::runner
