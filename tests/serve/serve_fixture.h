// Report databases for the serve tests: a small fleet of runs on one rack (tests/reports' sample run,
// varied), a sweep and a qualification record; and the same with hostile text in every field a page
// shows (plan names, targets, selectors, incident lines, serials, sweep points, qualification suites).
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "reports/store.h"
#include "tests/reports/test_util.h"

namespace rackchaos::serve::testing {

// Script that marks the document when it runs, then control characters, quotes and a tag that closes an
// attribute: if any page lets it through unescaped, Chromium runs it and the mark shows in the DOM.
inline std::string Hostile(const std::string& where) {
  return "<script>document.documentElement.setAttribute('data-pwned','" + where + "')</script>\"'\x01\x1b[31m" +
         "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','" + where + "-img')\">";
}

inline void Exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    throw std::runtime_error("cannot open " + db_path);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error(sql + ": " + message);
}

// SQL text literal.
inline std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Writes `runs` runs (statuses cycling passed, failed, aborted, and the last one left 'running') of the
// sample cluster, every third with backend ssh; tags them as one sweep with two grid points and adds a
// qualification of rack RK-001. With `hostile`, every text a page shows carries Hostile().
inline void WriteFleet(const std::string& db_path, int runs, bool hostile) {
  auto store = reports::ReportStore::Open(db_path);
  if (!store.ok()) throw std::runtime_error(store.status().ToString());
  const std::string h = hostile ? Hostile("x") : "";
  for (int i = 1; i <= runs; ++i) {
    reports::RunInfo info = reports::testing::SampleRunInfo();
    info.plan_name = hostile ? Hostile("plan") : (i % 2 ? "tray-pull" : "link-flap");
    info.backend = i % 3 == 0 ? "ssh" : "sim";
    info.seed = static_cast<uint64_t>(i);
    info.started_wall = "2025-01-" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "T03:04:05Z";
    const int64_t run = *store->BeginRun(info);
    std::vector<reports::ComponentRow> components = reports::testing::SampleComponents();
    if (hostile) {
      components[0].serial = Hostile("serial");
      components[1].name = "r01.tray03" + Hostile("target");
    }
    if (!store->AddComponents(run, components).ok()) throw std::runtime_error("components");
    (void)store->AddJobs(run, reports::testing::SampleJobs());
    std::vector<Event> events = reports::testing::SampleEvents();
    if (hostile) {
      std::get<FaultInjected>(events[1].body).selector = Hostile("selector");
      std::get<FaultInjected>(events[1].body).detail = Hostile("detail");
      std::get<ActionTaken>(events[7].body).detail = "kernel: NVRM: Xid 79 " + Hostile("incident");
    }
    (void)store->AppendEvents(run, events);
    if (i == runs) break;  // the newest stays running
    RunMetrics metrics = reports::testing::SampleMetrics();
    metrics.faults[0].time_to_recover = Duration::Seconds(100 + 10 * i);
    metrics.faults[0].time_to_detect = Duration::Seconds(i);
    if (hostile) metrics.faults[0].target = components[1].name;
    (void)store->AddMetrics(run, metrics);
    const char* status = i % 3 == 1 ? "passed" : i % 3 == 2 ? "failed" : "aborted";
    (void)store->FinishRun(run, status, i % 3 == 1 ? 0 : 1, "2025-01-02T04:00:00Z", hostile ? Hostile("reason") : "");
  }
  const std::string point = hostile ? Hostile("point") : "healer=default";
  Exec(db_path, "INSERT INTO sweep_runs(run_id, sweep, point) SELECT id, 'abc123', CASE WHEN id % 2 = 1 THEN " +
                    Quote(point) + " ELSE 'healer=aggressive' END FROM runs WHERE status != 'running'");
  const std::string rack = hostile ? Hostile("serial") : "RK-001";
  Exec(db_path,
       "INSERT INTO qualifications(id, rack, suite, started_wall, ended_wall, verdict, exit_code, reason,"
       " command_line) VALUES (1, " +
           Quote(rack) + ", " + Quote(hostile ? Hostile("suite") : "gb200") +
           ", '2025-02-01T00:00:00Z', '2025-02-01T01:00:00Z', 'failed', 1, " + Quote(h) +
           ", 'x');"
           "INSERT INTO qualification_plans VALUES (1, 1, '1-tray', " +
           Quote(hostile ? Hostile("plan-path") : "a.yaml") +
           ", 1, 'passed', ''), (1, 2, '2-rack', 'b.yaml', 2, 'failed', 'ttr.max < 1m')");
}

}  // namespace rackchaos::serve::testing
