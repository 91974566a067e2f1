// Live metrics: the registry's exposition, a run feeding it through RunOptions::live, and the pacer.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <sstream>

#include "reports/live_metrics.h"
#include "runner/engine/pacer.h"
#include "tests/runner/run_fixture.h"

namespace rackchaos {
namespace {

// Sample lines "name{labels} value" -> value; fails the test on a line that is not valid exposition.
std::map<std::string, double> Samples(const std::string& text) {
  static const std::regex kSample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.e+]+|\+Inf|NaN)$)");
  static const std::regex kComment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, kComment)) continue;
    REQUIRE_MESSAGE(std::regex_match(line, m, kSample), line);
    out[m[1].str() + m[2].str()] = std::stod(m[3].str());
  }
  return out;
}

TEST_CASE("live metrics: every family announced before any sample; events counted with bounded labels") {
  reports::LiveMetrics metrics;
  const std::string empty = metrics.Render();
  for (const char* family :
       {"rackchaos_faults_injected_total counter", "rackchaos_faults_active gauge",
        "rackchaos_time_to_recover_seconds histogram", "rackchaos_ledger_entries_open gauge",
        "rackchaos_observation_poll_duration_seconds histogram", "rackchaos_observation_poll_errors_total counter"})
    CHECK_MESSAGE(empty.find(std::string("# TYPE ") + family + "\n") != std::string::npos, family);
  CHECK(Samples(empty).empty());

  auto run = metrics.StartRun("sim");
  run->Record({Duration::Seconds(1), FaultInjected{1, "link_down", 5, 3, "r01.tray03.gpu2.nvlink3", ""}});
  run->Record({Duration::Seconds(2), FaultInjected{2, "tray_pull", 7, -1, "r01.tray07", ""}});
  run->Record({Duration::Seconds(3), Detected{1, "xid", 5, "Xid 145"}});
  run->Record({Duration::Seconds(4), Isolated{5, "gpu", {1}, "xid"}});
  run->Record({Duration::Seconds(5), FaultReverted{1, "after 4s"}});
  run->Record({Duration::Seconds(5), JobChanged{0, JobState::kHung, 1, 0, 0, 8, {}, 2, "", {}}});
  auto s = Samples(metrics.Render());
  CHECK(s["rackchaos_faults_injected_total{kind=\"link_down\"}"] == 1);
  CHECK(s["rackchaos_faults_active{kind=\"link_down\"}"] == 0);
  CHECK(s["rackchaos_faults_active{kind=\"tray_pull\"}"] == 1);
  CHECK(s["rackchaos_isolations_total{detector=\"xid\",domain=\"gpu\"}"] == 1);
  CHECK(s["rackchaos_jobs{state=\"hung\"}"] == 1);
  CHECK(s["rackchaos_runs_active"] == 1);

  RunMetrics m;
  m.faults.push_back({1,
                      "link_down",
                      "r01.tray03.gpu2.nvlink3",
                      {},
                      {},
                      Duration::Seconds(2),
                      Duration::Seconds(3),
                      Duration::Seconds(90),
                      1,
                      0,
                      1,
                      0,
                      0,
                      {},
                      {}});
  m.faults.push_back(
      {2, "tray_pull", "r01.tray07", {}, {}, std::nullopt, std::nullopt, std::nullopt, 4, 0, 1, 1, 0, {}, {}});
  m.jobs.push_back({0, "j", 8, {}, {}, 0.93, 0.9, 1, 10});
  run->Scored(m, false);
  run->Scored(m, false);  // a fault's TTD is observed once, however often the run is scored
  s = Samples(metrics.Render());
  CHECK(s["rackchaos_time_to_detect_seconds_count{kind=\"link_down\"}"] == 1);
  CHECK(s["rackchaos_time_to_detect_seconds_bucket{kind=\"link_down\",le=\"1\"}"] == 0);
  CHECK(s["rackchaos_time_to_detect_seconds_bucket{kind=\"link_down\",le=\"5\"}"] == 1);
  CHECK(s["rackchaos_time_to_detect_seconds_bucket{kind=\"link_down\",le=\"+Inf\"}"] == 1);
  CHECK(s.count("rackchaos_time_to_recover_seconds_count{kind=\"link_down\"}") == 0);  // final only
  run->Scored(m, true);
  run->Finish("failed");
  s = Samples(metrics.Render());
  CHECK(s["rackchaos_time_to_detect_seconds_count{kind=\"link_down\"}"] == 1);
  CHECK(s["rackchaos_time_to_recover_seconds_sum{kind=\"link_down\"}"] == 90);
  CHECK(s["rackchaos_faults_unrecovered_total{kind=\"tray_pull\"}"] == 1);
  CHECK(s["rackchaos_rack_recovery_seconds_total{rack=\"r01\"}"] == 90);
  CHECK(s["rackchaos_rack_recoveries_total{rack=\"r01\"}"] == 1);
  CHECK(s["rackchaos_job_ettr_ratio_bucket{le=\"0.95\"}"] == 1);
  CHECK(s["rackchaos_runs_finished_total{status=\"failed\"}"] == 1);
  CHECK(s["rackchaos_runs_active"] == 0);
  CHECK(s["rackchaos_faults_active{kind=\"tray_pull\"}"] == 0);  // the finished run's faults leave the gauge
  CHECK(s["rackchaos_jobs{state=\"hung\"}"] == 0);

  metrics.ObservePoll("nvidia-smi", 0.2, true);
  metrics.ObservePoll("nvidia-smi", 7, false);
  metrics.SetLedger("0", 2, 1700000000);
  s = Samples(metrics.Render());
  CHECK(s["rackchaos_observation_polls_total{source=\"nvidia-smi\"}"] == 2);
  CHECK(s["rackchaos_observation_poll_errors_total{source=\"nvidia-smi\"}"] == 1);
  CHECK(s["rackchaos_ledger_oldest_open_timestamp_seconds{ledger=\"0\"}"] == 1700000000);
}

TEST_CASE("live metrics: label values are escaped") {
  reports::LiveMetrics metrics;
  auto run = metrics.StartRun("sim");
  run->Record({Duration::Seconds(1), FaultInjected{1, "we\"ird\\kind\nx", 5, -1, "", ""}});
  CHECK(metrics.Render().find("kind=\"we\\\"ird\\\\kind\\nx\"") != std::string::npos);
  (void)Samples(metrics.Render());
}

TEST_CASE("a run feeds live metrics what it stores") {
  runner::testing::TempDir dir("serve-live");
  const std::string db = (dir.path / "live.db").string();
  auto plan = runner::LoadPlan(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {42, ""});
  REQUIRE(spec.ok());
  reports::LiveMetrics metrics;
  runner::RunOptions opt;
  opt.db_path = db;
  opt.live = &metrics;
  const runner::RunOutcome out = runner::ExecuteRun(*plan, *spec, opt);
  REQUIRE(out.code == ExitCode::kPass);
  auto s = Samples(metrics.Render());
  double injected = 0, ttr = 0;
  for (const auto& [key, value] : s) {
    if (key.rfind("rackchaos_faults_injected_total{", 0) == 0) injected += value;
    if (key.rfind("rackchaos_time_to_recover_seconds_count{", 0) == 0) ttr += value;
  }
  CHECK(injected == runner::testing::QueryNumber(db, "SELECT count(*) FROM faults"));
  CHECK(ttr == runner::testing::QueryNumber(db, "SELECT count(*) FROM fault_metrics WHERE ttr_us IS NOT NULL"));
  CHECK(s["rackchaos_events_total{type=\"detected\"}"] ==
        runner::testing::QueryNumber(db, "SELECT count(*) FROM detections"));
  CHECK(s["rackchaos_runs_finished_total{status=\"passed\"}"] == 1);
}

TEST_CASE("pacer: the simulated clock follows the wall clock at the pace, and not before it") {
  auto wall = std::chrono::steady_clock::time_point{};
  int waits = 0;
  runner::Pacer pacer(60, {[&] { return wall; },
                           [&](std::chrono::milliseconds d) {
                             ++waits;
                             wall += d;
                           }});
  const Time limit = Duration::Minutes(10);
  CHECK(pacer.Allowed(limit) == Time{});  // the first call starts the wall clock
  wall += std::chrono::seconds(2);
  CHECK(pacer.Allowed(limit) == Duration::Seconds(120));
  pacer.Wait();
  CHECK(waits == 1);
  CHECK(pacer.Allowed(limit) == Duration::Micros(121200000));  // 20 ms later: 1.2 simulated seconds on
  wall += std::chrono::hours(1);
  CHECK(pacer.Allowed(limit) == limit);
  runner::Pacer off(0);
  CHECK_FALSE(off.on());
  CHECK(off.Allowed(limit) == limit);
}

}  // namespace
}  // namespace rackchaos
