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
  RC_ASSIGN_OR_RETURN(runner::Ledger::OpenCount open, ledger.CountOpen());
  LedgerPeek peek;
  peek.open = static_cast<int>(open.open);
  if (open.open > 0) peek.oldest_opened_unix = static_cast<double>(ParseWallStamp(open.oldest_opened_wall).value_or(0));
  return peek;
}

}  // namespace rackchaos::serve
