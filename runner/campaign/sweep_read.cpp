// ReadSweep and RenderSweepTable: a sweep's aggregates from its tagged runs, one grid point at a time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "reports/text_table.h"
#include "runner/campaign/sweep.h"
#include "runner/spec/expect.h"

namespace rackchaos::runner {
namespace {

// The metrics a sweep aggregates, as gate metric names (runner/spec/expect.h).
const std::vector<std::string> kSweepMetrics = {"ttr.p50",          "ttr.p95",        "ettr.min",
                                                "ettr.mean",        "gpu_hours_lost.total", "drained.gpus",
                                                "drained.gpu_hours", "healer.precision",   "healer.recall"};

double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Stats of finite values; sorted first so the result does not depend on the order runs were stored.
SweepStat Stats(std::vector<double> values, SweepStat s) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  const double n = static_cast<double>(s.n);
  s.mean = sum / n;
  s.p50 = Percentile(values, 0.5);
  s.p95 = Percentile(values, 0.95);
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  double half = s.n > 1 ? 1.96 * std::sqrt(ss / (n - 1)) / std::sqrt(n) : 0;
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

// Gates only to reach each metric's value in RunMetrics; time metrics need a unit to parse.
std::vector<Gate> MetricGates() {
  std::vector<Gate> gates;
  for (const std::string& m : kSweepMetrics) {
    auto gate = ParseGate(m + " >= 0s");
    gates.push_back(gate.ok() ? *gate : *ParseGate(m + " >= 0"));
  }
  return gates;
}

}  // namespace

Result<SweepResult> ReadSweep(reports::SweepStore& store, const std::string& sweep_id) {
  std::string id = sweep_id;
  if (id.empty()) {
    RC_ASSIGN_OR_RETURN(id, store.LatestSweep());
  }
  SweepResult result;
  result.sweep_id = id;
  const std::vector<Gate> gates = MetricGates();
  // The values of the grid point being read; ForEachRun gives the runs grouped by point.
  std::string point;
  int64_t point_runs = 0;
  std::vector<std::vector<double>> values(gates.size());
  auto close_point = [&] {
    for (size_t g = 0; g < gates.size(); ++g) {
      SweepStat s{point, kSweepMetrics[g], point_runs, 0, 0, 0, 0, 0, 0};
      result.stats.push_back(Stats(std::move(values[g]), s));
      values[g].clear();
    }
    point_runs = 0;
  };
  RC_RETURN_IF_ERROR(store.ForEachRun(id, [&](const reports::SweepRunRow& row) {
    if (point_runs > 0 && row.tag.point != point) close_point();
    point = row.tag.point;
    ++point_runs;
    ++result.runs;
    if (row.status != "passed") ++result.failed;
    for (size_t g = 0; g < gates.size(); ++g) values[g].push_back(EvaluateGate(gates[g], row.metrics).actual);
    return Status::Ok();
  }));
  close_point();
  return result;
}

std::string RenderSweepTable(const SweepResult& result) {
  using A = reports::Align;
  reports::TextTable table({"point", "metric", "runs", "n", "mean", "p50", "p95", "95% CI of mean"},
                           {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kLeft});
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  for (const SweepStat& s : result.stats) {
    bool any = s.n > 0;
    table.AddRow({s.point, s.metric, std::to_string(s.runs), std::to_string(s.n), any ? num(s.mean) : "-",
                  any ? num(s.p50) : "-", any ? num(s.p95) : "-",
                  any ? "[" + num(s.ci_low) + ", " + num(s.ci_high) + "]" : "-"});
  }
  return "Sweep " + result.sweep_id + ": " + std::to_string(result.runs) + " run(s), " + std::to_string(result.failed) +
         " not passed (ttr in seconds; values that never came are left out of n)\n" + table.Render("  ");
}

}  // namespace rackchaos::runner
