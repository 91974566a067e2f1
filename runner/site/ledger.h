// The fault ledger: what is applied on real hosts right now, written down before it is applied.
//
// An SQLite file of its own (WAL, synchronous=FULL; through reports/sqlite_db.h, the one SQLite wrapper),
// by default next to the report database as "<db>.ledger" (docs/real-mode.md). It is a separate file
// because it is about the hosts, not about a report: `rackchaos report merge` copies report files
// around, and a copied ledger row would be replayed twice. Tables:
//   ledger_runs  one row per real run: its report database and run id, pid, start, finished flag.
//   ledger       one row per applied fault on one target: the host to reach (address, port, user, key,
//                known_hosts), the rendered apply / revert / verify commands, the deadline, the
//                host-side expiry (token file and pid), and state 'open' until a verified revert;
//                and one per tray the healer drained, open until the run returns it to service
//                (LedgerEntry::drain()).
// A run owns its rows while it lives: it holds an open-file-description lock on byte <run id> of
// "<ledger>.owners", which the kernel drops when the process dies, even by SIGKILL. `rackchaos recover`
// replays only rows whose owner is gone, so it never fights a live run. Recovery itself is one process
// at a time: it holds the same kind of lock on byte 0 of "<ledger>.owners" (run ids start at 1), so two
// `rackchaos recover`s, or one and a real run starting (which recovers first), never replay one entry
// twice at once; the kernel drops that lock too when its holder dies.
//
// Errors: Status values naming the ledger file (kIoError, kCorrupt, kUnavailable when locked past
// the busy timeout). Threading: one Ledger per thread. Movable, not copyable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "runner/ssh/host_spec.h"

namespace rackchaos::runner {

struct LedgerEntry {
  int64_t id = 0;
  int64_t run = 0;  // ledger_runs.id
  FaultId fault = kNoFault;
  std::string action;  // inventory action, e.g. "link_down"
  std::string target;  // model name, e.g. "r01.tray03.nic1"
  ssh::HostSpec host;  // where the commands run
  std::string apply, revert;
  // On/off actions: `verify` exits 0 while the fault is in effect, 1 once reverted.
  std::string verify;
  // Value actions: `readback` prints the current value; reverted when it is `expect` (within 1%).
  std::string readback;
  std::optional<double> expect;
  int64_t deadline_unix = 0;  // when the fault is planned to end (0 = end of run)
  std::string expiry_token;   // host-side expiry: token file on the host, and its timer's pid
  int64_t expiry_pid = 0;
  std::string state = "open";  // open | closed
  std::string opened_wall, closed_wall, note;

  // A drain's diagnostic when it runs on another host than resume (its own run_on, or resume's run_on a
  // head node while the diagnostic runs on the tray's node): the command and where it runs. `verify` is
  // empty then: a rackchaos from before these fields would run it on `host`.
  std::string diagnostic;
  ssh::HostSpec diagnostic_host;

  // A tray the healer drained (action "drain", no fault), written before the drain runs and closed when
  // the run returns it to service: `revert` is the inventory's resume, `verify` its diagnostic (exit 0 =
  // fit for service) when it runs on resume's host, else `diagnostic` on `diagnostic_host`; neither when
  // the site has none.
  bool drain() const { return fault == kNoFault && action == "drain"; }
};

// How a drain entry's note begins when the drain got no answer (the session was lost): it may or may not
// have run, so the entry stays open and recover says so if the tray turns out never to have left service.
inline constexpr std::string_view kDrainUnanswered = "the drain got no answer";

struct LedgerRun {
  int64_t id = 0;
  std::string report_db;
  int64_t report_run = 0;
  int64_t pid = 0;
  std::string started_wall;
  bool finished = false;
};

// "<report db>.ledger": where a report database's runs keep their ledger.
std::string DefaultLedgerPath(const std::string& report_db);
// The ledger at `path` as a report row names it (reports::RunInfo::ledger): its absolute path with links
// and dot segments resolved, so that two names of one file (relative, through a link) are one ledger.
std::string LedgerIdentity(const std::string& path);

class Ledger {
 public:
  // Opens or creates the ledger at `path`. Any number of processes may open one ledger at once (the
  // WAL switch and the schema wait for one another, as the report's do). kInvalidArgument when it (or
  // its .owners lock file) is a directory, device, FIFO or socket.
  static Result<Ledger> Open(const std::string& path);
  // Opens an existing ledger without writing to it or creating anything next to it (for watchers such
  // as `rackchaos serve`): the readers work, the writers fail with kIoError. kNotFound when absent.
  static Result<Ledger> OpenReadOnly(const std::string& path);
  Ledger(Ledger&&) noexcept;
  Ledger& operator=(Ledger&&) noexcept;
  ~Ledger();

  const std::string& path() const;

  // Registers a run of this process and takes its owner lock (held until this Ledger is destroyed).
  Result<int64_t> BeginRun(const std::string& report_db, int64_t report_run);
  Status FinishRun(int64_t run);
  // Records the report run of a run registered before its report row existed (BeginRun with 0).
  Status SetReportRun(int64_t run, int64_t report_run);

  // Writes an open entry (durably) and returns its id. Call before running entry.apply.
  Result<int64_t> Record(const LedgerEntry& entry);
  Status SetExpiry(int64_t entry, const std::string& token, int64_t pid);
  // Marks the entry closed (after a verified revert) with a note for humans, appended to the notes
  // before it (on a line of its own, after the time) when there are any.
  Status Close(int64_t entry, const std::string& note);
  // Keeps the entry open, appending "<wall time> <note>" as a line (e.g. why a revert failed), unless
  // the notes already end with the same text (a retry failing the same way).
  Status SetNote(int64_t entry, const std::string& note);

  // Open entries, oldest first.
  Result<std::vector<LedgerEntry>> OpenEntries() const;
  // How many fault entries are open and when the oldest of them was opened ("" when none), in one query
  // over the open-entries index: for watchers that poll (serve's pages and /metrics). Drains are not
  // faults: a tray held drained for hours by a live run is no fault left applied.
  struct OpenCount {
    int64_t open = 0;
    std::string oldest_opened_wall;
  };
  Result<OpenCount> CountOpen() const;
  Result<std::vector<LedgerRun>> UnfinishedRuns() const;
  Result<std::vector<LedgerEntry>> Entries(int64_t run) const;
  // True when another live process owns `run` (holds its lock). Runs of this very Ledger count as live.
  bool OwnerAlive(int64_t run) const;

  // Takes the ledger's recovery lock (exclusive across processes and across Ledgers of one process),
  // held until UnlockRecovery or this Ledger's end, or the process's death (even by SIGKILL). When
  // another holder has it, calls `on_wait` (if set) once and then blocks until it is free. kIoError
  // for a read-only Ledger or a failed lock call (kUnavailable when a signal interrupts the wait).
  Status LockRecovery(const std::function<void()>& on_wait);
  void UnlockRecovery();

  struct State;

 private:
  explicit Ledger(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace rackchaos::runner
