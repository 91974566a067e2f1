// Sweep statistics: --metrics, the summary of a point's values, grid points by value, the CSV.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "reports/store.h"
#include "reports/sweep_store.h"
#include "runner/campaign/sweep.h"
#include "runner/campaign/sweep_render.h"
#include "runner/campaign/sweep_stats.h"

using namespace rackchaos;

namespace {

// The CSV as rows of cells (no cell in these tests is quoted).
std::vector<std::vector<std::string>> CsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    size_t start = 0;
    while (true) {
      const size_t comma = line.find(',', start);
      cells.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

double Cell(const std::vector<std::string>& row, size_t i) {
  REQUIRE(i < row.size());
  char* end = nullptr;
  const double v = std::strtod(row[i].c_str(), &end);
  REQUIRE_MESSAGE(end == row[i].c_str() + row[i].size(), "not a number: '" << row[i] << "'");
  return v;
}

}  // namespace

TEST_CASE("sweep stats: --metrics takes any expectation metric and names the known ones otherwise") {
  auto some = runner::ParseSweepMetrics("healer.false_isolations,ttr.max,ttr.max");
  REQUIRE(some.ok());
  CHECK(*some == std::vector<std::string>{"healer.false_isolations", "ttr.max"});
  CHECK(*runner::ParseSweepMetrics("") == runner::DefaultSweepMetrics());
  auto bad = runner::ParseSweepMetrics("ttr.max,ttr.mode");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("unknown metric 'ttr.mode'") != std::string::npos);
  CHECK(bad.status().message().find("ettr.min") != std::string::npos);
  CHECK_FALSE(runner::ParseSweepMetrics("ttr.max,").ok());
}

TEST_CASE("sweep stats: mean, sd, min, max, p50, p95 and the 95% CI over the finite values") {
  const double inf = std::numeric_limits<double>::infinity();
  runner::Summary s = runner::Summarize({4, 2, inf, 8, 6});
  CHECK(s.n == 4);
  CHECK(s.mean == doctest::Approx(5));
  CHECK(s.sd == doctest::Approx(std::sqrt(20.0 / 3)));  // sample sd of 2, 4, 6, 8
  CHECK(s.min == 2);
  CHECK(s.max == 8);
  CHECK(s.p50 == 4);  // nearest rank
  CHECK(s.p95 == 8);
  CHECK(s.ci_high - s.mean == doctest::Approx(1.96 * s.sd / 2));
  CHECK(s.mean - s.ci_low == doctest::Approx(1.96 * s.sd / 2));
  // 1..20 in a shuffled order: nearest-rank p50 is the 10th value, p95 the 19th; the sd is sqrt(35).
  std::vector<double> twenty;
  for (int i = 0; i < 20; ++i) twenty.push_back((i * 7) % 20 + 1);
  runner::Summary t = runner::Summarize(twenty);
  CHECK(t.n == 20);
  CHECK(t.mean == doctest::Approx(10.5));
  CHECK(t.sd == doctest::Approx(std::sqrt(35.0)));
  CHECK(t.p50 == 10);
  CHECK(t.p95 == 19);
  CHECK(t.min == 1);
  CHECK(t.max == 20);
  CHECK(t.ci_low == doctest::Approx(10.5 - 1.96 * std::sqrt(35.0 / 20)));
  CHECK(t.ci_high == doctest::Approx(10.5 + 1.96 * std::sqrt(35.0 / 20)));
  runner::Summary one = runner::Summarize({3});
  CHECK(one.sd == 0);
  CHECK(one.ci_low == 3);
  CHECK(runner::Summarize({inf}).n == 0);
}

TEST_CASE("sweep stats: grid points are ordered by value, durations as durations") {
  std::vector<std::string> points = {"checkpoint.interval=10m", "checkpoint.interval=1h", "checkpoint.interval=2m",
                                     "checkpoint.interval=90s", "checkpoint.interval=5m"};
  std::sort(points.begin(), points.end(), runner::PointBefore);
  CHECK(points == std::vector<std::string>{"checkpoint.interval=90s", "checkpoint.interval=2m",
                                           "checkpoint.interval=5m", "checkpoint.interval=10m",
                                           "checkpoint.interval=1h"});
  std::vector<std::string> two = {"chaos.scale=10,healer=default", "chaos.scale=2,healer=default",
                                  "chaos.scale=2,healer=aggressive", "chaos.scale=1.5,healer=default"};
  std::sort(two.begin(), two.end(), runner::PointBefore);
  CHECK(two == std::vector<std::string>{"chaos.scale=1.5,healer=default", "chaos.scale=2,healer=aggressive",
                                        "chaos.scale=2,healer=default", "chaos.scale=10,healer=default"});
  CHECK(runner::PointAxes("a=1,b=x") == std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", "x"}});
}

TEST_CASE("sweep render: the CSV has a column per grid key; timing rows only when asked") {
  runner::SweepResult r;
  r.sweep_id = "abc";
  r.metrics = {"ettr.min"};
  r.points = {"spares=0,healer=default"};
  runner::SweepStat s;
  static_cast<runner::Summary&>(s) = runner::Summarize({0.5, 0.75});
  s.point = r.points[0];
  s.metric = "ettr.min";
  s.runs = 3;
  r.stats = {s};
  r.timing = {{r.points[0], runner::Summarize({10, 20}), runner::Summarize({9, 19})}};
  const std::string csv = runner::RenderSweepCsv(r, false);
  CHECK(csv.rfind("point,spares,healer,metric,runs,n,mean,sd,min,max,p50,p95,ci_low,ci_high\n", 0) == 0);
  CHECK(csv.find("\n\"spares=0,healer=default\",0,default,ettr.min,3,2,0.625,") != std::string::npos);
  CHECK(csv.find("run.wall_ms") == std::string::npos);
  CHECK(runner::RenderSweepCsv(r, true).find("\"spares=0,healer=default\",0,default,run.wall_ms,2,2,15,") !=
        std::string::npos);
  // The page shows no machine time: it is the same for the same stored results.
  const std::string html = runner::RenderSweepHtml(r);
  CHECK(html.find("wall") == std::string::npos);
  CHECK(html.find("<svg class=\"sweep-plot\"") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("sweep stats: ReadSweep gives each grid point's stats from its stored runs, points by value, and the CSV") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rackchaos-sweep-stats-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "s.db").string();
  {
    auto runs = reports::ReportStore::Open(path);
    REQUIRE(runs.ok());
    auto tags = reports::SweepStore::Open(path);
    REQUIRE(tags.ok());
    uint64_t seed = 0;
    // One finished run of `sweep` at `point` whose drained.gpus is `gpus` and healer.precision `precision`.
    auto add = [&](const std::string& sweep, const std::string& point, int gpus, double precision,
                   const std::string& status, int64_t wall_ms) {
      reports::RunInfo info;
      info.plan_name = "stats";
      info.plan_text = "name: stats";
      info.seed = ++seed;
      auto run = runs->BeginRun(info);
      REQUIRE(run.ok());
      RunMetrics m;
      m.gpus_drained = gpus;
      m.precision = precision;
      REQUIRE(runs->AddMetrics(*run, m).ok());
      REQUIRE(runs->FinishRun(*run, status, status == "passed" ? 0 : 1, "", "").ok());
      REQUIRE(tags->Tag({*run, sweep, point, seed, wall_ms, wall_ms / 2}).ok());
    };
    // Stored in text order of the points' labels (10m < 2m < 5m), which is not their order by value.
    for (int i = 0; i < 3; ++i) add("S", "checkpoint.interval=10m", 4, 1, "passed", 100);
    for (int i = 0; i < 20; ++i) add("S", "checkpoint.interval=2m", (i * 7) % 20 + 1, 0.5, "passed", 10 * (i + 1));
    add("S", "checkpoint.interval=5m", 8, 1, "passed", 30);
    add("S", "checkpoint.interval=5m", 0, 0, "failed", 50);
    add("S", "checkpoint.interval=5m", 16, 1, "passed", 40);
    add("OTHER", "checkpoint.interval=5m", 1000, 1, "passed", 1);  // another sweep's run is not counted
  }
  auto store = reports::SweepStore::OpenForReading(path);
  REQUIRE(store.ok());
  auto r = runner::ReadSweep(*store, "S", {"drained.gpus", "healer.precision"});
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->runs == 26);
  CHECK(r->failed == 1);
  CHECK(r->plan_name == "stats");
  REQUIRE(r->points == std::vector<std::string>{"checkpoint.interval=2m", "checkpoint.interval=5m",
                                                 "checkpoint.interval=10m"});
  REQUIRE(r->stats.size() == 6);  // by point, then metric as asked
  for (size_t i = 0; i < 6; ++i) {
    CHECK(r->stats[i].point == r->points[i / 2]);
    CHECK(r->stats[i].metric == (i % 2 == 0 ? "drained.gpus" : "healer.precision"));
  }
  const runner::SweepStat& two = r->stats[0];  // drained.gpus at 2m: 1..20
  CHECK(two.runs == 20);
  CHECK(two.n == 20);
  CHECK(two.mean == doctest::Approx(10.5));
  CHECK(two.sd == doctest::Approx(std::sqrt(35.0)));
  CHECK(two.p50 == 10);
  CHECK(two.p95 == 19);
  CHECK(two.ci_high == doctest::Approx(10.5 + 1.96 * std::sqrt(35.0 / 20)));
  const runner::SweepStat& five = r->stats[2];  // drained.gpus at 5m: 8, 0, 16
  CHECK(five.runs == 3);
  CHECK(five.mean == doctest::Approx(8));
  CHECK(five.sd == doctest::Approx(8));
  CHECK(five.min == 0);
  CHECK(five.max == 16);
  CHECK(five.p50 == 8);
  CHECK(five.ci_low == doctest::Approx(8 - 1.96 * 8 / std::sqrt(3.0)));
  CHECK(r->stats[3].mean == doctest::Approx(2.0 / 3));  // healer.precision at 5m: 1, 0, 1
  const runner::SweepStat& ten = r->stats[4];  // drained.gpus at 10m: 4, 4, 4
  CHECK(ten.mean == 4);
  CHECK(ten.sd == 0);
  CHECK(ten.ci_low == 4);
  CHECK(ten.ci_high == 4);
  // Wall and CPU ms per point, in the points' order.
  REQUIRE(r->timing.size() == 3);
  CHECK(r->timing[0].point == "checkpoint.interval=2m");
  CHECK(r->timing[0].wall_ms.mean == doctest::Approx(105));
  CHECK(r->timing[0].wall_ms.p95 == 190);
  CHECK(r->timing[1].cpu_ms.max == 25);
  CHECK(r->timing[2].wall_ms.n == 3);

  // The CSV: a header with the grid key, then one row per point and metric in the same order, full precision.
  const auto rows = CsvRows(runner::RenderSweepCsv(*r, false));
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == std::vector<std::string>{"point", "checkpoint.interval", "metric", "runs", "n", "mean", "sd", "min",
                                            "max", "p50", "p95", "ci_low", "ci_high"});
  for (size_t i = 1; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == rows[0].size());
    CHECK(rows[i][0] == r->points[(i - 1) / 2]);
    CHECK(rows[i][2] == ((i - 1) % 2 == 0 ? "drained.gpus" : "healer.precision"));
  }
  CHECK(rows[1][1] == "2m");
  CHECK(rows[3][1] == "5m");
  CHECK(rows[5][1] == "10m");
  CHECK(rows[1][3] == "20");
  CHECK(Cell(rows[1], 6) == doctest::Approx(std::sqrt(35.0)).epsilon(1e-15));  // sd
  CHECK(Cell(rows[1], 10) == 19);                                                 // p95
  CHECK(Cell(rows[1], 11) == doctest::Approx(10.5 - 1.96 * std::sqrt(35.0 / 20)).epsilon(1e-15));
  CHECK(Cell(rows[3], 5) == 8);
  CHECK(Cell(rows[3], 6) == 8);
  CHECK(Cell(rows[4], 5) == doctest::Approx(2.0 / 3).epsilon(1e-15));
  // With timing, two more rows per point after the metrics.
  const auto timed = CsvRows(runner::RenderSweepCsv(*r, true));
  REQUIRE(timed.size() == 13);
  CHECK(timed[7][0] == "checkpoint.interval=2m");
  CHECK(timed[7][2] == "run.wall_ms");
  CHECK(Cell(timed[7], 5) == 105);
  CHECK(timed[12][2] == "run.cpu_ms");
  CHECK(timed[12][0] == "checkpoint.interval=10m");
  CHECK(Cell(timed[12], 5) == 50);

  // The text table and the page show the points in the same order.
  const std::string table = runner::RenderSweepTable(*r);
  CHECK(table.find("interval=2m") < table.find("interval=5m"));
  CHECK(table.find("interval=5m") < table.find("interval=10m"));
  CHECK(table.find("[4, 4]") != std::string::npos);
  const std::string html = runner::RenderSweepHtml(*r);
  CHECK(html.find(">2m</text>") < html.find(">5m</text>"));
  CHECK(html.find(">5m</text>") < html.find(">10m</text>"));
  std::filesystem::remove_all(dir);
}

// The sweep's optimum (issue 22: the study's report shows the best interval): per metric, the best mean
// is marked, ties included, in the metric's own direction; nothing when every point is the same.
TEST_CASE("sweep render: each metric's best point is marked in the table and the page") {
  runner::SweepResult r;
  r.sweep_id = "best";
  r.metrics = {"ettr.mean", "ttr.p95", "job.mttf.mean", "healer.recall"};
  r.points = {"checkpoint.interval=2m", "checkpoint.interval=5m", "checkpoint.interval=10m"};
  const std::map<std::string, std::vector<std::vector<double>>> values = {
      {"ettr.mean", {{0.80, 0.82}, {0.85, 0.85}, {0.84, 0.86}}},  // 5m and 10m tie at 0.85
      {"ttr.p95", {{100, 120}, {50, 60}, {70, 90}}},             // lower is better: 5m
      {"job.mttf.mean", {{1.8}, {1.8}, {1.8}}},                  // the same everywhere: no optimum
      {"healer.recall", {{}, {}, {0.9}}}};                       // one point with values: no optimum
  for (size_t p = 0; p < r.points.size(); ++p)
    for (const std::string& metric : r.metrics) {
      runner::SweepStat s;
      static_cast<runner::Summary&>(s) = runner::Summarize(values.at(metric)[p]);
      s.point = r.points[p];
      s.metric = metric;
      s.runs = 2;
      r.stats.push_back(s);
    }
  runner::MarkBestPoints(r.stats);
  std::vector<std::string> best;
  for (const runner::SweepStat& s : r.stats)
    if (s.best) best.push_back(s.metric + "@" + s.point);
  CHECK(best == std::vector<std::string>{"ettr.mean@checkpoint.interval=5m", "ttr.p95@checkpoint.interval=5m",
                                         "ettr.mean@checkpoint.interval=10m"});

  const std::string table = runner::RenderSweepTable(r);
  CHECK(table.find("<- highest") != std::string::npos);
  CHECK(table.find("<- lowest") != std::string::npos);
  CHECK(table.find("Best mean per metric (marked <-):\n"
                   "  ettr.mean: highest mean 0.85 at checkpoint.interval=5m, checkpoint.interval=10m\n"
                   "  ttr.p95: lowest mean 55 (s) at checkpoint.interval=5m\n") != std::string::npos);
  CHECK(table.find("job.mttf.mean: ") == std::string::npos);
  CHECK(table.find("healer.recall: ") == std::string::npos);
  // The row of ettr.mean at 2m carries no mark; the one at 5m does.
  const size_t row_2m = table.find("checkpoint.interval=2m   ettr.mean");
  REQUIRE(row_2m != std::string::npos);
  CHECK(table.substr(row_2m, table.find('\n', row_2m) - row_2m).find("<-") == std::string::npos);

  const std::string html = runner::RenderSweepHtml(r);
  CHECK(html.find("<p class=\"best\">Best: highest mean 0.85 at checkpoint.interval=5m, checkpoint.interval=10m</p>") !=
        std::string::npos);
  CHECK(html.find("<tr class=\"best\"><td>checkpoint.interval=5m</td>") != std::string::npos);
  size_t marked = 0;
  for (size_t at = html.find("class=\"mean best\""); at != std::string::npos; at = html.find("class=\"mean best\"", at + 1))
    ++marked;
  CHECK(marked == 3);
  size_t whole = 0;  // each best circle written whole (a format buffer once cut its end off)
  for (size_t at = html.find("r=\"6\"><title>"); at != std::string::npos; at = html.find("r=\"6\"><title>", at + 1))
    ++whole;
  CHECK(whole == 3);

  // A sweep without a grid (one point) has no optimum and no "best" column.
  runner::SweepResult one;
  one.metrics = {"ettr.mean"};
  one.points = {"-"};
  runner::SweepStat s;
  static_cast<runner::Summary&>(s) = runner::Summarize({0.9});
  s.point = "-";
  s.metric = "ettr.mean";
  s.runs = 1;
  one.stats = {s};
  runner::MarkBestPoints(one.stats);
  CHECK_FALSE(one.stats[0].best);
  CHECK(runner::RenderSweepTable(one).find("best") == std::string::npos);
}
