// ReadSweep: a sweep's aggregates from its tagged runs, one grid point at a time.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "runner/campaign/sweep.h"
#include "runner/spec/expect.h"

namespace rackchaos::runner {
namespace {

// Gates only to reach each metric's value in RunMetrics; time metrics need a unit to parse.
std::vector<Gate> MetricGates(const std::vector<std::string>& metrics) {
  std::vector<Gate> gates;
  for (const std::string& m : metrics) {
    auto gate = ParseGate(m + (IsTimeMetric(m) ? " >= 0s" : " >= 0"));
    gates.push_back(gate.ok() ? *gate : Gate{m, m, ">=", 0, false});
  }
  return gates;
}

}  // namespace

Result<SweepResult> ReadSweep(reports::SweepStore& store, const std::string& sweep_id,
                              const std::vector<std::string>& metrics) {
  std::string id = sweep_id;
  if (id.empty()) {
    RC_ASSIGN_OR_RETURN(id, store.LatestSweep());
  }
  SweepResult result;
  result.sweep_id = id;
  result.metrics = metrics.empty() ? DefaultSweepMetrics() : metrics;
  const std::vector<Gate> gates = MetricGates(result.metrics);
  // The values of the grid point being read; ForEachRun gives the runs grouped by point (in text order).
  std::string point;
  int64_t point_runs = 0;
  std::vector<std::vector<double>> values(gates.size());
  std::vector<double> wall, cpu;
  std::vector<SweepStat> stats;  // in text order of points, sorted by value below
  auto close_point = [&] {
    for (size_t g = 0; g < gates.size(); ++g) {
      SweepStat s;
      static_cast<Summary&>(s) = Summarize(std::move(values[g]));
      s.point = point;
      s.metric = result.metrics[g];
      s.runs = point_runs;
      stats.push_back(std::move(s));
      values[g].clear();
    }
    result.points.push_back(point);
    result.timing.push_back({point, Summarize(std::move(wall)), Summarize(std::move(cpu))});
    wall.clear();
    cpu.clear();
    point_runs = 0;
  };
  RC_RETURN_IF_ERROR(store.ForEachRun(id, [&](const reports::SweepRunRow& row) {
    if (point_runs > 0 && row.tag.point != point) close_point();
    point = row.tag.point;
    ++point_runs;
    ++result.runs;
    if (result.plan_name.empty()) result.plan_name = row.plan_name;
    if (row.status != "passed") ++result.failed;
    for (size_t g = 0; g < gates.size(); ++g) values[g].push_back(EvaluateGate(gates[g], row.metrics).actual);
    if (row.tag.wall_ms) wall.push_back(static_cast<double>(*row.tag.wall_ms));
    if (row.tag.cpu_ms) cpu.push_back(static_cast<double>(*row.tag.cpu_ms));
    return Status::Ok();
  }));
  close_point();

  // Points by their grid values (2m, 5m, 10m), not as text (10m, 2m, 5m).
  std::vector<size_t> order(result.points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return PointBefore(result.points[a], result.points[b]); });
  std::vector<std::string> points;
  std::vector<SweepTiming> timing;
  for (size_t p : order) {
    points.push_back(result.points[p]);
    timing.push_back(result.timing[p]);
    for (size_t g = 0; g < gates.size(); ++g) result.stats.push_back(stats[p * gates.size() + g]);
  }
  result.points = std::move(points);
  result.timing = std::move(timing);
  MarkBestPoints(result.stats);
  return result;
}

void MarkBestPoints(std::vector<SweepStat>& stats) {
  std::map<std::string, std::vector<SweepStat*>> by_metric;
  for (SweepStat& s : stats) {
    s.best = false;
    if (s.n > 0) by_metric[s.metric].push_back(&s);
  }
  for (auto& [metric, points] : by_metric) {
    if (points.size() < 2) continue;
    const bool higher = HigherIsBetter(metric);
    double best = points.front()->mean, worst = best;
    for (const SweepStat* s : points) {
      best = higher ? std::max(best, s->mean) : std::min(best, s->mean);
      worst = higher ? std::min(worst, s->mean) : std::max(worst, s->mean);
    }
    if (best == worst) continue;  // every point the same: no optimum to show
    for (SweepStat* s : points) s->best = s->mean == best;
  }
}

}  // namespace rackchaos::runner
