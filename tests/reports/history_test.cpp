// History that compares like with like (issue 27): trends only within one plan, lemons only beyond what
// was injected and only on real racks, the rack's qualification records, compare's warning when the two
// runs ran different plans; and reverting thousands of open faults at once without a scan per fault.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <optional>
#include <string>
#include <vector>

#include "reports/compare.h"
#include "reports/history.h"
#include "reports/store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

using t::Has;

struct NightSpec {
  std::string plan = "nightly";  // plan name; the plan text (and hash) follows it
  std::string backend = "sim";
  std::optional<Duration> ttr = Duration::Seconds(60);
  // The sample run isolates r01.tray03 (its tray_pull explains it) and r01.tray05 (nothing does).
  std::vector<std::string> explained = {"r01.tray03"};
};

int64_t AddRun(ReportStore& store, const NightSpec& spec) {
  RunInfo info = t::SampleRunInfo();
  info.plan_name = spec.plan;
  info.plan_text = "name: " + spec.plan + "\n";
  info.backend = spec.backend;
  auto run = store.BeginRun(info);
  REQUIRE(run.ok());
  REQUIRE(store.AddComponents(*run, t::SampleComponents()).ok());
  REQUIRE(store.AddJobs(*run, t::SampleJobs()).ok());
  REQUIRE(store.AppendEvents(*run, t::SampleEvents()).ok());
  RunMetrics m = t::SampleMetrics();
  m.faults[0].time_to_recover = spec.ttr;
  m.faulty_isolations = spec.explained;
  m.correct_isolations = static_cast<int>(spec.explained.size());
  REQUIRE(store.AddMetrics(*run, m).ok());
  REQUIRE(store.FinishRun(*run, spec.ttr ? "passed" : "failed", spec.ttr ? 0 : 1, info.started_wall, "").ok());
  return *run;
}

Event Inject(int fault) {
  return {Duration::Seconds(fault), FaultInjected{static_cast<FaultId>(fault), "gpu_fail", 2, -1, "r01.tray03.gpu2", ""}};
}
Event Revert(int fault, int at_s) { return {Duration::Seconds(at_s), FaultReverted{static_cast<FaultId>(fault), "run interrupted"}}; }

std::string History(const ReportStore& store, const std::string& serial, int min_runs = 2) {
  auto h = ReadRackHistory(store, serial, min_runs);
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  return RenderHistory(*h);
}

}  // namespace

TEST_CASE("reports.history: the trend compares runs of one plan only, each plan on its own line") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(21) + Duration::Seconds(48)});
  AddRun(*store, {.plan = "quick", .ttr = Duration::Minutes(11) + Duration::Seconds(12)});
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(25)});
  const std::string text = History(*store, "RK-001");
  CAPTURE(text);
  // The old trend took the first and the last run with a TTR whatever their plans: 21.8m -> 11.2m, "improving".
  CHECK_FALSE(Has(text, "21.8m (run 1) -> 11.2m"));
  CHECK_FALSE(Has(text, "improving"));
  CHECK(Has(text, "Trend per plan (runs of one plan, by plan hash, oldest to newest)\n"));
  CHECK(Has(text, "  chaos-day (hash " + PlanHash("name: chaos-day\n") + ", 2 runs): passed passed\n"
                  "    worst TTR on this rack: 21.8m (run 1) -> 25.0m (run 3): worsening\n"));
  CHECK(Has(text, "  quick (hash " + PlanHash("name: quick\n") + ", 1 run): passed\n"));
}

TEST_CASE("reports.history: injected faults the healer isolated every night make no lemon") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  // Three simulated nights of one plan: r01.tray03 is pulled and isolated every night; r01.tray05 is the
  // healer's false isolation every night. Neither says anything about the parts.
  for (int night = 0; night < 3; ++night) AddRun(*store, {});
  auto h = ReadRackHistory(*store, "RK-001");
  REQUIRE(h.ok());
  CHECK(h->offenders.empty());
  CHECK(ReadLemons(*store, 2)->empty());
  CHECK(RenderHistory(*h).ends_with(
      "Lemons: none (only runs on real racks make lemons: on the simulator every failure is injected; docs/policies.md)\n"));
}

TEST_CASE("reports.history: on real racks a part isolated beyond what injected faults explain is a lemon") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  // Night 1 and 3: r01.tray05 isolated with no injected fault to explain it. Night 2: both isolations
  // explained (the healer drained tray05 for the pulled tray03's shared power shelf, say).
  AddRun(*store, {.backend = "ssh"});
  AddRun(*store, {.backend = "ssh", .explained = {"r01.tray03", "r01.tray05"}});
  AddRun(*store, {.backend = "ssh"});
  auto h = ReadRackHistory(*store, "RK-001");
  REQUIRE(h.ok());
  REQUIRE(h->offenders.size() == 1);
  CHECK(h->offenders[0].name == "r01.tray05");
  CHECK(h->offenders[0].serial == "TR-005");
  CHECK(h->offenders[0].runs == std::vector<int64_t>{1, 3});
  CHECK(Has(RenderHistory(*h), "Lemons (1; isolated beyond what injected faults explain in at least 2 runs on real "
                               "racks; rule in docs/policies.md)\n  r01.tray05 (TR-005): 2 runs (1, 3)\n"));
  CHECK(ReadRackHistory(*store, "RK-001", 3)->offenders.empty());
  CHECK(ReadLemons(*store, 2, 1)->size() == 1);
  CHECK(ReadLemons(*store, 2, 2)->empty());  // night 2 gave no evidence against it
  CHECK(ReadRackHistory(*store, "TR-003")->offenders.empty());  // pulled on purpose every night
}

TEST_CASE("reports.history: the rack's qualification records, with what they ran on") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    AddRun(*store, {});
    AddRun(*store, {.backend = "ssh"});
  }
  {
    Db db = t::OpenExisting(path);
    REQUIRE(db.Exec("INSERT INTO qualifications(id, rack, suite, started_wall, verdict, reason, command_line) VALUES"
                    " (1, 'RK-001', 'gb200-nvl72', '2025-01-01T00:00:00Z', 'passed', '', 'q'),"
                    " (2, 'RK-001', 'strict', '2025-01-02T00:00:00Z', 'failed', 'b.yaml failed: ttd.max < 1s', 'q'),"
                    " (3, 'OTHER', 'strict', '2025-01-03T00:00:00Z', 'passed', '', 'q');"
                    "INSERT INTO qualification_plans VALUES (1, 1, '1-tray', 'a.yaml', 1, 'passed', ''),"
                    " (2, 1, '1-tray', 'a.yaml', 1, 'passed', ''), (2, 2, '1-tray', 'b.yaml', 2, 'failed', 'x'),"
                    " (2, 3, '2-rack', 'c.yaml', NULL, 'skipped', 'an earlier stage did not pass')",
                    "test setup")
              .ok());
  }
  auto store = ReportStore::OpenReadOnly(path);
  REQUIRE(store.ok());
  const std::string text = History(*store, "RK-001");
  CAPTURE(text);
  CHECK(Has(text, "Qualifications (2)\n"));
  CHECK(Has(text, "   1  gb200-nvl72  2025-01-01T00:00:00Z  passed            1/1  simulator\n"));
  CHECK(Has(text, "   2  strict       2025-01-02T00:00:00Z  failed            1/3  simulator and site  b.yaml failed: ttd.max < 1s\n"));
  CHECK_FALSE(Has(text, "OTHER"));
  // A serial only a qualification names (its runs' racks have other serials) still has a history.
  CHECK(Has(History(*store, "OTHER"), "History of OTHER: 0 run(s)\n\nQualifications (1)\n"));
}

TEST_CASE("reports.compare: the verdict column has a header, and runs of different plans are called out") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  AddRun(*store, {.plan = "a"});
  AddRun(*store, {.plan = "a", .ttr = Duration::Seconds(90)});
  AddRun(*store, {.plan = "b"});
  auto compare = [&](int64_t x, int64_t y) {
    Comparison c = CompareMetrics(x, *RunMetricValues(*store, x), y, *RunMetricValues(*store, y), {});
    c.plan_warning = PlanDifference(*store->ReadRun(x), *store->ReadRun(y));
    return RenderComparison(c);
  };
  const std::string same = compare(1, 2);
  CHECK(Has(same, "Run 2 compared with run 1\n  metric"));
  CHECK(Has(same, "delta  better/worse\n"));
  CHECK(Has(same, "worse\n"));
  CHECK_FALSE(Has(same, "Warning"));
  const std::string other = compare(1, 3);
  CHECK(other.starts_with("Warning: the two runs ran different plans: run 1 ran 'a' (plan hash " + PlanHash("name: a\n") +
                          "), run 3 ran 'b' (plan hash " + PlanHash("name: b\n") + "); the differences below are partly "
                          "the plans', not only the runs'\nRun 3 compared with run 1\n"));
}

// Reverting a fault closes its open injection row: found through faults_by_id. Without the index hint
// SQLite walked the run's faults backwards from the newest for every revert, so the thousands of faults
// a large run holds open at a SIGINT took seconds to close (6-11 s on a 40,000-fault month).
TEST_CASE("reports.store: reverting thousands of open faults reads each by its id, not the run's faults") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  REQUIRE(store->AddComponents(*run, t::SampleComponents()).ok());
  constexpr int kOpen = 4000;
  std::vector<Event> injected, reverted;
  for (int i = 1; i <= kOpen; ++i) {
    injected.push_back(Inject(i));
    reverted.push_back(Revert(i, kOpen + i));
  }
  REQUIRE(store->AppendEvents(*run, injected).ok());
  // SQLite's progress handler counts virtual machine instructions, a measure of work that no load changes.
  int64_t thousands = 0;
  sqlite3_progress_handler(
      StoreAccess::DbOf(*store).handle(), 1000, [](void* n) { return ++*static_cast<int64_t*>(n), 0; }, &thousands);
  REQUIRE(store->AppendEvents(*run, reverted).ok());
  sqlite3_progress_handler(StoreAccess::DbOf(*store).handle(), 0, nullptr, nullptr);
  CAPTURE(thousands);
  CHECK(thousands < kOpen / 4);  // ~60 instructions a revert; a walk over the open faults is ~40,000,000 in all
  CHECK(t::IntOpenExisting(dir.File("r.db"), "SELECT count(*) FROM faults WHERE reverted_us IS NULL") == 0);
}

TEST_CASE("reports.history: runs without a verdict are named under the table and left out of the trend (issue 26)") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(20)});
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(5)});
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(1)});
  AddRun(*store, {.plan = "chaos-day", .ttr = Duration::Minutes(30)});
  // Run 2 was killed (its row stays 'running'); run 3 stopped on an error part way: their short TTRs are
  // partial, so the trend is run 1 -> run 4, not run 1 -> run 3.
  REQUIRE(StoreAccess::DbOf(*store).Exec("UPDATE runs SET status = 'running', exit_code = NULL WHERE id = 2", "test").ok());
  REQUIRE(StoreAccess::DbOf(*store).Exec("UPDATE runs SET status = 'error', exit_code = 3 WHERE id = 3", "test").ok());
  const std::string text = History(*store, "RK-001");
  CAPTURE(text);
  CHECK(Has(text, "  NO VERDICT for run(s) 2 (running), 3 (error): still running, dead, or stopped by an error; "
                  "their numbers are partial and left out of the trend\n"));
  CHECK(Has(text, "worst TTR on this rack: 20.0m (run 1) -> 30.0m (run 4): worsening\n"));
}
