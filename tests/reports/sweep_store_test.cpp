// The sweep records (reports/sweep_store.h): tags, the finished-run lookup a resuming sweep makes, the
// runs read back grouped by point, and schema version 14's migration of a file tagged before it.
#include "reports/sweep_store.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "reports/schema.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

// A finished run of `seed` with the sample metrics; returns its id.
int64_t FinishedRun(ReportStore& store, uint64_t seed, const std::string& status) {
  RunInfo info = t::SampleRunInfo();
  info.seed = seed;
  auto run = store.BeginRun(info);
  REQUIRE(run.ok());
  REQUIRE(store.AddMetrics(*run, t::SampleMetrics()).ok());
  if (status != "running") REQUIRE(store.FinishRun(*run, status, status == "passed" ? 0 : 1, "", "").ok());
  return *run;
}

std::vector<SweepRunRow> RunsOf(SweepStore& store, const std::string& sweep) {
  std::vector<SweepRunRow> rows;
  Status s = store.ForEachRun(sweep, [&](const SweepRunRow& r) {
    rows.push_back(r);
    return Status::Ok();
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return rows;
}

}  // namespace

TEST_CASE("reports.sweep_store: tags, the finished-run lookup, and the runs read back by point") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  {
    auto runs = ReportStore::Open(path);
    REQUIRE(runs.ok());
    FinishedRun(*runs, 1, "passed");       // run 1
    FinishedRun(*runs, 2, "failed");       // run 2
    FinishedRun(*runs, 1, "interrupted");  // run 3
    FinishedRun(*runs, 3, "passed");       // run 4
  }
  auto store = SweepStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(store->LatestSweep().status().code() == StatusCode::kNotFound);
  REQUIRE(store->Tag({1, "S", "healer=b", 1, 120, 80}).ok());
  REQUIRE(store->Tag({2, "S", "healer=b", 2, std::nullopt, std::nullopt}).ok());
  REQUIRE(store->Tag({3, "S", "healer=a", 1, 5, 5}).ok());
  REQUIRE(store->Tag({4, "T", "-", 3, 1, 1}).ok());
  CHECK(*store->LatestSweep() == "T");
  const Status missing = store->Tag({99, "S", "-", 9, 1, 1});
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK(missing.message().find("no run 99") != std::string::npos);

  // Finished (passed, failed, aborted) runs count as done; an interrupted one does not.
  CHECK(*store->HasFinished("S", "healer=b", 1));
  CHECK(*store->HasFinished("S", "healer=b", 2));
  CHECK_FALSE(*store->HasFinished("S", "healer=a", 1));
  CHECK_FALSE(*store->HasFinished("S", "healer=b", 3));
  CHECK_FALSE(*store->HasFinished("T", "healer=b", 1));

  std::vector<SweepRunRow> rows = RunsOf(*store, "S");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].tag.point == "healer=a");  // grouped by point, points in text order
  CHECK(rows[0].status == "interrupted");
  CHECK(rows[1].tag.run == 1);
  CHECK(rows[1].tag.seed == 1);
  CHECK(rows[1].tag.wall_ms == 120);
  CHECK(rows[1].tag.cpu_ms == 80);
  CHECK(rows[1].metrics.jobs.size() == t::SampleMetrics().jobs.size());
  CHECK_FALSE(rows[2].tag.wall_ms.has_value());
  CHECK(rows[2].status == "failed");

  // A resumed sweep drops the tag of the run that did not finish, and only that one.
  CHECK(*store->DropUnfinished("S") == 1);
  CHECK(RunsOf(*store, "S").size() == 2);
  CHECK(*store->DropUnfinished("S") == 0);
  CHECK(store->ForEachRun("nope", [](const SweepRunRow&) { return Status::Ok(); }).code() == StatusCode::kNotFound);

  auto reading = SweepStore::OpenForReading(path);
  REQUIRE(reading.ok());
  CHECK(RunsOf(*reading, "T").size() == 1);
  CHECK(reading->Tag({1, "U", "-", 1, 1, 1}).code() == StatusCode::kIoError);
}

TEST_CASE("reports.sweep_store: version 14 gives the runs tagged before it their seed and no times") {
  TempDir dir;
  const std::string path = dir.File("v13.db");
  {
    auto runs = ReportStore::Open(path);
    REQUIRE(runs.ok());
    FinishedRun(*runs, 7, "passed");
    FinishedRun(*runs, 8, "aborted");
  }
  {  // the file as version 13 wrote it: sweep_runs(run_id, sweep, point) and its index by (sweep, point);
     // job_metrics without version 15's columns
    Db db = t::OpenExisting(path);
    REQUIRE(db.Exec("DROP INDEX sweep_runs_by_seed; ALTER TABLE sweep_runs DROP COLUMN seed;"
                    "ALTER TABLE sweep_runs DROP COLUMN wall_ms; ALTER TABLE sweep_runs DROP COLUMN cpu_ms;"
                    "CREATE INDEX sweep_runs_by_sweep ON sweep_runs(sweep, point);"
                    "ALTER TABLE job_metrics DROP COLUMN up_us; ALTER TABLE job_metrics DROP COLUMN failures;"  // 15's
                    "ALTER TABLE runs DROP COLUMN ledger; ALTER TABLE runs DROP COLUMN ledger_run;"  // 16's
                    "INSERT INTO sweep_runs(run_id, sweep, point) VALUES (1, 'S', '-'), (2, 'S', '-');"
                    "DELETE FROM schema_history WHERE version > 13; PRAGMA user_version = 13",
                    "back to version 13")
                .ok());
  }
  auto store = SweepStore::Open(path);  // migrates it
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(t::IntOf(t::OpenExisting(path), "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(*store->HasFinished("S", "-", 7));
  CHECK(*store->HasFinished("S", "-", 8));
  CHECK_FALSE(*store->HasFinished("S", "-", 1));
  std::vector<SweepRunRow> rows = RunsOf(*store, "S");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].tag.seed == 7);
  CHECK_FALSE(rows[0].tag.wall_ms.has_value());
  CHECK_FALSE(rows[1].tag.cpu_ms.has_value());
  // The lookup a resuming sweep makes per seed is one index search, not a scan of the sweep's runs.
  Db db = t::OpenExisting(path);
  auto plan = db.Prepare("EXPLAIN QUERY PLAN SELECT 1 FROM sweep_runs WHERE sweep = 'S' AND point = '-' AND seed = '7'",
                         "plan");
  REQUIRE(plan.ok());
  std::string steps;
  while (*plan->Step("plan")) steps += plan->Text(3) + "\n";
  CHECK_MESSAGE(steps.find("sweep_runs_by_seed (sweep=? AND point=? AND seed=?)") != std::string::npos, steps);
}
