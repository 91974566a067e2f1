#include "runner/serve/ledger_peek.h"

#include <filesystem>

#include "core/wall_time.h"
#include "runner/site/ledger.h"

namespace rackchaos::serve {

Result<LedgerPeek> PeekLedger(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return LedgerPeek{};
  // Read-only: serve never writes the ledger nor creates its owners file (runner/site/ledger.h); a FIFO
  // or a device is refused before SQLite would block on it (reports/sqlite_db.cpp Db::Open).
  RC_ASSIGN_OR_RETURN(runner::Ledger ledger, runner::Ledger::OpenReadOnly(path));
  RC_ASSIGN_OR_RETURN(std::vector<runner::LedgerEntry> open, ledger.OpenEntries());
  LedgerPeek peek;
  peek.open = static_cast<int>(open.size());
  // OpenEntries is oldest first; stamps of one form sort as text, so the smallest is the front's.
  if (!open.empty()) peek.oldest_opened_unix = static_cast<double>(ParseWallStamp(open.front().opened_wall).value_or(0));
  return peek;
}

}  // namespace rackchaos::serve
