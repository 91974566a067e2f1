// Recovery: reverts what crashed or killed real runs left applied, from the fault ledger.
//
// For every open ledger entry whose owning run is gone (ledger.h: the owner lock), Recover cancels the
// host-side expiry, checks whether the fault is still in effect (verify, or the value read back) and if
// so runs the recorded revert command on the recorded host and verifies it the way the run would have
// (verify exits 1, or the value reads back as the baseline); then it closes the entry. A fault found no
// longer in effect is not reverted again, and the line says so (and whether its host-side expiry fired),
// so replaying an entry whose expiry already fired, or running recover twice, is harmless. An entry with
// a deadline but no expiry token (the host died while its expiry was being armed, so the run never
// learned the token) has its host searched for a timer by the entry's tag (ExpiryTag in ssh_backend.h),
// which is removed, and the line and the entry's note say so.
// Report runs of dead owners that still say 'running' are finished as 'aborted', with a FaultReverted
// event per recovered fault. Entries of live runs are left alone. One recovery at a time per ledger: it
// holds the ledger's recovery lock (Ledger::LockRecovery) throughout, and waits for another holder (a
// `rackchaos recover`, or a real run starting) to finish first, then sees what that one closed.
// A tray a dead run's healer drained (LedgerEntry::drain(), after the faults opened before it) is
// returned to service once its diagnostic passes, as the healer would have; otherwise it stays drained
// and its line says why and how to resume it. (A drain that failed was closed by its run: the tray never
// left service, and recover never sees it.) Either way the entry closes: a drain is the site's own
// state, not a fault left applied, so it never keeps recover (or the next run) failing.
//
// `rackchaos recover` calls it, and so does every real run before its first fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"
#include "runner/site/ledger.h"

namespace rackchaos::runner {

struct RecoverOptions {
  bool accept_new_host_keys = false;
  Duration connect_timeout = Duration::Seconds(10);
  Duration command_timeout = Duration::Seconds(60);
  // Ledger entry ids to stop trying to revert (the host is gone for good, or was fixed by hand): they
  // are closed with `forget_reason` and never run. Entries of live runs cannot be forgotten.
  std::vector<int64_t> forget;
  std::string forget_reason;
  bool list_only = false;  // print the open entries and touch nothing
  // Called once, with a line for humans, before waiting for another process's recovery of the ledger.
  std::function<void(const std::string&)> on_wait;
};

struct RecoverResult {
  int reverted = 0;      // entries reverted (or found reverted), verified and closed
  int already_reverted = 0;  // of those, found not in effect, nothing run (the host-side expiry fired, ...)
  int failed = 0;        // entries still open (host unreachable, revert or verify failed)
  int skipped_live = 0;  // entries of runs whose process is alive
  int runs_aborted = 0;  // report runs marked 'aborted'
  int forgotten = 0;     // entries closed unreverted on request
  int expiries_swept = 0;  // host-side expiry timers found by their tag, not their token, and removed
  int returned = 0;      // trays a dead run's healer drained, returned to service (their diagnostic passed)
  int left_drained = 0;  // such trays left drained (diagnostic failed or none; resume failed); entry closed
  std::vector<std::string> lines;  // what was done, one line per entry and per run
};

// Fails only when the ledger cannot be read or an entry to forget is unknown, closed or live (then
// nothing is changed); per-entry failures are counted in `failed`.
Result<RecoverResult> Recover(Ledger& ledger, const RecoverOptions& options);

// " (a, b, c)": the trays an aborted run's reason names, the first kTraysNamed of them and then ", and N
// more" (JoinCut; a run whose healer drained a whole fleet must not write a reason of thousands
// of names); "" for none.
inline constexpr size_t kTraysNamed = 8;
std::string NameTrays(const std::vector<std::string>& trays);
// The open entries, one line each (id, run, fault, action, target, host, deadline, note).
Result<std::vector<std::string>> ListOpen(const Ledger& ledger);

}  // namespace rackchaos::runner
