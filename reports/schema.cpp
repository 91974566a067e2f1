#include "reports/schema.h"

#include <string>

#include "reports/incident_store.h"
#include "reports/topology_store.h"

namespace rackchaos::reports {
namespace {

// Version 1. Conventions a user querying with plain sqlite3 can rely on:
//  - every table carries run_id; event-derived tables are keyed by (run_id, seq) of their event;
//  - times are integer microseconds in *_us columns (virtual time from the start of the run), and the
//    views add *_s seconds; wall-clock time exists only in runs.started_wall / ended_wall;
//  - absent ids and absent optional durations are NULL;
//  - no column has a time-based or random default, so the same run gives the same rows;
//  - (since version 12, reports/schema_views.cpp) a view over a run's rows costs a few index lookups
//    per row it gives: it reaches a component through run_topologies, topologies and
//    topology_components by key, never through the `components` view (SQLite builds that whole, all
//    573,421 rows of a 1,778-rack file, when it is on the right of a LEFT JOIN).
// Event tables are WITHOUT ROWID: one b-tree per table keeps million-event batches fast.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE schema_history(version INTEGER PRIMARY KEY, description TEXT NOT NULL);

CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  plan_name TEXT NOT NULL, plan_path TEXT NOT NULL, plan_text TEXT NOT NULL, plan_hash TEXT NOT NULL,
  seed TEXT NOT NULL,  -- decimal uint64: it may not fit SQLite's signed integer
  version TEXT NOT NULL, host TEXT NOT NULL, backend TEXT NOT NULL, command_line TEXT NOT NULL,
  started_wall TEXT NOT NULL, ended_wall TEXT,
  status TEXT NOT NULL
    CHECK(status IN ('running', 'passed', 'failed', 'error', 'interrupted', 'aborted')),
  exit_code INTEGER, failed_reason TEXT NOT NULL DEFAULT '');

CREATE TABLE components(
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
  parent_id INTEGER, serial TEXT NOT NULL, PRIMARY KEY(run_id, id));
CREATE INDEX components_by_name ON components(run_id, name);
CREATE INDEX components_by_serial ON components(serial);

CREATE TABLE jobs(
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, gpus INTEGER NOT NULL,
  nominal_step_s REAL NOT NULL, PRIMARY KEY(run_id, id));

CREATE TABLE events(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, type TEXT NOT NULL,
  component_id INTEGER, job_id INTEGER, fault_id INTEGER, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE faults(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, fault_id INTEGER NOT NULL, kind TEXT NOT NULL,
  target_id INTEGER, port INTEGER, selector TEXT NOT NULL, detail TEXT NOT NULL,
  injected_us INTEGER NOT NULL, reverted_us INTEGER, revert_detail TEXT,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE INDEX faults_by_id ON faults(run_id, fault_id);

CREATE TABLE detections(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, detection_id INTEGER,
  detector TEXT NOT NULL, component_id INTEGER, symptom TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE isolations(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, component_id INTEGER,
  domain TEXT NOT NULL, detection_ids TEXT NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE actions(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, action TEXT NOT NULL,
  component_id INTEGER, job_id INTEGER, ok INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE job_events(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, job_id INTEGER,
  state TEXT NOT NULL, steps REAL NOT NULL, step_time_s REAL NOT NULL, speed REAL NOT NULL,
  gpus INTEGER NOT NULL, lost_work_us INTEGER NOT NULL, cause_fault_id INTEGER, detail TEXT NOT NULL,
  trays TEXT NOT NULL,  -- component ids of the trays it runs on, comma-separated
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE checkpoints(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, job_id INTEGER,
  step REAL NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE physics(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, component_id INTEGER,
  what TEXT NOT NULL, value REAL NOT NULL, cause_fault_id INTEGER,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE fault_metrics(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, fault_id INTEGER NOT NULL, kind TEXT NOT NULL,
  target TEXT NOT NULL, injected_us INTEGER NOT NULL, reverted_us INTEGER,
  ttd_us INTEGER, tti_us INTEGER, ttr_us INTEGER,
  gpus_direct INTEGER NOT NULL, gpus_collateral INTEGER NOT NULL,
  jobs_touched INTEGER NOT NULL, jobs_interrupted INTEGER NOT NULL,
  gpu_hours_lost REAL NOT NULL, rework_us INTEGER NOT NULL,
  isolated TEXT NOT NULL,  -- component names, comma-separated
  PRIMARY KEY(run_id, ord));

CREATE TABLE job_impacts(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, fault_id INTEGER NOT NULL, job_id INTEGER,
  job_name TEXT NOT NULL, interrupted INTEGER NOT NULL, stalled_us INTEGER NOT NULL,
  rework_us INTEGER NOT NULL, slowdown_hours REAL NOT NULL, gpu_hours_lost REAL NOT NULL,
  PRIMARY KEY(run_id, ord));

CREATE TABLE job_metrics(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, job_id INTEGER, name TEXT NOT NULL,
  gpus INTEGER NOT NULL, wall_us INTEGER NOT NULL, productive_us INTEGER NOT NULL,
  ettr REAL NOT NULL, goodput REAL NOT NULL, interruptions INTEGER NOT NULL, steps REAL NOT NULL,
  PRIMARY KEY(run_id, ord));

-- precision, recall, isolations, correct_isolations, false_isolations, missed_faults (counts),
-- gpus_drained, drained_gpu_hours (runs stored before these were added have no such rows: 0).
CREATE TABLE run_metrics(
  run_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY(run_id, name));
-- The names behind the false_isolations and missed_faults counts.
CREATE TABLE run_metric_items(
  run_id INTEGER NOT NULL, list TEXT NOT NULL CHECK(list IN ('false_isolation', 'missed_fault')),
  ord INTEGER NOT NULL, item TEXT NOT NULL, PRIMARY KEY(run_id, list, ord));

CREATE VIEW event_log AS
  SELECT e.run_id, e.seq, e.t_us, e.t_us / 1e6 AS t_s, e.type, c.name AS component, j.name AS job,
         e.fault_id, e.detail
  FROM events e
  LEFT JOIN components c ON c.run_id = e.run_id AND c.id = e.component_id
  LEFT JOIN jobs j ON j.run_id = e.run_id AND j.id = e.job_id;

CREATE VIEW fault_timeline AS
  SELECT f.run_id, f.fault_id, f.kind, c.name AS target, f.port, f.selector,
         f.injected_us / 1e6 AS injected_s, f.reverted_us / 1e6 AS reverted_s, f.detail
  FROM faults f LEFT JOIN components c ON c.run_id = f.run_id AND c.id = f.target_id;

CREATE VIEW fault_summary AS
  SELECT m.run_id, m.fault_id, m.kind, m.target, c.kind AS target_kind, c.serial AS target_serial,
         m.injected_us / 1e6 AS injected_s, m.ttd_us / 1e6 AS ttd_s, m.tti_us / 1e6 AS tti_s,
         m.ttr_us / 1e6 AS ttr_s, m.gpus_direct, m.gpus_collateral,
         m.gpus_direct + m.gpus_collateral AS gpus_total, m.jobs_touched, m.jobs_interrupted,
         m.gpu_hours_lost, m.rework_us / 1e6 AS rework_s, m.isolated
  FROM fault_metrics m LEFT JOIN components c ON c.run_id = m.run_id AND c.name = m.target;

CREATE VIEW job_summary AS
  SELECT run_id, job_id, name, gpus, wall_us / 1e6 AS wall_s, productive_us / 1e6 AS productive_s,
         round(ettr * 100, 1) AS ettr_pct, round(goodput * 100, 1) AS goodput_pct, interruptions,
         steps
  FROM job_metrics;

CREATE VIEW run_summary AS
  SELECT r.id AS run_id, r.plan_name, r.seed, r.backend, r.version, r.status, r.exit_code,
         r.started_wall, r.ended_wall,
         (SELECT count(*) FROM faults f WHERE f.run_id = r.id) AS faults,
         (SELECT value FROM run_metrics m WHERE m.run_id = r.id AND m.name = 'precision') AS precision,
         (SELECT value FROM run_metrics m WHERE m.run_id = r.id AND m.name = 'recall') AS recall
  FROM runs r;
)sql";

// Version 2: the expectation (gate) results of a run, one row per gate in plan order. `actual` is
// NULL when the metric had no value (a fault never detected, isolated or recovered: infinitely late).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE gates(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, text TEXT NOT NULL, metric TEXT NOT NULL,
  op TEXT NOT NULL, value REAL NOT NULL, actual REAL, passed INTEGER NOT NULL,
  message TEXT NOT NULL, PRIMARY KEY(run_id, ord));
)sql";

Status CreateV1(Db& db) {
  RC_RETURN_IF_ERROR(db.Exec(kSchemaV1, "creating schema version 1"));
  return db.Exec("PRAGMA application_id = " + std::to_string(kReportApplicationId),
                 "marking the file as a rackchaos report");
}

Status AddGatesV2(Db& db) { return db.Exec(kSchemaV2, "creating the gates table"); }

// Version 4: which runs belong to which sweep (runner/campaign/sweep.h), so aggregates can be recomputed from
// the runs of a merged file. A per-run table, so `report merge` copies it like the others.
Status AddSweepRunsV4(Db& db) {
  return db.Exec("CREATE TABLE sweep_runs(run_id INTEGER PRIMARY KEY, sweep TEXT NOT NULL, point TEXT NOT NULL);"
                 "CREATE INDEX sweep_runs_by_sweep ON sweep_runs(sweep, point)",
                 "creating the sweep_runs table");
}

// Version 5: qualification records (runner/campaign/qualify.h): one row per `rackchaos qualify` of a rack, and
// every plan of its suite with its stage, run and verdict. Not per-run tables: `report merge` leaves
// them out (their run ids belong to the file they were written in).
Status AddQualificationsV5(Db& db) {
  return db.Exec(
      "CREATE TABLE qualifications(id INTEGER PRIMARY KEY, rack TEXT NOT NULL, suite TEXT NOT NULL,"
      " started_wall TEXT NOT NULL, ended_wall TEXT,"
      " verdict TEXT NOT NULL CHECK(verdict IN ('running', 'passed', 'failed', 'error', 'interrupted')),"
      " exit_code INTEGER, reason TEXT NOT NULL DEFAULT '', command_line TEXT NOT NULL);"
      "CREATE INDEX qualifications_by_rack ON qualifications(rack);"
      "CREATE TABLE qualification_plans(qualification_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
      " stage TEXT NOT NULL, plan_path TEXT NOT NULL, run_id INTEGER,"
      " verdict TEXT NOT NULL CHECK(verdict IN ('passed', 'failed', 'aborted', 'error', 'interrupted', 'skipped')),"
      " reason TEXT NOT NULL, PRIMARY KEY(qualification_id, seq));",
      "creating the qualification tables");
}

// Version 6: the isolations a fault explains (RunMetrics::faulty_isolations), per run, so repeat
// offenders ("lemons") count only parts that were really faulty. Runs stored earlier have no rows.
Status AddFaultyIsolationsV6(Db& db) {
  return db.Exec("CREATE TABLE faulty_isolations(run_id INTEGER NOT NULL, ord INTEGER NOT NULL,"
                 " component TEXT NOT NULL, PRIMARY KEY(run_id, ord))",
                 "creating the faulty_isolations table");
}

// Version 9: `history --rack` walks a rack's subtree through topology_components by parent; without this
// index every step of the walk reads the whole topology (all components of a 1,778-rack cluster).
Status IndexTopologyParentsV9(Db& db) {
  return db.Exec("CREATE INDEX topology_components_by_parent ON topology_components(topology_id, parent_id)",
                 "indexing topology_components by parent");
}

// Version 10: `history --rack` walks a subtree in memory (reports/history.cpp), reading each topology's
// (id, parent_id) once; the index by parent cost a 1,778-rack file's first run a third of a second. The
// index by name leads with the name: every lookup gives both columns, and SQLite's sorter compares a
// leading text column directly (a leading topology_id, the same in every row, sends each comparison to
// the general record compare): a 1,778-rack file's first run builds it in about 0.15 s instead of 0.2 s.
Status ReindexTopologyComponentsV10(Db& db) {
  return db.Exec("DROP INDEX topology_components_by_parent; DROP INDEX topology_components_by_name;"
                 "CREATE INDEX topology_components_by_name ON topology_components(name, topology_id)",
                 "dropping the index of topology_components by parent, indexing by (name, topology_id)");
}

// Version 11: the share of a restart's lost work that a failed checkpoint store caused
// (JobChanged::store_lost_work and store_cause), so that scoring again from stored events charges it to
// the store's fault as the run did. Rows stored earlier read 0 and NULL: all of it on the restart's cause.
Status AddStoreLostWorkV11(Db& db) {
  return db.Exec("ALTER TABLE job_events ADD COLUMN store_lost_work_us INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE job_events ADD COLUMN store_cause_fault_id INTEGER",
                 "adding the checkpoint store's share of lost work to job_events");
}

// Version 14: sweep_runs carries the seed of each run (copied from runs for the rows it has), so that a
// sweep asks whether one (point, seed) is done with one index lookup instead of holding every pair it
// has in memory; and the wall and CPU time of each run in milliseconds, as the sweep measured them
// (NULL for runs tagged earlier). The index by (sweep, point, seed) replaces the one by (sweep, point).
Status SweepSeedsAndTimesV14(Db& db) {
  return db.Exec("ALTER TABLE sweep_runs ADD COLUMN seed TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE sweep_runs ADD COLUMN wall_ms INTEGER;"
                 "ALTER TABLE sweep_runs ADD COLUMN cpu_ms INTEGER;"
                 "UPDATE sweep_runs SET seed = coalesce((SELECT seed FROM runs WHERE runs.id = sweep_runs.run_id), '');"
                 "DROP INDEX sweep_runs_by_sweep;"
                 "CREATE INDEX sweep_runs_by_seed ON sweep_runs(sweep, point, seed)",
                 "adding the seed, wall_ms and cpu_ms of each run to sweep_runs");
}

// Version 15: a job's time up (running or restarting) and the faults that stopped it, the inputs of the
// job.mttf and job.failures_per_day gates (healer/metrics.cpp), so a sweep reads them back. Rows stored
// earlier read 0 and 0: no failures, MTTF never.
Status AddJobFailuresV15(Db& db) {
  return db.Exec("ALTER TABLE job_metrics ADD COLUMN up_us INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE job_metrics ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
                 "adding time up and failures to job_metrics");
}

// Version 16: a real run's fault ledger and its run id there (RunInfo::ledger, ledger_run), so that
// `rackchaos recover` finds the row of a run killed before the ledger learned the row's id exactly. Rows
// stored earlier read NULL: for them recover still goes by the times (runner/site/recover.cpp).
Status AddLedgerRunV16(Db& db) {
  return db.Exec("ALTER TABLE runs ADD COLUMN ledger TEXT;"
                 "ALTER TABLE runs ADD COLUMN ledger_run INTEGER",
                 "adding the fault ledger and its run id to runs");
}

// Append new steps here; never edit a step that has shipped.
constexpr Migration kMigrations[] = {
    {1, "initial schema: runs, components, jobs, events, typed event tables, metrics, views", &CreateV1},
    {2, "gates: expectation results per run", &AddGatesV2},
    {3, "each event stored once: fault_reverts, event_details; events becomes a view", &StoreEventsOnce},
    {4, "sweep_runs: the sweep and grid point of each run a sweep made", &AddSweepRunsV4},
    {5, "qualifications and qualification_plans: rack qualification records", &AddQualificationsV5},
    {6, "faulty_isolations: isolations a fault explains, for repeat offenders", &AddFaultyIsolationsV6},
    {7, "placements: a job's tray list stored once per placement, referred to by job_events.placement_id",
     &StorePlacementsOnce},
    {8, "topologies: a run's components stored once per distinct cluster (topology_components, run_topologies); components becomes a view",
     &StoreTopologiesOnce},
    {9, "topology_components_by_parent: the index history --rack walks a subtree by", &IndexTopologyParentsV9},
    {10, "topology_components_by_parent dropped (history --rack walks a subtree in memory); "
         "topology_components_by_name on (name, topology_id)",
     &ReindexTopologyComponentsV10},
    {11, "job_events.store_lost_work_us and store_cause_fault_id: "
         "a failed checkpoint store's share of a restart's lost work",
     &AddStoreLostWorkV11},
    {12, "event_log, fault_timeline, fault_summary read run_topologies, topologies and topology_components by key "
         "(no longer the components view, which SQLite built whole for fault_timeline and fault_summary)",
     &ViewsByTopologyKeys},
    {13, "incident_imports, incident_files, incident_events, incident_patterns: the logs a replay imported "
         "(reports/incident_store.h)",
     &AddIncidentTablesV13},
    {14, "sweep_runs.seed, wall_ms and cpu_ms: each sweep run's seed (one index lookup to resume) and its wall "
         "and CPU time in milliseconds",
     &SweepSeedsAndTimesV14},
    {15, "job_metrics.up_us and failures: a job's time up and the faults that stopped it (job.mttf)",
     &AddJobFailuresV15},
    {16, "runs.ledger and ledger_run: a real run's fault ledger and its run there (rackchaos recover finds the row "
         "by them)",
     &AddLedgerRunV16},
};

}  // namespace

std::span<const Migration> SchemaMigrations() { return kMigrations; }

int LatestSchemaVersion() { return kMigrations[std::size(kMigrations) - 1].version; }

Result<int> CheckSchemaVersion(Db& db, std::span<const Migration> steps) {
  // One read transaction: another process creating the schema meanwhile must not be seen half way
  // (its first step's tables without its version would read as another program's database). The
  // first read is where SQLite notices that a file is not a database at all.
  RC_ASSIGN_OR_RETURN(Transaction snapshot, Transaction::BeginRead(db, "reading the schema version"));
  RC_ASSIGN_OR_RETURN(int64_t version, db.QueryInt("PRAGMA user_version", "reading the schema version"));
  RC_ASSIGN_OR_RETURN(int64_t app_id, db.QueryInt("PRAGMA application_id", "reading the application id"));
  RC_ASSIGN_OR_RETURN(int64_t objects,
                      db.QueryInt("SELECT count(*) FROM sqlite_schema", "listing the schema"));
  RC_RETURN_IF_ERROR(snapshot.Commit("reading the schema version"));
  int latest = steps.empty() ? 0 : steps.back().version;
  if ((version > 0 && app_id != kReportApplicationId) || (version == 0 && objects > 0)) {
    return Status::Invalid("'" + db.path() + "' is an SQLite database but not a rackchaos report");
  }
  if (version > latest) {
    return Status::NotSupported("report '" + db.path() + "' has schema version " +
                                std::to_string(version) + ", newer than this rackchaos knows (" +
                                std::to_string(latest) + "); use a newer rackchaos to open it");
  }
  return static_cast<int>(version);
}

Status Migrate(Db& db, std::span<const Migration> steps) {
  for (const Migration& step : steps) {
    std::string what = "migrating to schema version " + std::to_string(step.version);
    RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, what));
    // Re-read under the write lock: another process may have migrated since we last looked.
    RC_ASSIGN_OR_RETURN(int64_t current, db.QueryInt("PRAGMA user_version", what));
    if (current >= step.version) continue;
    if (current != step.version - 1) {
      return Status::Internal(what + ": report '" + db.path() + "' is at version " +
                              std::to_string(current) + ", expected " +
                              std::to_string(step.version - 1));
    }
    RC_RETURN_IF_ERROR(step.apply(db));
    RC_ASSIGN_OR_RETURN(Stmt history, db.Prepare("INSERT INTO schema_history VALUES (?, ?)", what));
    history.Bind(1, static_cast<int64_t>(step.version));
    history.Bind(2, std::string_view(step.description));
    RC_RETURN_IF_ERROR(history.Run(what));
    RC_RETURN_IF_ERROR(db.Exec("PRAGMA user_version = " + std::to_string(step.version), what));
    RC_RETURN_IF_ERROR(txn.Commit(what));
  }
  return Status::Ok();
}

}  // namespace rackchaos::reports
