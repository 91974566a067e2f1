#include "runner/serve/ledger_peek.h"

#include <ctime>
#include <filesystem>

#include "runner/site/ledger.h"

namespace rackchaos::serve {
namespace {

// "2024-05-01T12:00:00Z" (LedgerWallNow's form) -> Unix seconds; 0 when it does not parse.
double UnixOf(const std::string& iso) {
  std::tm tm{};
  if (iso.empty() || !strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

Result<LedgerPeek> PeekLedger(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return LedgerPeek{};
  // Read-only: serve never writes the ledger nor creates its owners file (runner/site/ledger.h).
  RC_ASSIGN_OR_RETURN(runner::Ledger ledger, runner::Ledger::OpenReadOnly(path));
  RC_ASSIGN_OR_RETURN(std::vector<runner::LedgerEntry> open, ledger.OpenEntries());
  LedgerPeek peek;
  peek.open = static_cast<int>(open.size());
  // OpenEntries is oldest first; stamps of one form sort as text, so the smallest is the front's.
  if (!open.empty()) peek.oldest_opened_unix = UnixOf(open.front().opened_wall);
  return peek;
}

}  // namespace rackchaos::serve
