// The statistics of a sweep's grid points: which metrics (`--metrics`), the summary of one metric's
// values over a point's runs, and the order points are shown in (by their grid values, not as text).
//
// Pure functions, no I/O: the stores (reports/sweep_store.h) give the values, runner/campaign/sweep.h
// reads and aggregates them, sweep_render.h shows them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rackchaos::runner {

// The metrics a sweep shows when --metrics is not given.
const std::vector<std::string>& DefaultSweepMetrics();

// At most this many metrics in --metrics (issue 26: every list a user types is bounded).
inline constexpr size_t kMaxSweepMetrics = 32;

// "ttr.p95,ettr.min": each must be an expectation metric (runner/spec/expect.h ExpectationMetrics), at
// most kMaxSweepMetrics names; kInvalidArgument naming the unknown one and the known ones, or the bound,
// otherwise. Duplicates are dropped; an empty text gives DefaultSweepMetrics().
Result<std::vector<std::string>> ParseSweepMetrics(const std::string& list);

// One metric's summary over the finite values of a grid point's runs.
struct Summary {
  int64_t n = 0;  // finite values
  double mean = 0, sd = 0, min = 0, max = 0, p50 = 0, p95 = 0;
  double ci_low = 0, ci_high = 0;  // 95% CI of the mean: mean +- 1.96 sd / sqrt(n) (the mean alone when n < 2)
};

// Summarizes the finite values (infinite ones are left out of n). The values are sorted first, so the
// result does not depend on the order runs were stored in. Percentiles are nearest-rank.
Summary Summarize(std::vector<double> values);

// True when grid point `a` comes before `b`: their labels ("checkpoint.interval=10m,healer=aggressive")
// compared axis by axis, each value by what it means: numbers as numbers, durations as durations (2m <
// 5m < 10m < 1h), other values as text. "-" (no grid) has one point only.
bool PointBefore(const std::string& a, const std::string& b);

// The (key, value) pairs of a point label, in order: {{"checkpoint.interval", "10m"}, {"healer", "default"}};
// a label without '=' ("-") is one pair with an empty key.
std::vector<std::pair<std::string, std::string>> PointAxes(const std::string& point);

}  // namespace rackchaos::runner
