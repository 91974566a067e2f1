// A thin RAII layer over the SQLite C API, used only inside reports/.
//
// Every SQLite failure becomes a Status naming the operation, the database file and SQLite's own
// message; SQLite result codes never leave this layer. Nothing here throws. Objects are not
// thread-safe: one connection belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rackchaos::reports {

// Maps an SQLite primary result code to our StatusCode: BUSY/LOCKED -> kUnavailable,
// NOTADB/CORRUPT -> kCorrupt, CANTOPEN/IOERR/READONLY/FULL/PERM -> kIoError, INTERRUPT -> kAborted,
// anything else (SQL errors, constraint violations, misuse) -> kInternal.
StatusCode StatusCodeForSqlite(int rc);

// One prepared statement. Bind indexes are 1-based, column indexes 0-based (as in SQLite).
// Movable, not copyable; finalized on destruction.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(sqlite3_stmt* stmt) : stmt_(stmt) {}

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
};

// One open connection. Movable, not copyable; closed on destruction.
class Db {
 public:
  Db() = default;

  // Opens `path` with SQLite open flags (SQLITE_OPEN_*). Fails with kIoError when the file cannot be
  // opened (e.g. its directory does not exist), kNotFound when opening read-only a file that is absent.
  static Result<Db> Open(const std::string& path, int flags);

  // Runs one or more statements that return no rows.
  Status Exec(const std::string& sql, std::string_view what);
  Result<Stmt> Prepare(std::string_view sql, std::string_view what);
  // Runs a query whose first row's first column is an integer (e.g. a PRAGMA).
  Result<int64_t> QueryInt(const std::string& sql, std::string_view what);
  void SetBusyTimeout(int ms);

  // Builds the Status for a failed call: "<what> in report '<path>': <sqlite message>".
  Status Error(int rc, std::string_view what) const;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

// Rolls back unless Commit() succeeded, so an early error return never leaves a transaction open.
class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock up front, so lock contention surfaces here (after the busy
  // timeout) and not halfway through a batch.
  static Result<Transaction> Begin(Db& db, std::string_view what);
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

}  // namespace rackchaos::reports
