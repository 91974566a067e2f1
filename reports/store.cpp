#include "reports/store.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "reports/schema.h"
#include "reports/store_state.h"
#include "reports/topology_store.h"

namespace rackchaos::reports {
namespace {

// WAL lets renderers read while the runner writes, and with synchronous=NORMAL a committed batch
// survives a process crash (only an OS crash can lose the last commits, never corrupt the file).
Status ConfigureForWriting(Db& db, const OpenOptions& options) {
  // Also what ends a brand-new file's first phase (below): the switch's commit, still in rollback mode
  // with synchronous=NORMAL, syncs the file, so what that phase wrote without syncing is on disk.
  RC_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = NORMAL", "setting synchronous=NORMAL"));
  RC_ASSIGN_OR_RETURN(Stmt wal, db.Prepare("PRAGMA journal_mode = WAL", "switching to WAL"));
  RC_ASSIGN_OR_RETURN(bool row, wal.Step("switching to WAL"));
  std::string mode = row ? wal.Text(0) : "";
  if (mode != "wal" && mode != "memory") {
    return Status::IoError("switching report '" + db.path() + "' to WAL: journal mode stayed '" +
                           mode + "'");
  }
  // Checkpoint every 64 MiB of WAL rather than every 4 MiB (the default option): pages written by
  // several event batches (b-tree interior pages, the last leaf of each table) are then copied to the
  // database once.
  RC_RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint = " + std::to_string(options.wal_autocheckpoint_pages),
                             "setting the WAL checkpoint interval"));
  if (options.journal_size_limit < 0) return Status::Ok();
  return db.Exec("PRAGMA journal_size_limit = " + std::to_string(options.journal_size_limit),
                 "setting the WAL size limit");
}

// The first 1,778-rack run of a database writes 500,000 component rows into three b-trees: with
// SQLite's default 2 MiB page cache their pages are read back from the file again and again. Pages
// are allocated as used.
Status SetCacheSize(Db& db, int kib) {
  return db.Exec("PRAGMA cache_size = -" + std::to_string(kib), "setting the page cache");
}

bool IsFinalStatus(const std::string& s) {
  return s == "passed" || s == "failed" || s == "error" || s == "interrupted" || s == "aborted";
}

}  // namespace

std::string PlanHash(std::string_view plan_text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : plan_text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Result<Stmt*> ReportStore::State::Cached(const char* sql, std::string_view what) {
  auto it = cache.find(sql);
  if (it != cache.end()) return &it->second;
  RC_ASSIGN_OR_RETURN(Stmt stmt, db.Prepare(sql, what));
  return &cache.emplace(sql, std::move(stmt)).first->second;
}

Status ReportStore::State::RequireRun(int64_t run, std::string_view what) {
  RC_ASSIGN_OR_RETURN(Stmt* stmt, Cached("SELECT 1 FROM runs WHERE id = ?", what));
  stmt->Bind(1, run);
  Result<bool> row = stmt->Step(what);
  stmt->Reset();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound(std::string(what) + ": no run " + std::to_string(run) +
                                     " in report '" + db.path() + "'");
  return Status::Ok();
}

namespace {

// Sets a read-write connection up: checks the version, creates or migrates the schema, switches to WAL.
// Returns whether the file was brand-new. Open runs it again while the file is busy (RetryWhileBusy), so
// openers of one new file wait for whichever creates its schema and switches it to WAL; that is safe
// because each step either committed or left nothing behind.
Result<bool> SetUpForWriting(Db& db, const OpenOptions& options) {
  const int cache_kib = options.cache_kib;
  // Check the version before touching anything, so a newer or foreign file is left exactly as it was.
  RC_ASSIGN_OR_RETURN(int version, CheckSchemaVersion(db, SchemaMigrations()));
  RC_RETURN_IF_ERROR(SetCacheSize(db, cache_kib));
  // A brand-new file takes its schema in rollback-journal mode without syncs, then switches to WAL (the
  // switch syncs it): the schema is written once, not into the WAL and again by the checkpoint that
  // AddComponentRefs's switch makes, which doubled the space a new file needs before its first rows. A
  // process killed meanwhile leaves a journal that rolls the file back to empty.
  const bool fresh = version == 0;
  if (fresh) RC_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = OFF", "setting synchronous=OFF"));
  else RC_RETURN_IF_ERROR(ConfigureForWriting(db, options));
  // Migrate re-reads the version under the write lock: a step another opener made meanwhile is skipped.
  if (version < LatestSchemaVersion()) RC_RETURN_IF_ERROR(Migrate(db, SchemaMigrations()));
  if (fresh) RC_RETURN_IF_ERROR(ConfigureForWriting(db, options));
  return fresh;
}

}  // namespace

Result<ReportStore> ReportStore::Open(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(Db db, Db::Open(path, kOpenReadWrite | kOpenCreate | kOpenUri));
  db.SetBusyTimeout(options.busy_timeout_ms);
  RC_ASSIGN_OR_RETURN(bool fresh, RetryWhileBusy(options.busy_timeout_ms, [&db, &options] {
                                       return SetUpForWriting(db, options);
                                     }));
  auto state = std::make_unique<State>();
  state->db = std::move(db);
  state->fresh = fresh;  // see AddComponentRefs
  state->busy_timeout_ms = options.busy_timeout_ms;
  state->wal_autocheckpoint_pages = options.wal_autocheckpoint_pages;
  state->journal_size_limit = options.journal_size_limit;
  return ReportStore(std::move(state));
}

namespace {

// `path` as an SQLite URI that opens it immutable: no locks, no -shm.
std::string ImmutableUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Result<ReportStore> ReportStore::OpenReadOnly(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(Db db, Db::Open(path, kOpenReadOnly | kOpenUri));
  db.SetBusyTimeout(options.busy_timeout_ms);
  auto checked = CheckSchemaVersion(db, SchemaMigrations());
  // A WAL database whose -shm is gone (its last writer closed) in a directory this process cannot write
  // (an archive, another user's report) cannot even be read: SQLite must create the -shm first. With no
  // -shm there is no writer, so reading it as an immutable file is safe.
  std::error_code ec;
  const bool plain_path = path.rfind("file:", 0) != 0;
  // A rollback journal left by a writer killed in a brand-new file's first phase (Open) must be rolled
  // back before the file is read, and only a read-write connection can: reading it as immutable would
  // ignore the journal and could see half a transaction.
  if (!checked.ok() && checked.status().code() == StatusCode::kIoError && plain_path &&
      std::filesystem::exists(path + "-journal", ec)) {
    return Status::Invalid("report '" + path + "' has the rollback journal of a writer that was killed ('" + path +
                           "-journal'); open it read-write once to roll it back (every rackchaos command that reads "
                           "reports does, where it may write)");
  }
  if (!checked.ok() && checked.status().code() == StatusCode::kIoError && plain_path &&
      !std::filesystem::exists(path + "-shm", ec)) {
    RC_ASSIGN_OR_RETURN(db, Db::Open(ImmutableUri(path), kOpenReadOnly | kOpenUri));
    checked = CheckSchemaVersion(db, SchemaMigrations());
  }
  RC_ASSIGN_OR_RETURN(int version, std::move(checked));
  if (version == 0) {
    return Status::Invalid("'" + path + "' is not a rackchaos report (it has no schema)");
  }
  if (version < LatestSchemaVersion()) {
    return Status::Invalid("report '" + path + "' has schema version " + std::to_string(version) +
                           ", older than " + std::to_string(LatestSchemaVersion()) +
                           "; open it read-write once to migrate it");
  }
  auto state = std::make_unique<State>();
  state->db = std::move(db);
  state->read_only = true;
  return ReportStore(std::move(state));
}

Result<ReportStore> ReportStore::OpenForReading(const std::string& path, const OpenOptions& options) {
  auto store = OpenReadOnly(path, options);
  if (store.ok() || store.status().code() != StatusCode::kInvalidArgument) return store;
  auto repaired = Open(path, options);
  if (repaired.ok()) return repaired;
  return store.status();
}

ReportStore::ReportStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
ReportStore::ReportStore(ReportStore&&) noexcept = default;
ReportStore& ReportStore::operator=(ReportStore&&) noexcept = default;
// Statements must be finalized before the connection closes: State declares db first, so the cache
// (declared after it) is destroyed first.
ReportStore::~ReportStore() = default;

const std::string& ReportStore::path() const { return state_->db.path(); }

Result<int64_t> ReportStore::BeginRun(const RunInfo& info) {
  const std::string what = "recording the start of plan '" + info.plan_name + "'";
  RC_ASSIGN_OR_RETURN(Stmt* stmt, state_->Cached(
      "INSERT INTO runs(plan_name, plan_path, plan_text, plan_hash, seed, version, host, backend, "
      "command_line, started_wall, ledger, ledger_run, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "'running') RETURNING id", what));
  stmt->Bind(1, info.plan_name);
  stmt->Bind(2, info.plan_path);
  stmt->Bind(3, info.plan_text);
  stmt->Bind(4, info.plan_hash.empty() ? PlanHash(info.plan_text) : info.plan_hash);
  stmt->Bind(5, std::to_string(info.seed));
  stmt->Bind(6, info.version);
  stmt->Bind(7, info.host);
  stmt->Bind(8, info.backend);
  stmt->Bind(9, info.command_line);
  stmt->Bind(10, info.started_wall);
  stmt->Bind(11, info.ledger);
  stmt->Bind(12, info.ledger_run);
  // A lone statement is its own transaction; stepping it to DONE is what commits the row.
  RC_ASSIGN_OR_RETURN(bool row, stmt->Step(what));
  int64_t id = row ? stmt->Int(0) : 0;
  Result<bool> done = stmt->Step(what);
  stmt->Reset();
  if (!done.ok()) return done.status();
  if (!row) return Status::Internal(what + ": no run id returned");
  state_->changes_at_begin = state_->db.TotalChanges();
  return id;
}

Status ReportStore::AddComponents(int64_t run, const std::vector<ComponentRow>& components) {
  const std::vector<ComponentRef> refs = RefsTo(components);
  return AddComponentRefs(run, refs, std::nullopt);
}

Status ReportStore::AddComponents(int64_t run, std::span<const ComponentRef> components, std::string_view serial_prefix) {
  return AddComponentRefs(run, components, serial_prefix);
}

namespace {

// Whether any run of the file has stored components yet (true when the query fails: stay in WAL mode).
bool HasTopology(Db& db) {
  Result<int64_t> any = db.QueryInt("SELECT EXISTS (SELECT 1 FROM topologies)", "looking for a stored topology");
  return !any.ok() || *any != 0;
}

}  // namespace

Result<bool> ReportStore::LinkComponents(int64_t run, const std::function<std::string()>& digest) {
  const std::string what = ForRun("adding components to", run);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* had, state_->Cached("SELECT 1 FROM run_topologies WHERE run_id = ?", what));
  had->Bind(1, run);
  RC_ASSIGN_OR_RETURN(bool has_topology, had->Step(what));
  had->Reset();
  if (has_topology) return false;  // AddComponents merges the rows with the run's own
  if (!HasTopology(state_->db)) return false;
  RC_ASSIGN_OR_RETURN(Stmt* find, state_->Cached("SELECT id FROM topologies WHERE digest = ?", what));
  find->Bind(1, digest());
  RC_ASSIGN_OR_RETURN(bool found, find->Step(what));
  const int64_t topology = found ? find->Int(0) : 0;
  find->Reset();
  if (!found) return false;
  RC_ASSIGN_OR_RETURN(Stmt* link, state_->Cached("INSERT INTO run_topologies(run_id, topology_id) VALUES (?, ?)", what));
  link->Bind(1, run);
  link->Bind(2, topology);
  RC_RETURN_IF_ERROR(link->Run(what));
  RC_RETURN_IF_ERROR(txn.Commit(what));
  state_->fresh = false;  // the file has a topology: never around the WAL again
  return true;
}

namespace {

// The start of a brand-new file's first topology: rollback journal without syncs, so that a
// 1,778-rack cluster's 50 MB of rows are written once, not into the WAL and again by its checkpoint.
// Pages beyond a file's old end need no journal, and a process killed in the transaction leaves its
// journal, which the next read-write open rolls back (an OS crash may lose the new file: nothing else).
// Returns false, changing nothing, when the file must stay in WAL mode: another connection has it open.
bool EnterRollbackJournal(Db& db) {
  // Syncs off first: the checkpoint that ends WAL mode then needs none either.
  if (!db.Exec("PRAGMA synchronous = OFF", "setting synchronous=OFF").ok()) return false;
  {
    auto mode = db.Prepare("PRAGMA journal_mode = DELETE", "leaving WAL mode");
    Result<bool> row = mode.ok() ? mode->Step("leaving WAL mode") : Result<bool>(mode.status());
    if (row.ok() && *row && mode->Text(0) == "delete") return true;
  }
  (void)db.Exec("PRAGMA synchronous = NORMAL", "setting synchronous=NORMAL");  // as ConfigureForWriting left it
  return false;
}

}  // namespace

Status ReportStore::AddComponentRefs(int64_t run, std::span<const ComponentRef> rows,
                                     std::optional<std::string_view> serial_prefix) {
  // A brand-new file's first topology goes around the WAL, and the file is back in WAL mode (synced:
  // the rows are on disk) before this returns, whether the rows were stored or not.
  // Only while the file has no topology yet: another opener of the same new file may have stored its
  // own first (with the file closed by everyone else since), and rows already on disk must never be
  // overwritten without a synced journal.
  const bool around_wal =
      state_->fresh && !rows.empty() && !HasTopology(state_->db) && EnterRollbackJournal(state_->db);
  Status stored = StoreComponents(run, rows, serial_prefix);
  if (around_wal) {
    state_->cache.clear();  // no statement may be open across the switch
    OpenOptions wal;
    wal.wal_autocheckpoint_pages = state_->wal_autocheckpoint_pages;
    wal.journal_size_limit = state_->journal_size_limit;
    Status back = RetryWhileBusy(state_->busy_timeout_ms, [this, &wal] { return ConfigureForWriting(state_->db, wal); });
    if (stored.ok()) stored = back;
  }
  if (stored.ok() && !rows.empty()) state_->fresh = false;
  return stored;
}

Status ReportStore::StoreComponents(int64_t run, std::span<const ComponentRef> rows,
                                    std::optional<std::string_view> serial_prefix) {
  const std::string what = ForRun("adding components to", run);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  if (rows.empty()) return txn.Commit(what);
  RC_ASSIGN_OR_RETURN(Stmt* had, state_->Cached("SELECT topology_id FROM run_topologies WHERE run_id = ?", what));
  had->Bind(1, run);
  RC_ASSIGN_OR_RETURN(bool has_topology, had->Step(what));
  std::optional<int64_t> old_topology;
  if (has_topology) old_topology = had->Int(0);
  had->Reset();
  // Rows added to a run that has some: the run gets the topology of all of them, serials spelled out.
  std::vector<ComponentRow> all;
  std::vector<ComponentRef> all_refs;
  if (old_topology) {
    RC_ASSIGN_OR_RETURN(all, ReadComponents(run));
    for (const ComponentRef& c : rows) {
      const bool built = serial_prefix && c.serial.empty();
      all.push_back({c.id, std::string(c.name), std::string(c.kind), c.parent,
                     built ? std::string(*serial_prefix) + std::string(c.name) : std::string(c.serial)});
    }
    all_refs = RefsTo(all);
  }
  const ComponentList stored = old_topology ? ComponentList{all_refs, std::nullopt} : ComponentList{rows, serial_prefix};
  RC_ASSIGN_OR_RETURN(int64_t topology, StoreTopology(state_->db, stored, what));
  RC_ASSIGN_OR_RETURN(Stmt* link, state_->Cached(
      "INSERT OR REPLACE INTO run_topologies(run_id, topology_id) VALUES (?, ?)", what));
  link->Bind(1, run);
  link->Bind(2, topology);
  RC_RETURN_IF_ERROR(link->Run(what));
  if (old_topology && *old_topology != topology) {  // drop the old one unless another run has it
    for (const char* sql : {"DELETE FROM topology_components WHERE topology_id = ?1 AND NOT EXISTS "
                            "(SELECT 1 FROM run_topologies WHERE topology_id = ?1)",
                            "DELETE FROM topologies WHERE id = ?1 AND NOT EXISTS "
                            "(SELECT 1 FROM run_topologies WHERE topology_id = ?1)"}) {
      RC_ASSIGN_OR_RETURN(Stmt drop, state_->db.Prepare(sql, what));
      drop.Bind(1, *old_topology);
      RC_RETURN_IF_ERROR(drop.Run(what));
    }
  }
  return txn.Commit(what);
}

Status ReportStore::AddJobs(int64_t run, const std::vector<JobRow>& jobs) {
  const std::string what = ForRun("adding jobs to", run);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* stmt, state_->Cached(
      "INSERT INTO jobs(run_id, id, name, gpus, nominal_step_s) VALUES (?, ?, ?, ?, ?)", what));
  for (const JobRow& j : jobs) {
    stmt->Bind(1, run);
    BindId(*stmt, 2, j.id, kNoJob);
    stmt->Bind(3, j.name);
    stmt->Bind(4, static_cast<int64_t>(j.gpus));
    stmt->Bind(5, j.nominal_step_s);
    RC_RETURN_IF_ERROR(stmt->Run(what + " (" + j.name + ")"));
  }
  return txn.Commit(what);
}

// Rows a run changes from which its FinishRun checkpoints: a 90-rack cluster's components, a few
// racks' month of events.
constexpr int64_t kCheckpointAfterRows = 50000;

Status ReportStore::FinishRun(int64_t run, const std::string& status, int exit_code,
                              const std::string& ended_wall, const std::string& failed_reason) {
  const std::string what = ForRun("recording the end of", run);
  if (!IsFinalStatus(status)) {
    return Status::Invalid(what + ": status '" + status +
                           "' is not one of passed, failed, error, interrupted, aborted");
  }
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* stmt, state_->Cached(
      "UPDATE runs SET status = ?, exit_code = ?, ended_wall = ?, failed_reason = ? WHERE id = ?",
      what));
  stmt->Bind(1, status);
  stmt->Bind(2, static_cast<int64_t>(exit_code));
  stmt->Bind(3, ended_wall);
  stmt->Bind(4, failed_reason);
  stmt->Bind(5, run);
  RC_RETURN_IF_ERROR(stmt->Run(what));
  // A run that stored many rows (a simulated fleet's month: its events, and a new cluster's components)
  // copies them into the file as it ends, not whichever later commit crosses the WAL's checkpoint line:
  // in a sweep at 1,778 racks, that was seed 2 paying for seed 1's 65 MB, then another seed every ~6
  // for theirs. PASSIVE: it never waits for, nor blocks, another connection; what it cannot copy now
  // the next checkpoint copies. Small runs (tests, real runs with their small WAL) leave it to SQLite.
  if (state_->db.TotalChanges() - state_->changes_at_begin >= kCheckpointAfterRows) (void)state_->db.CheckpointPassive();
  return Status::Ok();
}

}  // namespace rackchaos::reports
