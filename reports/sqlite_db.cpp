#include "reports/sqlite_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

#include "core/user_file.h"

namespace rackchaos::reports {

StatusCode StatusCodeForSqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return StatusCode::kOk;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return StatusCode::kCorrupt;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_NOMEM:
      return StatusCode::kIoError;
    case SQLITE_INTERRUPT:
      return StatusCode::kAborted;
    default:
      return StatusCode::kInternal;
  }
}

static_assert(kOpenReadOnly == SQLITE_OPEN_READONLY && kOpenReadWrite == SQLITE_OPEN_READWRITE &&
              kOpenCreate == SQLITE_OPEN_CREATE && kOpenUri == SQLITE_OPEN_URI);

namespace {

const char* Noun(DbKind kind) { return kind == DbKind::kFaultLedger ? "fault ledger" : "report"; }

Status MakeError(sqlite3* db, DbKind kind, std::string_view file, int rc, std::string_view what) {
  std::string msg = std::string(what) + " in " + Noun(kind) + " '" + std::string(file) + "': ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (StatusCodeForSqlite(rc) == StatusCode::kUnavailable) {
    msg += " (another connection holds the database; gave up after the busy timeout)";
  }
  return Status(StatusCodeForSqlite(rc), std::move(msg));
}

// Statements carry no path of their own; SQLite knows which file their connection has open.
Status StmtError(sqlite3_stmt* stmt, DbKind kind, int rc, std::string_view what) {
  sqlite3* db = sqlite3_db_handle(stmt);
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  return MakeError(db, kind, file ? file : "?", rc, what);
}

}  // namespace

void Stmt::Finalizer::operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }

void Stmt::Bind(int index, int64_t value) { sqlite3_bind_int64(stmt_.get(), index, value); }
void Stmt::Bind(int index, double value) { sqlite3_bind_double(stmt_.get(), index, value); }
// SQLite binds a null pointer as NULL: an empty view with no data (std::string_view{}) is "" here.
void Stmt::Bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_.get(), index, value.data() ? value.data() : "", static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
}
void Stmt::BindStatic(int index, std::string_view value) {
  sqlite3_bind_text(stmt_.get(), index, value.data() ? value.data() : "", static_cast<int>(value.size()),
                    SQLITE_STATIC);
}
void Stmt::BindNull(int index) { sqlite3_bind_null(stmt_.get(), index); }
void Stmt::Bind(int index, std::optional<int64_t> value) {
  if (value) Bind(index, *value);
  else BindNull(index);
}

Result<bool> Stmt::Step(std::string_view what) {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status error = StmtError(stmt_.get(), kind_, rc, what);
  // A failed step leaves the statement needing a reset before it can be reused from the cache.
  Reset();
  return error;
}

Status Stmt::Run(std::string_view what) {
  Result<bool> row = Step(what);
  Reset();
  return row.status();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
double Stmt::Double(int col) const { return sqlite3_column_double(stmt_.get(), col); }
std::string Stmt::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), col);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}
std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

void Db::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Result<Db> Db::Open(const std::string& path, int flags, DbKind kind) {
  std::error_code ec;
  std::filesystem::path fs_path(path);
  bool is_uri = path.rfind("file:", 0) == 0;
  // A FIFO would block SQLite's first read forever and a device would be read as a database; a name the
  // system cannot look up (too long, a loop of links) is no database either. Such a path is the user's
  // mistake (bad input), not a failure of the machine. First: exists() below says "false" for all of them.
  if (!is_uri && path != ":memory:" && !path.empty()) {
    if (Status special = CheckNotSpecialFile(path, {kind == DbKind::kFaultLedger ? "fault ledger" : "report database", 0}); !special.ok())
      return Status::Invalid(special.message());
  }
  // SQLite reports "unable to open database file" for every open failure; say which cause it is.
  if (!is_uri && !(flags & SQLITE_OPEN_CREATE) && !std::filesystem::exists(fs_path, ec)) {
    if (kind == DbKind::kFaultLedger) return Status::NotFound("fault ledger '" + path + "' does not exist");
    return Status::NotFound("report database '" + path + "' does not exist; `rackchaos run PLAN --db " + path +
                            "` creates it, or pass the --db that a run wrote");
  }
  if (!is_uri && fs_path.has_parent_path() && !std::filesystem::is_directory(fs_path.parent_path(), ec)) {
    return Status::IoError(std::string("cannot open ") + (kind == DbKind::kFaultLedger ? "fault ledger" : "report database") +
                           " '" + path + "': directory '" + fs_path.parent_path().string() + "' does not exist");
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db;
  db.db_.reset(raw);  // sqlite3_open_v2 may hand back a handle even on failure; it must be closed
  db.path_ = path;
  db.kind_ = kind;
  if (rc != SQLITE_OK) return db.Error(rc, "opening");
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status Db::Exec(const std::string& sql, std::string_view what) {
  int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return Status::Ok();
  return Error(rc, what);
}

Result<Stmt> Db::Prepare(std::string_view sql, std::string_view what) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return Error(rc, what);
  }
  return Stmt(raw, kind_);
}

Result<int64_t> Db::QueryInt(const std::string& sql, std::string_view what) {
  RC_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql, what));
  RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
  if (!row) return Status::Internal(std::string(what) + " in report '" + path_ + "': no row");
  return stmt.Int(0);
}

void Db::SetBusyTimeout(int ms) { sqlite3_busy_timeout(db_.get(), ms); }
int64_t Db::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_.get()); }
int64_t Db::Changes() const { return sqlite3_changes(db_.get()); }
int64_t Db::TotalChanges() const { return sqlite3_total_changes64(db_.get()); }

bool Db::CheckpointPassive() {
  int log = 0, copied = 0;
  return sqlite3_wal_checkpoint_v2(db_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied) == SQLITE_OK &&
         log == copied;
}

Status Db::Error(int rc, std::string_view what) const {
  return MakeError(db_.get(), kind_, path_, rc, what);
}

Result<Transaction> Transaction::Begin(Db& db, std::string_view what) {
  RC_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE", std::string(what) + ": starting a transaction"));
  return Transaction(&db);
}

Result<Transaction> Transaction::BeginRead(Db& db, std::string_view what) {
  RC_RETURN_IF_ERROR(db.Exec("BEGIN", std::string(what) + ": starting a read transaction"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_) sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Commit(std::string_view what) {
  Status s = db_->Exec("COMMIT", std::string(what) + ": committing");
  if (s.ok()) db_ = nullptr;  // on failure the destructor rolls back
  return s;
}

}  // namespace rackchaos::reports
