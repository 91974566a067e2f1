// Sweeps for serve: one sweep's grid points with the spread of a few run metrics each (the list of
// sweeps is reports/sweep_store.h's ListSweeps).
//
// The metrics are per run and read in one query from the stored metrics (fault_metrics, job_metrics),
// not through the gate machinery `rackchaos report sweep` uses (runner/campaign, a layer above reports):
// the worst time to detect and to recover of each run, its lowest job ETTR and its GPU-hours lost.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/store_state.h"
#include "reports/web_queries.h"

namespace rackchaos::reports {
namespace {

// One row per run of the sweep, by point; a fault never recovered makes the run's ttr.max infinite.
constexpr const char* kSweepRunsSql =
    "SELECT s.point, r.status,"
    " (SELECT CASE WHEN count(*) FILTER (WHERE m.ttr_us IS NULL) > 0 THEN NULL ELSE coalesce(max(m.ttr_us), 0) END"
    "    FROM fault_metrics m WHERE m.run_id = s.run_id),"
    " (SELECT max(m.ttd_us) FROM fault_metrics m WHERE m.run_id = s.run_id),"
    " (SELECT min(j.ettr) FROM job_metrics j WHERE j.run_id = s.run_id),"
    " (SELECT total(m.gpu_hours_lost) FROM fault_metrics m WHERE m.run_id = s.run_id),"
    " r.plan_name"
    " FROM sweep_runs s JOIN runs r ON r.id = s.run_id WHERE s.sweep = ?1 ORDER BY s.point, s.run_id";

const char* const kSweepPageMetrics[] = {"ttr.max", "ttd.max", "ettr.min", "gpu_hours_lost"};
constexpr size_t kSweepPageMetricCount = 4;

double SweepNearest(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

SweepMetricStats SweepPageStats(const char* metric, std::vector<double> values) {
  SweepMetricStats s;
  s.metric = metric;
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  s.n = static_cast<int>(values.size());
  if (!values.empty()) {
    double sum = 0;
    for (double v : values) sum += v;
    s.mean = sum / s.n;
    s.p50 = SweepNearest(values, 0.5);
    s.p95 = SweepNearest(values, 0.95);
    s.min = values.front();
    s.max = values.back();
  }
  s.values = std::move(values);
  return s;
}

}  // namespace

Result<SweepPage> ReadSweepPage(const ReportStore& store, const std::string& sweep_id) {
  const std::string what = "reading sweep " + sweep_id;
  RC_ASSIGN_OR_RETURN(Stmt s, StoreAccess::DbOf(store).Prepare(kSweepRunsSql, what));
  s.Bind(1, std::string_view(sweep_id));
  SweepPage page;
  page.id = sweep_id;
  std::vector<std::vector<double>> values(kSweepPageMetricCount);
  auto close_point = [&] {
    if (page.points.empty()) return;
    for (size_t m = 0; m < kSweepPageMetricCount; ++m)
      page.points.back().metrics.push_back(SweepPageStats(kSweepPageMetrics[m], std::move(values[m])));
    values.assign(kSweepPageMetricCount, {});
  };
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    if (page.points.empty() || page.points.back().point != s.Text(0)) {
      close_point();
      page.points.push_back({s.Text(0), 0, 0, {}});
    }
    if (page.plan_name.empty()) page.plan_name = s.Text(6);
    SweepPointRow& p = page.points.back();
    ++p.runs;
    ++page.runs;
    p.passed += s.Text(1) == "passed";
    const double inf = std::numeric_limits<double>::infinity();
    values[0].push_back(s.IsNull(2) ? inf : static_cast<double>(s.Int(2)) / 1e6);
    values[1].push_back(s.IsNull(3) ? inf : static_cast<double>(s.Int(3)) / 1e6);
    values[2].push_back(s.IsNull(4) ? inf : s.Double(4));
    values[3].push_back(s.Double(5));
  }
  close_point();
  if (page.points.empty()) return Status::NotFound("report '" + store.path() + "' has no runs of sweep " + sweep_id);
  return page;
}

}  // namespace rackchaos::reports
