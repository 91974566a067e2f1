// What a fault ledger (runner/site/ledger.h) holds open, read without writing to it: for serve's
// /metrics (rackchaos_ledger_entries_open and the age of the oldest, which the alerting rules watch).
#pragma once

#include <string>

#include "core/status.h"

namespace rackchaos::serve {

struct LedgerPeek {
  int open = 0;                   // entries in state 'open'
  double oldest_opened_unix = 0;  // Unix seconds the oldest open entry was opened at; 0 when none
};

// Reads the ledger at `path` read-only. An absent file is an empty ledger (no real run wrote one).
// kIoError / kCorrupt / kUnavailable naming the file otherwise.
Result<LedgerPeek> PeekLedger(const std::string& path);

}  // namespace rackchaos::serve
