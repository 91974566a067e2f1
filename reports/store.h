// The report store: one SQLite database holding runs, their components and jobs, every event, and the
// recovery metrics. Writers are used by the runner; renderers (summary, JSON, HTML, compare, history)
// read only through the Read* functions here and get plain structs back.
//
// Schema (see reports/schema.cpp for columns and views): runs, components, jobs; each event stored
// once, in the typed table of its kind: faults, fault_reverts, detections, isolations, actions,
// job_events, checkpoints, physics; metrics in fault_metrics, job_impacts, job_metrics, run_metrics,
// run_metric_items; expectation results in gates. Views: events (every event in one shape, with a
// detail text computed when read), event_log, fault_timeline, fault_summary, job_summary,
// run_summary.
//
// Durability: WAL with synchronous=NORMAL; a run row exists from BeginRun on with status 'running', so a
// run whose process died shows up as such. Determinism: writing the same run into two fresh files gives
// identical rows apart from runs.host, runs.started_wall and runs.ended_wall.
//
// Errors: every failure is a Status naming the operation and the file. kUnavailable when another
// connection holds the write lock past the busy timeout; kCorrupt when the file is not a database;
// kNotSupported when its schema is newer than this build; kNotFound for an absent run or file.
//
// Threading: one store is one connection; use it from one thread at a time. Movable, not copyable;
// a moved-from store may only be destroyed or assigned to.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/metrics.h"
#include "core/status.h"
#include "reports/sqlite_db.h"

namespace rackchaos::reports {

struct RunInfo {
  std::string plan_name;
  std::string plan_path;
  std::string plan_text;
  std::string plan_hash;  // PlanHash(plan_text); BeginRun fills it when empty
  uint64_t seed = 0;
  std::string version;
  std::string host;
  std::string backend;       // "sim" | "ssh"
  std::string started_wall;  // ISO-8601 UTC
  std::string command_line;
  // A real run's fault ledger (LedgerIdentity of its path, runner/site/ledger.h) and its run there
  // (ledger_runs.id): `rackchaos recover` finds the row of a run killed before the ledger learned the
  // row's id by them. Empty and 0 for a run without a ledger.
  std::string ledger;
  int64_t ledger_run = 0;
};

// A run as stored: what BeginRun received plus how it ended.
struct RunRow {
  int64_t id = 0;
  RunInfo info;
  // Stored before rows named their ledger run (schema version 16): `ledger` and `ledger_run` read as
  // empty and 0 although the run may have had one.
  bool ledger_unrecorded = false;
  std::string status;              // running|passed|failed|error|interrupted|aborted
  std::optional<int> exit_code;    // absent while running
  std::string ended_wall;          // "" while running
  std::string failed_reason;
};

struct ComponentRow {
  ComponentId id = kNoComponent;
  std::string name;    // "r01.tray07.gpu2"
  std::string kind;    // "gpu", "compute_tray", ...
  ComponentId parent = kNoComponent;
  std::string serial;
};

// A component row that refers to text it does not own (the topology's names, KindName's literals): what
// the simulator hands AddComponents, without copying 500,000 names and building as many serials. With a
// serial prefix (AddComponents below), an empty serial stands for that prefix followed by the name.
struct ComponentRef {
  ComponentId id = kNoComponent;
  std::string_view name;
  std::string_view kind;
  ComponentId parent = kNoComponent;
  std::string_view serial;
};

// The digest AddComponents gives the rows `row(0)` .. `row(size - 1)` (an empty serial with
// `derived_prefix` is that prefix and the name, as AddComponents takes them): what LinkComponents looks
// up. Rows built one at a time, so a caller need not hold 500,000 of them to ask.
std::string ComponentsDigest(size_t size, const std::function<ComponentRef(size_t)>& row,
                             std::optional<std::string_view> derived_prefix);

struct JobRow {
  JobId id = kNoJob;
  std::string name;
  int gpus = 0;
  double nominal_step_s = 0;
};

// One row of the events table: the flat form every event type shares.
struct EventRow {
  int64_t seq = 0;  // 1-based order within the run
  Time at{};
  std::string type;  // EventTypeName()
  ComponentId component = kNoComponent;
  JobId job = kNoJob;
  FaultId fault = kNoFault;
  std::string detail;
};

// One expectation (gate) and how it came out, as the runner evaluated it. A plain copy of
// runner::GateResult, so that reports/ does not depend on runner/.
struct GateRow {
  std::string text;    // as written in the plan: "ttr.max < 30m"
  std::string metric;  // "ttr.max"
  std::string op;      // < <= > >= == !=
  double value = 0;    // the threshold (seconds for time metrics)
  double actual = 0;   // +infinity when the metric had no value (stored as NULL)
  bool passed = false;
  std::string message;  // "ttr.max < 30m: 12.4m (pass)"
};

// Typed event rows for timelines (faults, detections, isolations, job throughput).
struct FaultRow {
  FaultId fault = kNoFault;
  std::string kind;
  ComponentId target = kNoComponent;
  int port = -1;
  std::string selector;
  std::string detail;
  Time injected{};
  std::optional<Time> reverted;
};

struct DetectionRow {
  Time at{};
  DetectionId detection = kNoDetection;
  std::string detector;
  ComponentId component = kNoComponent;
  std::string symptom;
};

struct IsolationRow {
  Time at{};
  ComponentId component = kNoComponent;
  std::string domain;
  std::string reason;
};

struct JobEventRow {
  Time at{};
  JobId job = kNoJob;
  std::string state;  // JobStateName()
  double steps = 0;
  double speed = 0;
  int gpus = 0;
  FaultId cause = kNoFault;
};

// One row of the actions table: what the healer or the scheduler did ("drain", "spare_rack", ...).
struct ActionRow {
  Time at{};
  std::string action;
  ComponentId component = kNoComponent;
  JobId job = kNoJob;
  bool ok = true;
  std::string detail;
};

struct OpenOptions {
  int busy_timeout_ms = 5000;  // how long to wait for another connection's lock before kUnavailable
  // The page cache of a connection opened for writing, in KiB: large for a run's million-event batches;
  // a connection that only looks rows up and tags them for a long time (a sweep's) asks for less.
  int cache_kib = 65536;
  // The WAL of a connection opened for writing: checkpointed every this many pages (SQLite's
  // wal_autocheckpoint; the default suits the simulator's batches), and, when positive, truncated back
  // to at most this many bytes after a checkpoint (journal_size_limit). A real run, which stores its
  // events one by one for hours, asks for a small WAL that stays small (runner/engine/engine.cpp).
  int wal_autocheckpoint_pages = 16384;
  int64_t journal_size_limit = -1;
};

// 16 hex digits of the 64-bit FNV-1a hash of `plan_text`: deterministic across hosts and builds.
std::string PlanHash(std::string_view plan_text);

class ReportStore {
 public:
  // Opens or creates the database at `path` and migrates it to the current schema. The file is in WAL
  // mode whenever no call of this store is running (a brand-new file's first components are written
  // around the WAL, inside AddComponents: reports/store.cpp). Any number of processes and threads may
  // open the same new or existing file at once: creating the schema, migrating it and switching the
  // file to WAL wait for one another (up to options.busy_timeout_ms each) instead of failing.
  static Result<ReportStore> Open(const std::string& path, const OpenOptions& options = {});
  // Opens an existing database without writing to it. Fails with kNotFound if absent, and with
  // kInvalidArgument if its schema is older than this build or a killed writer left its rollback
  // journal (open it read-write once to migrate it or roll the journal back).
  // Write calls on a read-only store fail with kIoError.
  static Result<ReportStore> OpenReadOnly(const std::string& path, const OpenOptions& options = {});
  // What every reader opens a report with: read-only, except once where OpenReadOnly refuses with
  // kInvalidArgument and a read-write open can fix it: a file from an older rackchaos is migrated in
  // place (the schema only grows), and the rollback journal of a writer killed while it created the
  // file is rolled back. Fails as OpenReadOnly did when the read-write open fails too (a directory
  // this process cannot write, say).
  static Result<ReportStore> OpenForReading(const std::string& path, const OpenOptions& options = {});

  ReportStore(ReportStore&&) noexcept;
  ReportStore& operator=(ReportStore&&) noexcept;
  ~ReportStore();

  const std::string& path() const;

  // --- Writers (each call is one transaction; on error nothing of that call is kept) ---

  // Inserts the run with status 'running' and returns its id (ids increase within a file).
  Result<int64_t> BeginRun(const RunInfo& info);
  // Adds components to the run (to those it has). Runs with the same component list share one stored
  // copy (reports/topology_store.h): the first run of a cluster in a file pays for its rows, later
  // runs for a digest of them. A repeated id fails with kInternal naming the row. A file's first
  // topology drops and rebuilds indexes: it fails with kUnavailable, storing nothing, while a statement
  // of this connection is still stepping.
  Status AddComponents(int64_t run, const std::vector<ComponentRow>& components);
  // The same rows by reference: a row with an empty serial has `serial_prefix` followed by its name
  // (stored and digested exactly as that text would be). The text must outlive the call.
  Status AddComponents(int64_t run, std::span<const ComponentRef> components, std::string_view serial_prefix);
  // Gives a run without components the file's stored topology with the digest `digest()` (ComponentsDigest
  // of its rows) and returns true; false, storing nothing, when the file has none (or the run has
  // components): then AddComponents stores the rows. What a later seed of a cluster pays instead of its
  // rows. `digest` is called only when the file has some topology (a new file's first run skips it).
  Result<bool> LinkComponents(int64_t run, const std::function<std::string()>& digest);
  Status AddJobs(int64_t run, const std::vector<JobRow>& jobs);
  // Appends events after those already stored for the run (seq continues), each as one row of the
  // typed table of its type. FaultReverted also sets reverted_us on the open fault row.
  Status AppendEvents(int64_t run, std::span<const Event> events);
  // Stores (or replaces) the run's metrics.
  Status AddMetrics(int64_t run, const RunMetrics& metrics);
  // Stores (or replaces) the run's expectation results, in the given order.
  Status AddGates(int64_t run, const std::vector<GateRow>& gates);
  // `status` is passed|failed|error|interrupted|aborted; anything else is kInvalidArgument.
  Status FinishRun(int64_t run, const std::string& status, int exit_code,
                   const std::string& ended_wall, const std::string& failed_reason);

  // --- Readers ---

  // The highest run id, kNotFound when the store has no runs.
  Result<int64_t> LatestRun() const;
  // Every run, oldest first.
  Result<std::vector<RunRow>> ListRuns() const;
  Result<RunRow> ReadRun(int64_t run) const;
  // The metrics as AddMetrics stored them (empty metrics with precision and recall 1 if never added).
  Result<RunMetrics> ReadMetrics(int64_t run) const;
  Result<std::vector<ComponentRow>> ReadComponents(int64_t run) const;
  Result<std::vector<JobRow>> ReadJobs(int64_t run) const;
  // Events in seq order; `limit` < 0 means all.
  Result<std::vector<EventRow>> ReadEvents(int64_t run, int64_t limit = -1) const;
  // How many events the run has.
  Result<int64_t> CountEvents(int64_t run) const;
  // The gates AddGates stored, in order (empty when none were stored).
  Result<std::vector<GateRow>> ReadGates(int64_t run) const;
  // Typed event rows in time (then seq) order.
  Result<std::vector<FaultRow>> ReadFaults(int64_t run) const;
  Result<std::vector<DetectionRow>> ReadDetections(int64_t run) const;
  Result<std::vector<IsolationRow>> ReadIsolations(int64_t run) const;
  Result<std::vector<JobEventRow>> ReadJobEvents(int64_t run) const;
  // The run's events as AppendEvents received them, in seq order, each rebuilt from the row of its typed
  // table (a job's trays from its placements): what scoring a stored run again reads
  // (healer::ComputeMetrics). Rows stored before schema version 11 carry no checkpoint store share
  // (JobChanged::store_lost_work 0, store_cause kNoFault).
  Result<std::vector<Event>> ReadRunEvents(int64_t run) const;
  // Actions in time (then seq) order; a non-empty `action` keeps only those ("spare_rack").
  Result<std::vector<ActionRow>> ReadActions(int64_t run, std::string_view action = "") const;

  struct State;  // the connection and its cached statements (reports/store_state.h)

 private:
  // The connection is reports/' own: its cross-run readers, tools and the sweep and qualification
  // stores reach it through StoreAccess (reports/store_state.h); nothing outside reports/ runs SQL.
  friend class StoreAccess;
  explicit ReportStore(std::unique_ptr<State> state);
  Status AddComponentRefs(int64_t run, std::span<const ComponentRef> rows, std::optional<std::string_view> serial_prefix);
  Status StoreComponents(int64_t run, std::span<const ComponentRef> rows,
                         std::optional<std::string_view> serial_prefix);
  std::unique_ptr<State> state_;
};

}  // namespace rackchaos::reports
