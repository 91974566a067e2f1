// Damage and recovery attribution through whole simulated runs (docs/metrics.md): a job the healer
// requeued to carry out an isolation is charged to the fault, and a NIC flap that touched no job recovers
// when it ends, so it passes a `ttr.max` gate.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "reports/store.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

using runner::testing::QueryNumber;
using runner::testing::TempDir;

// Two GB200 racks, one job, one fault; `job` and `fault` are the plan's YAML flow mappings.
runner::RunOutcome RunPlan(const TempDir& dir, const std::string& job, const std::string& fault) {
  const fs::path file = dir.path / "plan.yaml";
  std::ofstream(file) << "name: attribution\nseed: 14\nduration: 3h\ncluster: {model: gb200-nvl72, racks: 2}\n"
                         "workload:\n  jobs:\n    - " << job << "\nfaults:\n  - " << fault << "\n"
                         "expect:\n  - ttr.max < 15m\n";
  return runner::testing::RunPlanFile(file.string(), (dir.path / "run.db").string(), 14);
}

RunMetrics Metrics(const TempDir& dir, int64_t run) {
  auto store = reports::ReportStore::OpenReadOnly((dir.path / "run.db").string());
  REQUIRE(store.ok());
  auto m = store->ReadMetrics(run);
  REQUIRE(m.ok());
  REQUIRE(m->faults.size() == 1);
  return *m;
}

}  // namespace

TEST_CASE("attribution run: a job requeued off a drained tray it was not slowed on is the DPU fault's damage") {
  TempDir dir("attribution-test");
  // A 64-GPU job inside one rack talks over NVLink only: the DPU's NICs going down never slow it, but the
  // healer drains the DPU's tray (in the job's placement) and requeues it from its last checkpoint.
  auto out = RunPlan(dir, "{name: pretrain-64, gpus: 64, parallelism: {tp: 4, pp: 4, dp: 4}, step_time: 6s, "
                          "checkpoint: {interval: 30m, write_time: 40s}, restart_overhead: 5m}",
                     "{at: 30m, kind: dpu_fail, target: r01.tray03.dpu1, for: 1h}");
  CHECK(out.code == rackchaos::ExitCode::kPass);
  const std::string db = (dir.path / "run.db").string();
  // The simulator's own record: one requeue, tagged with no fault, throwing work away.
  REQUIRE(QueryNumber(db, "SELECT count(*) FROM job_events WHERE state = 'queued' AND cause_fault_id IS NULL") == 1);
  const double lost_s = QueryNumber(db, "SELECT lost_work_us / 1e6 FROM job_events WHERE state = 'queued'");
  const double back_s = QueryNumber(db, "SELECT min(t_us) / 1e6 FROM job_events WHERE state = 'running' AND seq > "
                                   "(SELECT seq FROM job_events WHERE state = 'queued')");
  REQUIRE(lost_s > 60);
  RunMetrics m = Metrics(dir, out.run_id);
  const FaultMetrics& f = m.faults[0];
  CHECK(f.jobs_touched == 1);
  CHECK(f.jobs_interrupted == 1);
  CHECK(f.rework.Seconds() == doctest::Approx(lost_s));
  REQUIRE(f.time_to_recover.has_value());
  CHECK((f.injected + *f.time_to_recover).Seconds() == doctest::Approx(back_s));  // running again, not isolated
  CHECK(*f.time_to_recover > *f.time_to_isolate);
  CHECK(f.gpus_direct + f.gpus_collateral >= 64);  // the job's whole placement lost service
  CHECK(f.gpu_hours_lost >= 64 * lost_s / 3600);
}

TEST_CASE("attribution run: a NIC flap that touched no job recovers when it ends and passes a ttr gate") {
  TempDir dir("attribution-test");
  auto out = RunPlan(dir, "{name: small, gpus: 16, step_time: 4s, checkpoint: {interval: 20m, write_time: 30s}}",
                     "{at: 30m, kind: link_down, target: r02.tray10.nic1, for: 10s}");
  RunMetrics m = Metrics(dir, out.run_id);
  const FaultMetrics& f = m.faults[0];
  CHECK(f.gpus_direct == 1);  // it had an effect, so time gates look at it
  CHECK(f.jobs_touched == 0);
  CHECK_FALSE(f.time_to_isolate.has_value());  // a 10 s flap is nothing to isolate
  CHECK(f.time_to_recover == Duration::Seconds(10));
  CHECK(m.missed_faults.empty());
  CHECK(out.code == rackchaos::ExitCode::kPass);  // ttr.max < 15m
}
