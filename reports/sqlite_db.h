// A thin RAII layer over the SQLite C API: the one place that calls it (target rackchaos_sqlite). The
// report store (reports/) and the fault ledger (runner/site/ledger.h) both use it; nothing else includes
// sqlite3.h.
//
// Every SQLite failure becomes a Status naming the operation, the database file (as "report '<path>'"
// or "fault ledger '<path>'", after the DbKind it was opened as) and SQLite's own message; SQLite
// result codes never leave this layer. Nothing here throws. Objects are not thread-safe: one
// connection belongs to one thread at a time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rackchaos::reports {

// SQLite's open flags (SQLITE_OPEN_*), named here so that callers need not include sqlite3.h
// (sqlite_db.cpp checks they are SQLite's values).
inline constexpr int kOpenReadOnly = 0x01;
inline constexpr int kOpenReadWrite = 0x02;
inline constexpr int kOpenCreate = 0x04;
inline constexpr int kOpenUri = 0x40;

// What a database file is, for messages: "... in report 'x.db'", "... in fault ledger 'x.db.ledger'".
enum class DbKind { kReport, kFaultLedger };

// Maps an SQLite primary result code to our StatusCode: BUSY/LOCKED -> kUnavailable,
// NOTADB/CORRUPT -> kCorrupt, CANTOPEN/IOERR/READONLY/FULL/PERM -> kIoError, INTERRUPT -> kAborted,
// anything else (SQL errors, constraint violations, misuse) -> kInternal.
StatusCode StatusCodeForSqlite(int rc);

// One prepared statement. Bind indexes are 1-based, column indexes 0-based (as in SQLite).
// Movable, not copyable; finalized on destruction.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(sqlite3_stmt* stmt, DbKind kind = DbKind::kReport) : stmt_(stmt), kind_(kind) {}

  void Bind(int index, int64_t value);
  void Bind(int index, double value);
  void Bind(int index, std::string_view value);  // copied by SQLite (SQLITE_TRANSIENT)
  // Not copied (SQLITE_STATIC): the text must stay valid and unchanged until the statement has
  // been stepped and reset. For hot loops that bind text owned by the caller.
  void BindStatic(int index, std::string_view value);
  void BindNull(int index);
  // Binds the value, or NULL when absent.
  void Bind(int index, std::optional<int64_t> value);

  // Advances one row: true when a row is available, false when done. `what` names the operation
  // in the error message.
  Result<bool> Step(std::string_view what);
  // Steps a statement that returns no rows, then resets it for reuse.
  Status Run(std::string_view what);
  // Resets the statement and clears its bindings so it can be reused.
  void Reset();

  bool IsNull(int col) const;
  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;  // "" for NULL
  std::optional<int64_t> OptInt(int col) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const;
  };
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  DbKind kind_ = DbKind::kReport;
};

// One open connection. Movable, not copyable; closed on destruction.
class Db {
 public:
  Db() = default;

  // Opens `path` with SQLite open flags (kOpen* above, or SQLITE_OPEN_*). Fails with kIoError when the
  // file cannot be opened (e.g. its directory does not exist), kNotFound when opening without
  // kOpenCreate a file that is absent, kInvalidArgument when it is a directory, device, FIFO or socket
  // (refused before SQLite waits on it).
  static Result<Db> Open(const std::string& path, int flags, DbKind kind = DbKind::kReport);

  // Runs one or more statements that return no rows.
  Status Exec(const std::string& sql, std::string_view what);
  Result<Stmt> Prepare(std::string_view sql, std::string_view what);
  // Runs a query whose first row's first column is an integer (e.g. a PRAGMA).
  Result<int64_t> QueryInt(const std::string& sql, std::string_view what);
  void SetBusyTimeout(int ms);
  // The rowid of the last row this connection inserted, and the rows the last statement changed.
  int64_t LastInsertRowid() const;
  int64_t Changes() const;
  // The rows every statement of this connection has changed since it opened.
  int64_t TotalChanges() const;
  // Copies what the WAL holds into the file as far as it can without waiting for or blocking another
  // connection (a PASSIVE checkpoint; nothing in a file that is not in WAL mode). True when all of it was.
  bool CheckpointPassive();

  // Builds the Status for a failed call: "<what> in report '<path>': <sqlite message>".
  Status Error(int rc, std::string_view what) const;

  const std::string& path() const { return path_; }
  DbKind kind() const { return kind_; }
  // The raw handle, for the rest of this layer and for tests that inspect SQLite itself.
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  DbKind kind_ = DbKind::kReport;
};

// Rolls back unless Commit() succeeded, so an early error return never leaves a transaction open.
class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock up front, so lock contention surfaces here (after the busy
  // timeout) and not halfway through a batch.
  static Result<Transaction> Begin(Db& db, std::string_view what);
  // BEGIN (deferred): a read transaction, so that several queries see one snapshot of the file.
  static Result<Transaction> BeginRead(Db& db, std::string_view what);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Status Commit(std::string_view what);

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_ = nullptr;
};

namespace retry_detail {
inline StatusCode CodeOf(const Status& s) { return s.code(); }
template <typename T>
StatusCode CodeOf(const Result<T>& r) { return r.status().code(); }
}  // namespace retry_detail

// Runs `step` (returning a Status or a Result) again while it fails with kUnavailable, until
// `timeout_ms` has passed, and returns its last outcome. SQLite waits out a busy file (the busy
// timeout) for the locks a statement takes, but not for the exclusive lock that switching a file to WAL
// needs: that fails at once while any other connection has the file open in rollback-journal mode, as
// every opener of a brand-new file does until one of them switches it. So setting a connection up is
// retried as a whole: files opened by many processes at once wait for one another instead of failing.
// `step` must be safe to run again (each of its writes committed or rolled back). Pauses double from
// 1 ms to 50 ms; the calling thread sleeps.
template <typename Step>
auto RetryWhileBusy(int timeout_ms, Step step) -> decltype(step()) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int pause_ms = 1;; pause_ms = std::min(pause_ms * 2, 50)) {
    auto outcome = step();
    if (outcome.ok() || retry_detail::CodeOf(outcome) != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() >= deadline) {
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
}

}  // namespace rackchaos::reports
