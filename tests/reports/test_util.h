// Shared helpers for the reports tests: a temporary directory and a small but complete sample run.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/metrics.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"
#include "reports/store_state.h"  // StoreAccess: white-box checks of the stored rows

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
                    0.8012, 1, 420, Duration::Seconds(590), 2});
  m.jobs.push_back({1, "eval", 8, Duration::Seconds(600), Duration::Seconds(600), 1.0, 0.999, 0, 1200});
  m.isolations = 2;
  m.correct_isolations = 1;
  m.precision = 0.5;
  m.recall = 1;
  m.false_isolations = {"r01.tray05"};
  m.faulty_isolations = {"r01.tray03"};
  m.gpus_drained = 8;
  m.drained_gpu_hours = 1.5;
  m.missed_faults = {};
  return m;
}

// Two expectations: one held, one failed because the metric never had a value.
inline std::vector<GateRow> SampleGates() {
  return {{"ttd.max < 30s", "ttd.max", "<", 30, 12.5, true, "ttd.max < 30s: 12.5s (pass)"},
          {"ttr.max < 5m", "ttr.max", "<", 300, std::numeric_limits<double>::infinity(), false,
           "ttr.max < 5m: never (FAIL)"}};
}

// One event of every shape the detail text of the `events` view distinguishes (ports, absent ids,
// empty texts, infinities, exponents, every unit of lost work). Run 2 of data/v2_quickstart.sql holds
// these events as schema version 2 wrote them.
inline std::vector<Event> EdgeEvents() {
  const double inf = std::numeric_limits<double>::infinity();
  auto physics = [](double v) { return PhysicsChanged{1, "temp", v, 3}; };
  auto lost = [](int64_t us) {
    return JobChanged{1, JobState::kQueued, 3, 0, 1, 8, Duration::Micros(us), kNoFault, "", {}};
  };
  return {
      {Duration::Seconds(1), FaultInjected{3, "link_down", 5, 7, "r01.nvs1.port7", ""}},
      {Duration::Seconds(1), FaultInjected{kNoFault, "x", kNoComponent, -1, "", "a'b"}},
      {Duration::Seconds(2), FaultReverted{3, ""}},
      {Duration::Seconds(2), FaultReverted{kNoFault, "orphan"}},
      {Duration::Seconds(3), PhysicsChanged{kNoComponent, "temp", 1234567.0, kNoFault}},
      {Duration::Seconds(3), physics(0.000012345678)},
      {Duration::Seconds(3), physics(inf)},
      {Duration::Seconds(3), physics(-inf)},
      {Duration::Seconds(3), physics(1e21)},
      {Duration::Seconds(3), physics(-2.5e-7)},
      {Duration::Seconds(3), physics(100000.5)},
      {Duration::Seconds(3), physics(0.1 + 0.2)},
      {Duration::Seconds(4), Detected{kNoDetection, "xid", kNoComponent, ""}},
      {Duration::Seconds(5), Isolated{kNoComponent, "rack", {}, ""}},
      {Duration::Seconds(5), Isolated{2, "gpu", {4, 5, 6}, "r"}},
      {Duration::Seconds(6), ActionTaken{"gpu_reset", 2, 1, false, "timeout"}},
      {Duration::Seconds(6), ActionTaken{"alert", kNoComponent, kNoJob, false, ""}},
      {Duration::Seconds(7), JobChanged{1, JobState::kRestarting, 12.75, 0, 0, 8,
                                        Duration::Micros(93784005006), 3, "", {}}},
      {Duration::Seconds(7), JobChanged{1, JobState::kFailed, 1e-9, 0, 0, 8, Duration::Micros(500000),
                                        kNoFault, "oom", {1}}},
      {Duration::Seconds(7), JobChanged{1, JobState::kFinished, 3, 0, 2.0 / 3, 8, Duration::Micros(3000),
                                        kNoFault, "", {}}},
      {Duration::Seconds(7), lost(3600000000)},
      {Duration::Seconds(7), lost(1)},
      {Duration::Seconds(7), lost(60000000)},
      {Duration::Seconds(7), lost(86400000000)},
      {Duration::Seconds(8), Checkpointed{kNoJob, 123456789.0}},
  };
}

// The details schema version 2 stored for EdgeEvents(), formatted in C++ when written.
inline std::vector<std::string> EdgeEventDetails() {
  return {
      "link_down on 'r01.nvs1.port7' port 7",
      "x on '': a'b",
      "reverted",
      "reverted: orphan",
      "temp value=1.23457e+06",
      "temp value=1.23457e-05",
      "temp value=inf",
      "temp value=-inf",
      "temp value=1e+21",
      "temp value=-2.5e-07",
      "temp value=100000",
      "temp value=0.3",
      "detection 0 by xid: ",
      "isolated rack for detections []: ",
      "isolated gpu for detections [4,5,6]: r",
      "gpu_reset FAILED: timeout",
      "alert FAILED",
      "restarting steps=12.75 speed=0 gpus=8 lost_work=1d2h3m4.005006s",
      "failed steps=1e-09 speed=0 gpus=8 lost_work=500ms: oom",
      "finished steps=3 speed=0.666667 gpus=8 lost_work=3ms",
      "queued steps=3 speed=1 gpus=8 lost_work=1h",
      "queued steps=3 speed=1 gpus=8 lost_work=0.000001s",
      "queued steps=3 speed=1 gpus=8 lost_work=1m",
      "queued steps=3 speed=1 gpus=8 lost_work=1d",
      "checkpoint at step 1.23457e+08",
  };
}

// Builds a database at `db_path` from a SQL text file (a checked-in dump under tests/reports/data).
inline void LoadDump(const std::string& sql_file, const std::string& db_path) {
  std::ifstream in(sql_file);
  REQUIRE_MESSAGE(in, "cannot read " << sql_file);
  std::string sql((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto db = Db::Open(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  Status s = db->Exec(sql, "loading " + sql_file);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
}

inline std::string DataFile(const std::string& name) {
  return std::string(RACKCHAOS_SOURCE_DIR) + "/tests/reports/data/" + name;
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

// The lines of `text`, without their '\n'.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// How many times `part` occurs in `text` (overlapping occurrences count).
inline size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t i = text.find(part); i != std::string::npos; i = text.find(part, i + 1)) ++n;
  return n;
}

// A report database opened for a test: OpenOrCreate creates the file if missing, OpenExisting does not.
// Either fails the test when the file cannot be opened. Int* run one query that yields an integer.
inline Db OpenForTest(const std::string& path, int flags) {
  auto db = Db::Open(path, flags);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  return std::move(db).value();
}
inline Db OpenOrCreate(const std::string& path) { return OpenForTest(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE); }
inline Db OpenExisting(const std::string& path) { return OpenForTest(path, SQLITE_OPEN_READWRITE); }
inline int64_t IntOf(Db db, const std::string& sql) {
  auto v = db.QueryInt(sql, "test query");
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return *v;
}
inline int64_t IntOpenOrCreate(const std::string& path, const std::string& sql) { return IntOf(OpenOrCreate(path), sql); }
inline int64_t IntOpenExisting(const std::string& path, const std::string& sql) { return IntOf(OpenExisting(path), sql); }

}  // namespace rackchaos::reports::testing
