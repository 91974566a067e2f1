#include "reports/merge.h"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "reports/schema.h"
#include "reports/store_state.h"
#include "reports/topology_store.h"

namespace rackchaos::reports {
namespace {

Result<std::vector<std::string>> Column0(Db& db, const std::string& sql, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt stmt, db.Prepare(sql, what));
  std::vector<std::string> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) return out;
    out.push_back(stmt.Text(0));
  }
}

// The per-run tables both files have, with the columns both have (run_id first).
struct TableCopy {
  std::string table;
  std::vector<std::string> columns;  // without run_id
};

Result<std::vector<TableCopy>> PerRunTables(Db& db, const std::string& what) {
  RC_ASSIGN_OR_RETURN(std::vector<std::string> tables, Column0(db,
      "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT IN ('runs', "
      "'schema_history', 'qualifications', 'qualification_plans', 'topologies', 'topology_components', "
      "'run_topologies') AND name IN (SELECT name FROM src.sqlite_schema WHERE type = 'table') "
      "ORDER BY name", what));
  std::vector<TableCopy> out;
  for (const std::string& t : tables) {
    RC_ASSIGN_OR_RETURN(std::vector<std::string> cols, Column0(db,
        "SELECT m.name FROM pragma_table_info('" + t + "', 'main') m WHERE m.name != 'run_id' AND "
        "m.name IN (SELECT name FROM pragma_table_info('" + t + "', 'src')) ORDER BY m.cid", what));
    out.push_back({t, cols});
  }
  return out;
}

// Gives the new run the source run's topology through the store's own path (StoreTopology: shared with
// a destination topology of the same rows, else inserted). Returns the run's component rows (counted
// whether copied or shared).
Result<int64_t> CopyTopology(Db& db, int64_t old_id, int64_t new_id, const std::string& what) {
  std::vector<ComponentRow> rows;
  const char* sql =
      "SELECT c.id, c.name, c.kind, c.parent_id, coalesce(c.serial, t.serial_prefix || c.name) "
      "FROM src.run_topologies r JOIN src.topologies t ON t.id = r.topology_id "
      "JOIN src.topology_components c ON c.topology_id = r.topology_id WHERE r.run_id = ? ORDER BY c.id";
  RC_RETURN_IF_ERROR(ForEachRow(db, sql, old_id, what, [&](const Stmt& s) { rows.push_back(ComponentFrom(s)); }));
  if (rows.empty()) return int64_t{0};
  RC_ASSIGN_OR_RETURN(int64_t topology, StoreTopology(db, rows, what + " (topology)"));
  RC_ASSIGN_OR_RETURN(Stmt link, db.Prepare("INSERT INTO main.run_topologies(run_id, topology_id) VALUES (?, ?)", what));
  link.Bind(1, new_id);
  link.Bind(2, topology);
  RC_RETURN_IF_ERROR(link.Run(what + " (run_topologies)"));
  return static_cast<int64_t>(rows.size());
}

// Copies one source run under a new id; returns the rows copied, or 0 when its key is present.
Result<int64_t> CopyRun(Db& db, int64_t old_id, const std::vector<TableCopy>& tables,
                        const std::vector<std::string>& run_cols, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt dup, db.Prepare(
      "SELECT count(*) FROM main.runs m JOIN src.runs s ON s.id = ? AND m.plan_hash = s.plan_hash "
      "AND m.seed = s.seed AND m.started_wall = s.started_wall", what));
  dup.Bind(1, old_id);
  RC_ASSIGN_OR_RETURN(bool row, dup.Step(what));
  const bool present = row && dup.Int(0) > 0;
  dup.Reset();  // done stepping: a first topology's DROP INDEX (StoreTopology) fails while a statement steps
  if (present) return int64_t{0};
  RC_ASSIGN_OR_RETURN(Stmt run, db.Prepare("INSERT INTO main.runs(" + Join(run_cols) +
      ") SELECT " + Join(run_cols) + " FROM src.runs WHERE id = ?", what));
  run.Bind(1, old_id);
  RC_RETURN_IF_ERROR(run.Run(what));
  int64_t new_id = db.LastInsertRowid();
  int64_t rows = 1;
  for (const TableCopy& t : tables) {
    const std::string columns = t.columns.empty() ? "" : ", " + Join(t.columns);
    RC_ASSIGN_OR_RETURN(Stmt copy, db.Prepare("INSERT INTO main." + t.table + "(run_id" + columns +
        ") SELECT ?1" + columns + " FROM src." + t.table + " WHERE run_id = ?2", what));
    copy.Bind(1, new_id);
    copy.Bind(2, old_id);
    RC_RETURN_IF_ERROR(copy.Run(what + " (" + t.table + ")"));
    rows += db.Changes();
  }
  RC_ASSIGN_OR_RETURN(int64_t components, CopyTopology(db, old_id, new_id, what));
  return rows + components;
}

Result<MergeCounts> CopyAll(Db& db, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, what));
  RC_ASSIGN_OR_RETURN(std::vector<TableCopy> tables, PerRunTables(db, what));
  RC_ASSIGN_OR_RETURN(std::vector<std::string> run_cols, Column0(db,
      "SELECT name FROM pragma_table_info('runs', 'main') WHERE name != 'id' ORDER BY cid", what));
  // A 'running' row is a run in progress or a dead one: a copy would freeze it as running, and its key would
  // then keep the finished run out of a later merge. It is left out and counted.
  RC_ASSIGN_OR_RETURN(std::vector<std::string> ids, Column0(db,
      "SELECT id FROM src.runs WHERE status != 'running' ORDER BY id", what));
  RC_ASSIGN_OR_RETURN(std::vector<std::string> running, Column0(db,
      "SELECT count(*) FROM src.runs WHERE status = 'running'", what));
  MergeCounts counts;
  counts.runs_running = running.empty() ? 0 : std::stoi(running.front());
  for (const std::string& id : ids) {
    RC_ASSIGN_OR_RETURN(int64_t rows, CopyRun(db, std::stoll(id), tables, run_cols, what));
    (rows > 0 ? counts.runs_copied : counts.runs_skipped) += 1;
    counts.rows_copied += rows;
  }
  RC_RETURN_IF_ERROR(txn.Commit(what));
  return counts;
}

// Refuses what must not be attached: an absent file, the destination itself, a foreign or newer one.
// Returns the source's schema version.
Result<int> CheckSource(const std::string& dest_path, const std::string& source_path) {
  std::error_code ec;
  if (std::filesystem::equivalent(dest_path, source_path, ec)) {
    return Status::Invalid("cannot merge report '" + source_path + "' into itself");
  }
  RC_ASSIGN_OR_RETURN(Db src, Db::Open(source_path, kOpenReadOnly));
  RC_ASSIGN_OR_RETURN(int version, CheckSchemaVersion(src, SchemaMigrations()));
  if (version == 0) return Status::Invalid("'" + source_path + "' is not a rackchaos report (it has no schema)");
  return version;
}

// A fresh directory under the system temp dir, removed with its contents on destruction.
class ScratchDir {
 public:
  static Result<ScratchDir> Make(const std::string& what) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rackchaos_merge_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return Status::IoError(what + ": cannot create a directory in " + tmpl);
    return ScratchDir(tmpl);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Copies a source older than this build into `copy` and migrates the copy: older schemas keep rows in
// other tables (before version 3 every event was also a row of an `events` table), and the source
// itself must stay untouched.
Status MigratedCopy(const std::string& source_path, const std::string& copy, const std::string& what) {
  {
    RC_ASSIGN_OR_RETURN(Db src, Db::Open(source_path, kOpenReadOnly));
    RC_ASSIGN_OR_RETURN(Stmt vacuum, src.Prepare("VACUUM INTO ?", what));
    vacuum.Bind(1, copy);
    RC_RETURN_IF_ERROR(vacuum.Run(what + ": copying the source to migrate it"));
  }
  return ReportStore::Open(copy).status();
}

// SQLite URI filenames treat '?', '#' and '%' specially; everything else may stay as it is.
std::string UriPath(const std::string& path) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%') out += "%25";
    else if (c == '?') out += "%3f";
    else if (c == '#') out += "%23";
    else out += c;
  }
  return out + "?mode=ro";
}

}  // namespace

Result<MergeCounts> MergeInto(ReportStore& dest, const std::string& source_path) {
  const std::string what = "merging report '" + source_path + "' into '" + dest.path() + "'";
  RC_ASSIGN_OR_RETURN(int version, CheckSource(dest.path(), source_path));
  std::optional<ScratchDir> scratch;
  std::string read_path = source_path;
  if (version < LatestSchemaVersion()) {
    Result<ScratchDir> made = ScratchDir::Make(what);
    if (!made.ok()) return made.status();
    scratch.emplace(std::move(made).value());
    read_path = scratch->File("migrated.db");
    RC_RETURN_IF_ERROR(MigratedCopy(source_path, read_path, what));
  }
  Db& db = StoreAccess::DbOf(dest);
  // Read-only through a URI, so a source is never migrated, journaled or otherwise touched.
  RC_ASSIGN_OR_RETURN(Stmt attach, db.Prepare("ATTACH DATABASE ? AS src", what));
  attach.Bind(1, UriPath(read_path));
  RC_RETURN_IF_ERROR(attach.Run(what + ": attaching"));
  Result<MergeCounts> counts = CopyAll(db, what);
  Status detached = db.Exec("DETACH DATABASE src", what + ": detaching");
  if (counts.ok() && !detached.ok()) return detached;
  return counts;
}

}  // namespace rackchaos::reports
