// Live safety: safety.abort conditions and continuous gates stop a simulated run early, revert every
// fault and record why; the same plan without the condition runs to its end.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "reports/store.h"
#include "runner/plan/plan_loader.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

// One GB200 NVL72 rack, a 64-GPU job, a compute tray (4 GPUs) pulled at 20m for an hour.
const char* kWatchBase = R"(name: watch
seed: 3
duration: 3h
cluster: {model: gb200-nvl72, racks: 1, spare_trays: 2}
workload:
  jobs:
    - {name: pretrain, gpus: 64, parallelism: {tp: 4, pp: 4, dp: 4}, step_time: 6s}
faults:
  - {at: 20m, kind: tray_pull, target: r01.tray03, for: 1h}
)";

struct Ran {
  runner::RunOutcome out;
  reports::RunRow row;
  std::vector<reports::EventRow> events;
};

Ran RunText(const std::string& text) {
  auto plan = runner::ParsePlan(text, "watch.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  auto spec = runner::ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  fs::path dir = fs::temp_directory_path() / ("rackchaos-watch-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  runner::RunOptions opt;
  opt.db_path = (dir / "w.db").string();
  Ran r{runner::ExecuteRun(*plan, *spec, opt), {}, {}};
  REQUIRE_MESSAGE(r.out.error.empty(), r.out.error);
  auto store = reports::ReportStore::OpenReadOnly(opt.db_path);
  REQUIRE(store.ok());
  auto row = store->ReadRun(r.out.run_id);
  REQUIRE(row.ok());
  r.row = *row;
  auto events = store->ReadEvents(r.out.run_id);
  REQUIRE(events.ok());
  r.events = *events;
  fs::remove_all(dir);
  return r;
}

int Count(const Ran& r, const std::string& type) {
  int n = 0;
  for (const auto& e : r.events) n += e.type == type;
  return n;
}

Time LastEventAt(const Ran& r) { return r.events.empty() ? Time{} : r.events.back().at; }

// Aborted: verdict, exit code, the reason stored, an abort action, every applied fault reverted early.
void CheckAborted(const Ran& r, const std::string& reason_part, Time before) {
  CHECK(r.out.code == rackchaos::ExitCode::kExpectationFailed);
  CHECK(r.row.status == "aborted");
  CHECK(r.row.exit_code == 1);
  CHECK_MESSAGE(r.row.failed_reason.find(reason_part) != std::string::npos, r.row.failed_reason);
  CHECK(Count(r, "action") >= 1);
  bool abort_action = false;
  for (const auto& e : r.events) abort_action = abort_action || (e.type == "action" && e.detail.find(reason_part) != std::string::npos);
  CHECK(abort_action);
  CHECK(Count(r, "fault_injected") == Count(r, "fault_reverted"));
  CHECK(LastEventAt(r) < before);
}

}  // namespace

TEST_CASE("watch: more GPUs offline than safety.abort.gpus_offline aborts the run") {
  Ran aborted = RunText(std::string(kWatchBase) + "safety: {abort: {gpus_offline: 3}}\n");
  CheckAborted(aborted, "4 GPUs offline", Duration::Minutes(25));
  CHECK(aborted.row.failed_reason.find("safety.abort.gpus_offline 3") != std::string::npos);
  // The tray has 4 GPUs: a limit of 4 is not crossed and the run goes to its end.
  Ran kept = RunText(std::string(kWatchBase) + "safety: {abort: {gpus_offline: 4}}\n");
  CHECK(kept.out.code == rackchaos::ExitCode::kPass);
  CHECK(kept.row.status == "passed");
  CHECK(LastEventAt(kept) > Duration::Hours(1));
}

TEST_CASE("watch: a job down aborts with jobs_down 0 and not without it") {
  Ran aborted = RunText(std::string(kWatchBase) + "safety: {abort: {jobs_down: 0}}\n");
  CheckAborted(aborted, "1 job(s) down (pretrain", Duration::Minutes(35));
  Ran kept = RunText(kWatchBase);
  CHECK(kept.row.status == "passed");
  CHECK(LastEventAt(kept) > Duration::Hours(1));
}

TEST_CASE("watch: more faults applied at once than faults_at_once aborts when the second lands") {
  std::string two = std::string(kWatchBase) + "  - {at: 30m, kind: gpu_throttle, target: r01.tray05.gpu1, params: {power_cap: 600W}, for: 10m}\n";
  Ran aborted = RunText(two + "safety: {abort: {faults_at_once: 1}}\n");
  CheckAborted(aborted, "2 faults applied at once", Duration::Minutes(31));
  CHECK(aborted.row.failed_reason.find("at 30m:") != std::string::npos);
  Ran kept = RunText(two + "safety: {abort: {faults_at_once: 2}}\n");
  CHECK(kept.row.status == "passed");
}

TEST_CASE("watch: a hot GPU aborts on gpu_temperature") {
  std::string valve = std::string(kWatchBase) + "  - {at: 2h, kind: valve_fail, target: r01.tray08.valve, params: {opening: 15%}, for: 45m}\n";
  Ran aborted = RunText(valve + "safety: {abort: {gpu_temperature: 85}}\n");
  CheckAborted(aborted, "above safety.abort.gpu_temperature 85", Duration::Hours(3));
  CHECK(LastEventAt(aborted) > Duration::Hours(2));
  // Without the stuck valve no GPU gets that hot.
  Ran kept = RunText(std::string(kWatchBase) + "safety: {abort: {gpu_temperature: 85}}\n");
  CHECK(kept.row.status == "passed");
}

TEST_CASE("watch: a continuous gate stops the run as soon as it can no longer pass") {
  // The job is down at least restart_overhead (5m) after the pull: ttr can never be under 2m.
  Ran aborted = RunText(std::string(kWatchBase) + "expect:\n  - {gate: \"ttr.max < 2m\", continuous: true}\n");
  CheckAborted(aborted, "continuous gate ttr.max < 2m", Duration::Minutes(24));
  // Checked only at the end, the same gate fails the run after the whole horizon.
  Ran at_end = RunText(std::string(kWatchBase) + "expect:\n  - \"ttr.max < 2m\"\n");
  CHECK(at_end.out.code == rackchaos::ExitCode::kExpectationFailed);
  CHECK(at_end.row.status == "failed");
  CHECK(LastEventAt(at_end) > Duration::Hours(1));
  // A continuous gate that holds lets the run finish and pass.
  Ran holds = RunText(std::string(kWatchBase) + "expect:\n  - {gate: \"blast.jobs.max <= 1\", continuous: true}\n");
  CHECK(holds.row.status == "passed");
  CHECK(holds.out.gates.size() == 1);
}

TEST_CASE("watch: an aborted run replays to the same reason and events") {
  std::string plan = std::string(kWatchBase) + "safety: {abort: {jobs_down: 0}}\n";
  Ran a = RunText(plan);
  Ran b = RunText(plan);
  CHECK(a.row.failed_reason == b.row.failed_reason);
  REQUIRE(a.events.size() == b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) CHECK(a.events[i].detail == b.events[i].detail);
}

TEST_CASE("watch: only upper bounds on metrics that never decrease may be continuous") {
  auto plan = runner::ParsePlan(std::string(kWatchBase) + "expect:\n  - {gate: \"ettr.min >= 0.9\", continuous: true}\n", "w.yaml");
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {});
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().message().find("w.yaml:11:") == 0);
  CHECK(spec.status().message().find("cannot be continuous") != std::string::npos);
  auto bad = runner::ParsePlan(std::string(kWatchBase) + "expect:\n  - {gate: \"ttr.max < 2m\", continuous: yes}\n", "w.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("true or false") != std::string::npos);
  auto unknown = runner::ParsePlan(std::string(kWatchBase) + "safety: {abort: {gpus_ofline: 3}}\n", "w.yaml");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("gpus_offline") != std::string::npos);
}
