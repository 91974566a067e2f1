// `rackchaos compare`: what got better or worse between two stored runs, and thresholds that turn
// a regression into a failing exit code for CI.
//
// Each compared metric has a direction (lower TTR is better, higher ETTR is better). A fault that
// never recovered or was never detected counts as infinitely late in the percentiles (as gates do),
// so a run that loses a recovery compares as worse, never as "no data".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct MetricValue {
  std::string name;  // "ttr.p95"
  bool is_time = false;        // seconds; thresholds may be durations
  bool lower_is_better = true;
  double value = 0;            // +infinity when a fault never got there
};

// The compared metrics of one run, in display order: ttr.p50/.p95/.max, ttd.p50/.p95/.max,
// blast.gpus (direct + collateral, summed over faults), blast.gpus.max (worst fault), blast.jobs,
// gpu_hours_lost, ettr.min, ettr.mean, precision, recall, faults, faults.unrecovered.
Result<std::vector<MetricValue>> RunMetricValues(const ReportStore& store, int64_t run);

// An allowed worsening of one metric: "ttr.p95=+10%" (relative to run A), "ttr.max=+30s",
// "precision=-0.05" (absolute, in the metric's unit). The sign, when written, must point in the
// metric's bad direction.
struct Threshold {
  std::string metric;
  double amount = 0;  // fraction when relative, else seconds or the metric's unit
  bool relative = false;
  std::string text;   // as written
};

// Parses a comma-separated list; kInvalidArgument naming the bad item and the known metrics.
Result<std::vector<Threshold>> ParseThresholds(std::string_view spec);

struct MetricChange {
  MetricValue a, b;
  double delta = 0;  // b - a (may be infinite or NaN when both are infinite)
  int verdict = 0;   // -1 worse, 0 same, +1 better
  std::string regression;  // non-empty when a threshold on this metric is exceeded
};

struct Comparison {
  int64_t run_a = 0, run_b = 0;
  std::vector<MetricChange> changes;
  int regressions = 0;
  std::string plan_warning;  // PlanDifference of the two runs; shown above the table when not empty
};

// "" when runs `a` and `b` ran the same plan text (same plan hash); otherwise a warning naming both
// plans: the differences then mix what the plans do differently with what changed between the runs.
std::string PlanDifference(const RunRow& a, const RunRow& b);

Comparison CompareMetrics(int64_t run_a, const std::vector<MetricValue>& a, int64_t run_b,
                          const std::vector<MetricValue>& b, const std::vector<Threshold>& thresholds);

// The plan warning when there is one, a table (metric, run A, run B, delta, "better/worse": better,
// worse, REGRESSED or empty) and one line per exceeded threshold.
std::string RenderComparison(const Comparison& comparison);

}  // namespace rackchaos::reports
