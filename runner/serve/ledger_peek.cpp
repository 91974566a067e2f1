#include "runner/serve/ledger_peek.h"

#include <sqlite3.h>

#include <ctime>
#include <filesystem>
#include <memory>

namespace rackchaos::serve {
namespace {

struct Closer {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct Finalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

// "2024-05-01T12:00:00Z" (LedgerWallNow's form) -> Unix seconds; 0 when it does not parse.
double UnixOf(const char* iso) {
  std::tm tm{};
  if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

Result<LedgerPeek> PeekLedger(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return LedgerPeek{};
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  auto fail = [&](int code) -> Status {
    const std::string message =
        "reading fault ledger '" + path + "': " + (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(code));
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) return Status::Unavailable(message);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) return Status::Corrupt(message);
    return Status::IoError(message);
  };
  if (rc != SQLITE_OK) return fail(rc);
  sqlite3_busy_timeout(db.get(), 1000);
  sqlite3_stmt* stmt_raw = nullptr;
  int prc = sqlite3_prepare_v2(db.get(), "SELECT count(*), min(opened_wall) FROM ledger WHERE state = 'open'", -1,
                               &stmt_raw, nullptr);
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt(stmt_raw);
  if (prc != SQLITE_OK) return fail(prc);
  const int step = sqlite3_step(stmt.get());
  if (step != SQLITE_ROW) return fail(step);
  LedgerPeek peek;
  peek.open = sqlite3_column_int(stmt.get(), 0);
  peek.oldest_opened_unix = UnixOf(reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 1)));
  return peek;
}

}  // namespace rackchaos::serve
