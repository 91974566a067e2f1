// Read-only queries behind `rackchaos serve` (runner/serve/): the runs list with filters, a run's events
// after a sequence number (a running run's page polls it), a rack serial's page, sweeps and
// qualification records. Plain structs out; the HTTP layer renders them as HTML and JSON.
//
// Every function only reads (a TEMP table at most, which a read-only connection may write), so they
// work on a store opened with ReportStore::OpenReadOnly while another process writes the file in WAL
// mode. Each bounds what it returns (limits below), so a page costs the same with 10 or 10,000 runs
// (bench/serve measures it).
//
// Errors: the store's Status: kCorrupt for a file that is not a report, kUnavailable when locked past
// the busy timeout, kNotFound for an unknown run or sweep.
// Threading: as the store's (one connection, one thread at a time).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/history.h"
#include "reports/qualification_store.h"
#include "reports/store.h"
#include "reports/sweep_store.h"

namespace rackchaos::reports {

// --- Runs (reports/web_runs.cpp) ---

// Filters of the runs page; empty fields do not filter.
struct RunFilter {
  std::string plan;     // plan_name, exactly
  std::string rack;     // a component serial: runs whose cluster has it
  std::string status;   // running | passed | failed | error | interrupted | aborted
  std::string backend;  // sim | ssh
  std::string since;    // started_wall from this ISO date or time on ("2024-05-01")
  std::string until;    // started_wall up to this date or time, inclusive of its whole prefix
  int64_t before = 0;   // paging: only runs with a smaller id (0: from the newest)
  int limit = 50;       // 1..500
};

struct RunListRow {
  int64_t id = 0;
  std::string plan_name, status, backend, host, started_wall, ended_wall, failed_reason;
  uint64_t seed = 0;
  int faults = 0;                   // fault rows stored so far
  int unrecovered = 0;              // scored faults with no time to recover
  std::optional<double> ttr_max_s;  // worst scored time to recover (absent: none recovered or not scored)
};

struct RunListPage {
  std::vector<RunListRow> runs;        // newest first
  int64_t matching = 0;                // runs that match the filter, all pages
  std::optional<int64_t> next_before;  // the `before` of the next page, when there is one
};

// kInvalidArgument for a bad status, backend or limit.
Result<RunListPage> ListRunsPage(const ReportStore& store, const RunFilter& filter);

// The distinct plan names (at most `limit`, by name), for the filter's choices.
Result<std::vector<std::string>> ListPlanNames(const ReportStore& store, int limit = 200);

// What a database holds, for the index page.
struct DbOverview {
  int64_t runs = 0;
  std::map<std::string, int64_t> by_status;
  int64_t sweeps = 0;
  int64_t qualifications = 0;
  std::optional<int64_t> latest_run;
};
Result<DbOverview> ReadOverview(const ReportStore& store);

// Recovered faults of every scored run, by rack (the first part of the target's name, as RackOfName in
// reports/fault_digest.h): serve's rackchaos_rack_recoveries_total and rackchaos_rack_recovery_seconds_total.
struct RackRecoveryTotal {
  std::string rack;
  int64_t recoveries = 0;
  double seconds = 0;  // sum of their times to recover
};
Result<std::vector<RackRecoveryTotal>> ReadRackRecoveryTotals(const ReportStore& store);

// One row of event_log (names resolved).
struct EventLogRow {
  int64_t seq = 0;
  double t_s = 0;
  std::string type, component, job;
  std::optional<int64_t> fault;
  std::string detail;
};
// The run's events with seq > `after`, in seq order, at most `limit` (1..5000). kNotFound for an
// unknown run.
Result<std::vector<EventLogRow>> ReadEventsAfter(const ReportStore& store, int64_t run, int64_t after, int limit);

// --- A rack serial's page (reports/web_rack.cpp) ---

// One run that touched the rack: counts and worst times over the faults under it.
struct RackRunPoint {
  int64_t run = 0;
  std::string plan_name, started_wall, status;
  int faults = 0, isolations = 0, unrecovered = 0;
  std::optional<double> ttd_max_s, tti_max_s, ttr_max_s;
};

// A part under the rack the healer took out, and how often.
struct IsolatedPart {
  std::string name, serial;
  int isolations = 0;
  int runs = 0;
};

// A qualification as serve shows it: the store's row (reports/qualification_store.h).
using QualificationDetail = QualificationRow;

struct RackPage {
  std::string serial;
  int64_t runs_total = 0;                           // every run that touched it
  std::map<std::string, int64_t> by_status;         // over all of them
  std::vector<RackRunPoint> runs;                   // the newest `limit`, oldest first (the chart's points)
  std::vector<IsolatedPart> isolated;               // most isolated first, at most 50
  std::vector<RepeatOffender> lemons;               // isolated as really faulty in >= min_runs runs
  std::vector<QualificationDetail> qualifications;  // newest first
};

// An unknown serial gives an empty page, not an error. `limit` 1..2000.
Result<RackPage> ReadRackPage(const ReportStore& store, const std::string& serial, int limit = 200, int min_runs = 2);

// Rack serials the database knows: the serials of its rack components, by name (at most `limit`).
Result<std::vector<std::string>> ListRackSerials(const ReportStore& store, int limit = 500);

// --- Sweeps (reports/web_sweeps.cpp) ---

// The sweep list is the sweep store's (reports/sweep_store.h ListSweeps).

// One metric over the runs of a grid point: runs where it had a value, and its statistics over them.
struct SweepMetricStats {
  std::string metric;  // ttr.max | ttd.max | ettr.min | gpu_hours_lost
  int n = 0;           // runs with a finite value (a fault never recovered leaves ttr.max out)
  double mean = 0, p50 = 0, p95 = 0, min = 0, max = 0;
  std::vector<double> values;  // every finite value, sorted (the plot's points)
};

struct SweepPointRow {
  std::string point;
  int runs = 0, passed = 0;
  std::vector<SweepMetricStats> metrics;
};

struct SweepPage {
  std::string id;
  std::string plan_name;
  int runs = 0;
  std::vector<SweepPointRow> points;  // by point label
};

// kNotFound when the database has no runs of `sweep_id`.
Result<SweepPage> ReadSweepPage(const ReportStore& store, const std::string& sweep_id);

}  // namespace rackchaos::reports
