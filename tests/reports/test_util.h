// Shared helpers for the reports tests: a temporary directory and a small but complete sample run.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/metrics.h"
#include "reports/store.h"

namespace rackchaos::reports::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rackchaos_reports_XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline RunInfo SampleRunInfo() {
  RunInfo info;
  info.plan_name = "tray-pull";
  info.plan_path = "scenarios/tray_pull.yaml";
  info.plan_text = "name: tray-pull\nfaults:\n  - at: 60s\n    kind: tray_pull\n";
  info.seed = 42;
  info.version = "0.1.0";
  info.host = "ci-runner-1";
  info.backend = "sim";
  info.started_wall = "2025-01-02T03:04:05Z";
  info.command_line = "rackchaos run scenarios/tray_pull.yaml --seed 42";
  return info;
}

inline std::vector<ComponentRow> SampleComponents() {
  return {{0, "r01", "rack", kNoComponent, "RK-001"},
          {1, "r01.tray03", "compute_tray", 0, "TR-003"},
          {2, "r01.tray03.gpu2", "gpu", 1, "GPU-32"},
          {3, "r01.tray05", "compute_tray", 0, "TR-005"}};
}

inline std::vector<JobRow> SampleJobs() { return {{0, "llm-train", 72, 1.25}, {1, "eval", 8, 0.5}}; }

// One of every event type, in a plausible order.
inline std::vector<Event> SampleEvents() {
  return {
      {Duration::Seconds(0), JobChanged{0, JobState::kRunning, 0, 1.25, 1, 72, {}, kNoFault, "placed", {1, 3}}},
      {Duration::Seconds(60), FaultInjected{1, "tray_pull", 1, -1, "r01.tray03", "graceful=false"}},
      {Duration::Seconds(60), PhysicsChanged{1, "removed", 0, 1}},
      {Duration::Seconds(60), JobChanged{0, JobState::kHung, 48, 0, 0, 72, {}, 1, "collective hang", {}}},
      {Duration::Millis(72500), Detected{1, "heartbeat", 1, "no heartbeat for 12.5s"}},
      {Duration::Seconds(80), Isolated{1, "compute_tray", {1}, "heartbeat lost"}},
      {Duration::Seconds(80), Isolated{3, "compute_tray", {1}, "same power shelf"}},
      {Duration::Seconds(81), ActionTaken{"drain", 1, kNoJob, true, "scontrol drain"}},
      {Duration::Seconds(82), ActionTaken{"requeue_job", kNoComponent, 0, true, ""}},
      {Duration::Seconds(90), JobChanged{0, JobState::kRunning, 40, 1.3, 0.9615, 72,
                                         Duration::Seconds(10), 1, "on spares", {3, 4}}},
      {Duration::Seconds(120), Checkpointed{0, 64}},
      {Duration::Seconds(600), FaultReverted{1, "tray reinserted"}},
  };
}

inline RunMetrics SampleMetrics() {
  RunMetrics m;
  FaultMetrics f;
  f.fault = 1;
  f.kind = "tray_pull";
  f.target = "r01.tray03";
  f.injected = Duration::Seconds(60);
  f.reverted = Duration::Seconds(600);
  f.time_to_detect = Duration::Millis(12500);
  f.time_to_isolate = Duration::Seconds(20);
  f.time_to_recover = std::nullopt;
  f.gpus_direct = 4;
  f.gpus_collateral = 68;
  f.jobs_touched = 1;
  f.jobs_interrupted = 1;
  f.gpu_hours_lost = 1.2345;
  f.rework = Duration::Seconds(10);
  f.isolated = {"r01.tray03", "r01.tray05"};
  m.faults.push_back(f);
  m.impacts.push_back({1, 0, "llm-train", true, Duration::Seconds(30), Duration::Seconds(10), 0.01, 0.8});
  m.jobs.push_back({0, "llm-train", 72, Duration::Seconds(600), Duration::Seconds(524), 0.8734,
                    0.8012, 1, 420});
  m.jobs.push_back({1, "eval", 8, Duration::Seconds(600), Duration::Seconds(600), 1.0, 0.999, 0, 1200});
  m.isolations = 2;
  m.correct_isolations = 1;
  m.precision = 0.5;
  m.recall = 1;
  m.false_isolations = {"r01.tray05"};
  m.missed_faults = {};
  return m;
}

// Two expectations: one held, one failed because the metric never had a value.
inline std::vector<GateRow> SampleGates() {
  return {{"ttd.max < 30s", "ttd.max", "<", 30, 12.5, true, "ttd.max < 30s: 12.5s (pass)"},
          {"ttr.max < 5m", "ttr.max", "<", 300, std::numeric_limits<double>::infinity(), false,
           "ttr.max < 5m: never (FAIL)"}};
}

// Writes the whole sample run (events in two batches) and returns its id.
inline int64_t WriteSampleRun(ReportStore& store) {
  auto run = store.BeginRun(SampleRunInfo());
  REQUIRE(run.ok());
  REQUIRE(store.AddComponents(*run, SampleComponents()).ok());
  REQUIRE(store.AddJobs(*run, SampleJobs()).ok());
  std::vector<Event> events = SampleEvents();
  std::vector<Event> first(events.begin(), events.begin() + 5), rest(events.begin() + 5, events.end());
  REQUIRE(store.AppendEvents(*run, first).ok());
  REQUIRE(store.AppendEvents(*run, rest).ok());
  REQUIRE(store.AddMetrics(*run, SampleMetrics()).ok());
  REQUIRE(store.AddGates(*run, SampleGates()).ok());
  REQUIRE(store.FinishRun(*run, "passed", 0, "2025-01-02T03:14:05Z", "").ok());
  return *run;
}

}  // namespace rackchaos::reports::testing
