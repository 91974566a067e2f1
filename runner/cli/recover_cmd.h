// `rackchaos recover` (runner/site/recover.h does the work).
#pragma once

#include <string>

#include "runner/site/recover.h"

namespace rackchaos::runner {

// `rackchaos recover`: opens `ledger_path` (default DefaultLedgerPath(db)), recovers, prints what it
// did. Exit 0 when nothing is left open, 3 when some entry could not be reverted or on ledger errors.
int CmdRecover(const std::string& db, const std::string& ledger_path, const RecoverOptions& options, bool quiet);

}  // namespace rackchaos::runner
