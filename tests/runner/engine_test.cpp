// The engine (runner/engine/engine.h) on the virtual clock: the same stages and safety rules for a backend
// that stages fault groups ahead of their instant as for the simulator, and no failure after the run
// row exists leaves the run 'running' or the log clock pointing at a clock that is gone.
#include "runner/engine/engine.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/log.h"
#include "reports/live_metrics.h"
#include "reports/store.h"
#include "runner/engine/run.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"
#include "tests/runner/run_fixture.h"

namespace rackchaos::runner {
namespace {

using testing::TempDir;

struct Validated {
  Plan plan;
  RunSpec spec;
};

Validated Validate(const std::string& text, const std::string& path) {
  auto plan = ParsePlan(text, path);
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  auto spec = ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());
  return {std::move(*plan), std::move(*spec)};
}

reports::RunRow OnlyRun(const std::string& db) {
  auto store = reports::ReportStore::OpenForReading(db);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  auto runs = store->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  return runs->back();
}

// What one line logged now looks like on stderr (the run-time stamp, the level, the text).
std::string LogLine(const std::string& dir) {
  InitLogging(spdlog::level::info);
  const std::string path = dir + "/stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE* file = std::fopen(path.c_str(), "w");
  REQUIRE(file != nullptr);
  ::dup2(::fileno(file), 2);
  spdlog::info("probe");
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(file);
  spdlog::set_level(spdlog::level::warn);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("engine: a run that fails after its run row is stored as an error and leaves no log clock behind") {
  TempDir dir("engine-error");
  Validated v = Validate(
      "name: too-big\nduration: 1h\ncluster: {model: gb200-nvl72, racks: 1}\n"
      "workload:\n  jobs:\n    - {name: small, gpus: 8, step_time: 5s}\n",
      (dir.path / "plan.yaml").string());
  v.spec.jobs[0].gpus = 100000;  // past validation: the simulator refuses to place it once the run row exists
  RunOptions opt;
  opt.db_path = (dir.path / "e.db").string();
  const RunOutcome out = ExecuteRun(v.plan, v.spec, opt);
  CHECK(out.code == ExitCode::kRuntimeError);
  CHECK_MESSAGE(out.error.find("asks for 100000 GPUs") != std::string::npos, out.error);
  REQUIRE(out.run_id != 0);
  const reports::RunRow run = OnlyRun(opt.db_path);
  CHECK(run.status == "error");
  CHECK(run.exit_code == 3);
  CHECK_MESSAGE(run.failed_reason.find("asks for 100000 GPUs") != std::string::npos, run.failed_reason);
  // The run's clock is gone with the run: the next line logged is stamped "-", not with its time.
  const std::string line = LogLine(dir.path.string());
  CHECK_MESSAGE(line.find("[         -] info  probe") != std::string::npos, line);
}

// A backend that stages fault groups and lands them at their instant, like a site, but on the virtual
// clock: it applies nothing, it records when the engine calls it.
class StagingBackend : public cluster::Backend {
 public:
  explicit StagingBackend(Clock& clock) : clock_(clock) {}
  std::vector<std::string> calls;

  std::string Name() const override { return "staging"; }
  bool Supports(cluster::Verb) const override { return true; }
  Status SetNvlinkPort(ComponentId, int, bool, FaultId) override { return Status::Ok(); }
  Status SetNicLink(ComponentId, bool up, FaultId cause) override {
    calls.push_back(At() + (up ? " up #" : " down #") + std::to_string(cause) + (staging_ ? " staged" : ""));
    return Status::Ok();
  }
  Result<double> GetPowerCap(ComponentId) override { return 1200.0; }
  Status SetPowerCap(ComponentId, double, FaultId) override { return Status::Ok(); }
  Result<double> GetValveOpening(ComponentId) override { return 1.0; }
  Status SetValveOpening(ComponentId, double, FaultId) override { return Status::Ok(); }
  Status Release(cluster::Held, cluster::Target, FaultId) override { return Status::Ok(); }
  Status SetTrayPresent(ComponentId, bool, FaultId) override { return Status::Ok(); }
  Status Drain(ComponentId, const std::string&) override { return Status::Ok(); }
  Status Resume(ComponentId) override { return Status::Ok(); }
  Status ResetGpu(ComponentId) override { return Status::Ok(); }
  Status RequeueJob(JobId, const std::string&) override { return Status::Ok(); }
  Status RunDiagnostic(ComponentId) override { return Status::Ok(); }
  void Subscribe(cluster::ObservationSink*) override {}

  // Staged 3 s ahead; told the instant at the instant (CommitGroup returns once the group has landed,
  // which a backend on the virtual clock can only do at `at` itself).
  cluster::GroupLeads Leads() const override { return {Duration::Seconds(3), Duration{}}; }
  bool StageGroup(Time at) override {
    calls.push_back(At() + " stage for " + FormatDuration(at));
    staging_ = true;
    return true;
  }
  std::map<FaultId, Status> SealGroup() override {
    staging_ = false;
    calls.push_back(At() + " seal");
    return {};
  }
  std::map<FaultId, Status> CommitGroup(Time at) override {
    calls.push_back(At() + " commit at " + FormatDuration(at));
    return {};
  }

 private:
  std::string At() const { return FormatDuration(clock_.Now()); }
  Clock& clock_;
  bool staging_ = false;
};

TEST_CASE("engine: a backend that stages groups gets them ahead of their instant, within the safety limit") {
  TempDir dir("engine-staging");
  const Validated v = Validate(
      "name: staged\nduration: 1m\ncluster: {model: gb200-nvl72, racks: 1}\nfaults:\n"
      "  - {at: 10s, kind: link_down, target: r01.tray01.nic0, for: 20s}\n"
      "  - {at: 10s, kind: link_down, target: r01.tray01.nic1, for: 20s}\n"
      "  - {at: 20s, kind: link_down, target: r01.tray02.nic0, for: 5s}\n"
      "  - {at: 40s, kind: link_down, target: r01.tray02.nic1}\n"
      "safety: {max_faults_at_once: 1}\n",
      (dir.path / "plan.yaml").string());
  VirtualClock clock;
  RecordingSink events(RecordingSink::Mode::kWriteThrough);
  StagingBackend backend(clock);
  RunOptions opt;
  opt.db_path = (dir.path / "s.db").string();
  reports::LiveMetrics live;  // --metrics-listen: fed by the engine whatever the backend
  opt.live = &live;
  const RunOutcome out = RunPlan(v.plan, v.spec, {backend, clock, events, std::nullopt, kGateCheckPeriod}, opt);
  CHECK_MESSAGE(out.code == ExitCode::kPass, out.error);
  // Staged the stage lead before `at`, committed at it; the second fault of the first group and the
  // fault at 20s would pass the limit and are never staged.
  const std::vector<std::string> want = {"7s stage for 10s",  "7s down #1 staged", "7s seal",
                                         "10s commit at 10s", "17s stage for 20s", "17s seal",
                                         "30s up #1",         "37s stage for 40s", "37s down #4 staged",
                                         "37s seal",          "40s commit at 40s", "1m up #4"};
  CHECK(backend.calls == want);
  std::vector<std::string> seen;
  for (const Event& e : events.events()) {
    if (auto* f = std::get_if<FaultInjected>(&e.body))
      seen.push_back(FormatDuration(e.at) + " injected #" + std::to_string(f->fault));
    if (auto* a = std::get_if<ActionTaken>(&e.body); a && a->action == "safety")
      seen.push_back(FormatDuration(e.at) + " " + a->detail.substr(0, a->detail.find(':')));
    if (auto* r = std::get_if<FaultReverted>(&e.body))
      seen.push_back(FormatDuration(e.at) + " reverted #" + std::to_string(r->fault));
  }
  const std::vector<std::string> events_want = {"7s fault #2 link_down on r01.tray01.nic1 skipped",
                                                "10s injected #1",
                                                "17s fault #3 link_down on r01.tray02.nic0 skipped",
                                                "30s reverted #1",
                                                "40s injected #4",
                                                "1m reverted #4"};
  CHECK(seen == events_want);
  const reports::RunRow run = OnlyRun(opt.db_path);
  CHECK(run.info.backend == "staging");
  CHECK(run.status == "passed");
  // The live metrics saw the run as the store did: its backend, the two faults that landed, its end.
  const std::string metrics = live.Render();
  CHECK(metrics.find("rackchaos_runs_started_total{backend=\"staging\"} 1") != std::string::npos);
  CHECK(metrics.find("rackchaos_runs_finished_total{status=\"passed\"} 1") != std::string::npos);
  double injected = 0;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("rackchaos_faults_injected_total{", 0) == 0) injected += std::stod(line.substr(line.rfind(' ') + 1));
  CHECK(injected == 2);
}

// A backend whose fault verb throws, as a bug or an exhausted resource would: the run must still end
// 'error' with the message, and what it applied be reverted, not stay 'running' (issue 26 item 3).
class ThrowingBackend : public StagingBackend {
 public:
  using StagingBackend::StagingBackend;
  Status SetNicLink(ComponentId c, bool up, FaultId cause) override {
    if (!up) throw std::runtime_error("resource exhausted");
    return StagingBackend::SetNicLink(c, up, cause);
  }
};

TEST_CASE("engine: an exception out of a backend verb ends the run as an error, not 'running'") {
  TempDir dir("engine-throw");
  const Validated v = Validate(
      "name: throws\nduration: 1m\ncluster: {model: gb200-nvl72, racks: 1}\nfaults:\n"
      "  - {at: 10s, kind: link_down, target: r01.tray01.nic0, for: 20s}\n",
      (dir.path / "plan.yaml").string());
  VirtualClock clock;
  RecordingSink events(RecordingSink::Mode::kWriteThrough);
  ThrowingBackend backend(clock);
  RunOptions opt;
  opt.db_path = (dir.path / "t.db").string();
  const RunOutcome out = RunPlan(v.plan, v.spec, {backend, clock, events, std::nullopt, kGateCheckPeriod}, opt);
  CHECK(out.code == ExitCode::kRuntimeError);
  CHECK_MESSAGE(out.error.find("unexpected exception while running the timeline: resource exhausted") !=
                    std::string::npos,
                out.error);
  const reports::RunRow run = OnlyRun(opt.db_path);
  CHECK(run.status == "error");
  CHECK(run.exit_code == 3);
  CHECK_MESSAGE(run.failed_reason.find("resource exhausted") != std::string::npos, run.failed_reason);
}

// A backend whose revert fails as when the host is lost, and which (if `made_good`) says it carried the
// revert out itself later, as a site does when the lost host answers again within the run.
class LateRevertBackend : public StagingBackend {
 public:
  LateRevertBackend(Clock& clock, bool made_good) : StagingBackend(clock), made_good_(made_good) {}
  Status SetNicLink(ComponentId c, bool up, FaultId cause) override {
    if (!up) return StagingBackend::SetNicLink(c, up, cause);
    failed_.insert(cause);
    return Status::Unavailable("h2 did not answer");
  }
  bool RevertedLate(FaultId fault) const override { return made_good_ && failed_.count(fault) > 0; }

 private:
  bool made_good_;
  std::set<FaultId> failed_;
};

TEST_CASE("engine: a failed revert the backend made good later is not an error; one it did not is") {
  TempDir dir("engine-late");
  const Validated v = Validate(
      "name: late\nduration: 1m\ncluster: {model: gb200-nvl72, racks: 1}\nfaults:\n"
      "  - {at: 10s, kind: link_down, target: r01.tray01.nic0, for: 20s}\n",
      (dir.path / "plan.yaml").string());
  for (bool made_good : {true, false}) {
    CAPTURE(made_good);
    VirtualClock clock;
    RecordingSink events(RecordingSink::Mode::kWriteThrough);
    LateRevertBackend backend(clock, made_good);
    RunOptions opt;
    opt.db_path = (dir.path / (made_good ? "good.db" : "bad.db")).string();
    const RunOutcome out = RunPlan(v.plan, v.spec, {backend, clock, events, std::nullopt, kGateCheckPeriod}, opt);
    const reports::RunRow run = OnlyRun(opt.db_path);
    if (made_good) {
      CHECK_MESSAGE(out.code == ExitCode::kPass, out.error);
      CHECK(run.status == "passed");
    } else {
      CHECK(out.code == ExitCode::kRuntimeError);
      CHECK_MESSAGE(out.error.find("1 fault, job or revert step(s) failed") != std::string::npos, out.error);
      CHECK(run.status == "error");
    }
    // Either way the report keeps the failed revert as it happened. Without continuous gates or live
    // metrics the sink kept none of the events it stored: they are read back from the report.
    CHECK(events.events().empty());
    auto store = reports::ReportStore::OpenReadOnly(opt.db_path);
    REQUIRE(store.ok());
    auto stored = store->ReadRunEvents(run.id);
    REQUIRE(stored.ok());
    CHECK(!stored->empty());
    int failed_reverts = 0;
    for (const Event& e : *stored)
      if (auto* r = std::get_if<FaultReverted>(&e.body); r && r->detail.find("did not answer") != std::string::npos)
        ++failed_reverts;
    CHECK(failed_reverts == 1);
  }
}

}  // namespace
}  // namespace rackchaos::runner
