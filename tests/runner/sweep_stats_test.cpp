// Sweep statistics: --metrics, the summary of a point's values, grid points by value, the CSV.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runner/campaign/sweep_render.h"
#include "runner/campaign/sweep_stats.h"

using namespace rackchaos;

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
