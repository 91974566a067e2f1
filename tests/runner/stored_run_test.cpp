// What the commands read back from a report file: a run scored again from its stored events gives the
// metrics the run gave, and `report sweep` reads a file a killed writer left mid-transaction.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "healer/metrics.h"
#include "reports/merge.h"
#include "reports/store.h"
#include "reports/sweep_store.h"
#include "runner/plan/plan_loader.h"
#include "runner/engine/run.h"
#include "runner/cli/sweep_cmd.h"
#include "runner/spec/validate.h"
#include "tests/reports/killed_writer.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
using namespace rackchaos::runner;

namespace {

// The run's metrics computed again from what the report holds: its events and jobs.
RunMetrics ScoreAgain(const reports::ReportStore& store, int64_t run, const cluster::Topology& topology, Time end) {
  auto events = store.ReadRunEvents(run);
  auto job_rows = store.ReadJobs(run);
  REQUIRE_MESSAGE(events.ok(), events.status().ToString());
  REQUIRE(job_rows.ok());
  std::vector<healer::JobInfo> jobs;
  for (const reports::JobRow& j : *job_rows)
    jobs.push_back({j.id, j.name, j.gpus, Duration::FromSecondsF(j.nominal_step_s)});
  return healer::ComputeMetrics(*events, topology, jobs, end);
}

// Runs the plan into `db`, merges that file into `merged`, and checks that the metrics scored again from
// each file's events are the ones the run stored. Returns them, as scored from the merged copy.
RunMetrics RunAndScoreAgain(const std::string& plan_file, const std::string& db, const std::string& merged) {
  auto plan = LoadPlan(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/" + plan_file);
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  auto spec = ValidatePlan(*plan, {std::nullopt, ""});
  REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());
  RunOptions opt;
  opt.db_path = db;
  RunOutcome out = ExecuteRun(*plan, *spec, opt);
  REQUIRE(out.code == ExitCode::kPass);
  REQUIRE(out.run_id == 1);
  {
    auto dest = reports::ReportStore::Open(merged);
    REQUIRE(dest.ok());
    auto counts = reports::MergeInto(*dest, db);
    REQUIRE_MESSAGE(counts.ok(), counts.status().ToString());
    REQUIRE(counts->runs_copied == 1);
  }
  RunMetrics again;
  for (const std::string& path : {db, merged}) {
    CAPTURE(path);
    auto store = reports::ReportStore::OpenForReading(path);
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    again = ScoreAgain(*store, 1, spec->topology, spec->horizon);
    auto stored = store->ReadMetrics(1);
    REQUIRE(stored.ok());
    REQUIRE(again.faults.size() == stored->faults.size());
    for (size_t i = 0; i < again.faults.size(); ++i) {
      const FaultMetrics &a = again.faults[i], &s = stored->faults[i];
      CAPTURE(s.kind);
      CHECK(a.fault == s.fault);
      CHECK(a.rework == s.rework);
      CHECK(a.gpu_hours_lost == doctest::Approx(s.gpu_hours_lost).epsilon(1e-9));
      CHECK(a.time_to_detect == s.time_to_detect);
      CHECK(a.time_to_isolate == s.time_to_isolate);
      CHECK(a.time_to_recover == s.time_to_recover);
      CHECK(a.gpus_direct + a.gpus_collateral == s.gpus_direct + s.gpus_collateral);
    }
  }
  return again;
}

}  // namespace

TEST_CASE("runner.rescore: a checkpoint store failure scored again from the stored events charges the same rework") {
  testing::TempDir dir("rescore");
  const RunMetrics again = RunAndScoreAgain("checkpoint_store_failure.yaml", (dir.path / "r.db").string(),
                                            (dir.path / "merged.db").string());
  REQUIRE(again.faults.size() == 2);
  // The store's 40 min (its unacknowledged checkpoint) and the GPU failure's 10 min, as the plan says.
  const bool store_first = again.faults[0].kind == "checkpoint_store_fail";
  const FaultMetrics& store_fault = again.faults[store_first ? 0 : 1];
  const FaultMetrics& gpu_fault = again.faults[store_first ? 1 : 0];
  CHECK(store_fault.kind == "checkpoint_store_fail");
  CHECK(gpu_fault.kind == "gpu_fail");
  CHECK(store_fault.rework.Seconds() == doctest::Approx(40 * 60).epsilon(0.02));
  CHECK(gpu_fault.rework.Seconds() == doctest::Approx(10 * 60).epsilon(0.1));
  CHECK(store_fault.gpu_hours_lost > 40);
  CHECK(gpu_fault.gpu_hours_lost < 20);
}

TEST_CASE("runner.rescore: a far copy lost before a failover scores the same again from the stored events") {
  testing::TempDir dir("rescore-far");
  const RunMetrics again = RunAndScoreAgain("far_copy_lost.yaml", (dir.path / "r.db").string(),
                                            (dir.path / "merged.db").string());
  CHECK(again.faults.size() == 2);
}

TEST_CASE("runner.sweep: report sweep reads a file whose writer was killed storing its first topology") {
  reports::testing::TempDir dir;
  const std::string path = dir.File("k.db");
  // A sweep's finished run (no components: the killed run's are the file's first topology), tagged.
  auto tagged_run = [](reports::ReportStore& s) {
    auto run = s.BeginRun(reports::testing::SampleRunInfo());
    if (!run.ok() || !s.AddMetrics(*run, reports::testing::SampleMetrics()).ok() ||
        !s.FinishRun(*run, "passed", 0, "", "").ok())
      return false;
    auto sweeps = reports::SweepStore::Open(s.path());
    return sweeps.ok() && sweeps->Tag({*run, "S", "p", 42, std::nullopt, std::nullopt}).ok();
  };
  REQUIRE(reports::testing::KillFirstTopologyWriter(path, 0, tagged_run));
  CHECK(CmdSweepReport(path, "S", {}) == ToInt(ExitCode::kPass));
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
}
