// Internal to reports/: the state behind a ReportStore and helpers shared by its .cpp files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/tray_list.h"
#include "core/units.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct ReportStore::State {
  Db db;
  bool read_only = false;
  int busy_timeout_ms = 5000;  // OpenOptions::busy_timeout_ms: also how long a busy WAL switch is retried
  // A file this store created, until its first components are stored: AddComponents writes them
  // in rollback-journal mode and switches back to WAL before it returns (reports/store.cpp).
  bool fresh = false;
  int wal_autocheckpoint_pages = 16384;  // OpenOptions: set again whenever the file goes back to WAL
  int64_t journal_size_limit = -1;
  int64_t changes_at_begin = 0;  // Db::TotalChanges when this connection last began a run (FinishRun)
  // Prepared statements reused across calls, keyed by the address of their static SQL text: a
  // million-event batch then prepares each statement once.
  std::map<const char*, Stmt> cache;
  // The placement each job's events last referred to, per run: a job's events share one `placements`
  // row while the job stays on the same trays, found in O(1) when they share one TrayList.
  struct Placed {
    TrayList trays;
    int64_t id = 0;
    int depth = 0;      // placements rows since the last whole list (0: this one is whole)
    size_t chain = 0;   // ids in those rows' `added` and `removed` together
  };
  int64_t placements_run = 0;
  std::map<JobId, Placed> last_placement;

  // The cached statement for `sql` (a string literal or other static text), prepared on first use.
  Result<Stmt*> Cached(const char* sql, std::string_view what);
  // kNotFound unless the run exists.
  Status RequireRun(int64_t run, std::string_view what);
};

// The connection behind a ReportStore, for the rest of reports/ only (history, merge, the sweep and
// qualification stores): their SQL stays in this folder. Callers must not keep a statement stepping
// across a call of the store's own writers (a file's first topology rebuilds indexes).
class StoreAccess {
 public:
  static Db& DbOf(const ReportStore& store) { return store.state_->db; }
  // The store's cached statement for `sql` (static text), prepared on first use; reset it after use.
  static Result<Stmt*> Cached(const ReportStore& store, const char* sql, std::string_view what) {
    return store.state_->Cached(sql, what);
  }
};

// Ids use a sentinel for "none" in memory and NULL in the database.
inline void BindId(Stmt& stmt, int index, uint32_t id, uint32_t none) {
  if (id == none) stmt.BindNull(index);
  else stmt.Bind(index, static_cast<int64_t>(id));
}
inline uint32_t IdOr(const Stmt& stmt, int col, uint32_t none) {
  return stmt.IsNull(col) ? none : static_cast<uint32_t>(stmt.Int(col));
}
inline std::optional<int64_t> OptUs(const std::optional<Duration>& d) {
  if (!d) return std::nullopt;
  return d->us;
}
inline std::optional<Duration> OptDuration(const Stmt& stmt, int col) {
  if (stmt.IsNull(col)) return std::nullopt;
  return Duration::Micros(stmt.Int(col));
}

// A component from a row whose columns are id, name, kind, parent_id, serial (spelled out).
inline ComponentRow ComponentFrom(const Stmt& stmt) {
  return {IdOr(stmt, 0, kNoComponent), stmt.Text(1), stmt.Text(2), IdOr(stmt, 3, kNoComponent), stmt.Text(4)};
}

// Runs `sql` with the run id bound to parameter 1 and calls fn(stmt) for every row.
template <typename RowFn>
Status ForEachRow(Db& db, const char* sql, int64_t run, const std::string& what, RowFn fn) {
  RC_ASSIGN_OR_RETURN(Stmt stmt, db.Prepare(sql, what));
  stmt.Bind(1, run);
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) return Status::Ok();
    fn(stmt);
  }
}

// "what" strings name the run: "appending events to run 3".
inline std::string ForRun(std::string_view what, int64_t run) {
  return std::string(what) + " run " + std::to_string(run);
}

}  // namespace rackchaos::reports
