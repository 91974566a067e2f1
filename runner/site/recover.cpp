#include "runner/site/recover.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/exit_code.h"
#include "core/strings.h"
#include "core/wall_time.h"
#include "reports/store.h"
#include "runner/ssh/command_template.h"
#include "runner/ssh/ssh_pool.h"
#include "runner/site/ssh_backend.h"

namespace rackchaos::runner {
namespace {

std::string Describe(const LedgerEntry& e) {
  if (e.drain()) return "tray " + e.target + " drained by the healer (" + e.host.Describe() + ")";
  return "fault #" + std::to_string(e.fault) + " " + e.action + " on " + e.target + " (" + e.host.Describe() + ")";
}

// Pool names must be unique; the same name may stand for different endpoints in different runs.
std::string PoolName(const ssh::HostSpec& h) {
  return h.name + "@" + h.address + ":" + std::to_string(h.port) + "/" + h.user;
}
std::string PoolName(const LedgerEntry& e) { return PoolName(e.host); }

// The hosts an entry's commands run on, named as in the pool: its host, and a drain's diagnostic's.
std::vector<ssh::HostSpec> HostsOf(const LedgerEntry& e) {
  std::vector<ssh::HostSpec> hosts{e.host};
  hosts.back().name = PoolName(e.host);
  if (!e.diagnostic.empty()) {
    hosts.push_back(e.diagnostic_host);
    hosts.back().name = PoolName(e.diagnostic_host);
  }
  return hosts;
}

Status RunOk(ssh::SshPool& pool, const std::string& host, const std::string& command, ssh::CommandResult* out,
             bool exit_one_ok = false) {
  ssh::CommandResult r = pool.RunAll({host}, command).at(0);
  if (out) *out = r;
  if (!r.status.ok()) return r.status;
  if (r.exit_status == 0 || (exit_one_ok && r.exit_status == 1)) return Status::Ok();
  return Status::Unavailable("'" + command + "' exited " + std::to_string(r.exit_status) +
                             (r.err.empty() ? "" : ": " + r.err.substr(0, r.err.find('\n'))));
}

// Whether the entry's fault is in effect on the host now: verify (exit 0 = in effect, 1 = not) or the
// value read back against the baseline. Unknown (nullopt) when the entry has no way to tell.
Result<std::optional<bool>> InEffect(ssh::SshPool& pool, const std::string& host, const LedgerEntry& e) {
  ssh::CommandResult r;
  if (!e.verify.empty()) {
    RC_RETURN_IF_ERROR(RunOk(pool, host, e.verify, &r, true).WithContext("verify"));
    return std::optional<bool>(r.exit_status == 0);
  }
  if (!e.readback.empty() && e.expect) {
    RC_RETURN_IF_ERROR(RunOk(pool, host, e.readback, &r).WithContext("read back"));
    RC_ASSIGN_OR_RETURN(double value, ParseFirstNumber(r.out));
    return std::optional<bool>(std::fabs(value - *e.expect) > std::max(1.0, 0.01 * std::fabs(*e.expect)));
  }
  return std::optional<bool>();
}

// What Replay found and did.
enum class Found { kReverted, kAlreadyReverted, kExpiryFired, kReturned, kLeftDrained };
struct Replayed {
  Found found = Found::kReverted;
  // Expiry token files (with their timers) found by the entry's tag and removed: armed by a run that
  // never heard back from the arming, so the ledger has no token for them.
  std::vector<std::string> swept;
};

// Cancel the expiry, revert, verify: the same steps as SshBackend's revert. A fault no longer in effect
// is not reverted again (a revert is not always harmless twice: `tc qdisc del` of a limit that is gone
// fails); whether its host-side expiry fired is told by the expiry's token file, which only the timer
// itself removes before reverting (or a cancel, which the ledger would have recorded by closing).
// An entry with a deadline and no token may have a timer whose arming never answered (the host died
// while it was armed): it is looked for by the entry's tag (ExpiryTag, from its run's pid) and removed.
Result<Replayed> Replay(ssh::SshPool& pool, const LedgerEntry& e, int64_t run_pid) {
  const std::string host = PoolName(e);
  bool fired = false;
  Replayed out;
  if (e.expiry_token.empty() && e.deadline_unix != 0 && run_pid > 0) {
    ssh::CommandResult t;
    RC_RETURN_IF_ERROR(RunOk(pool, host, SweepExpiryCommand(ExpiryTag(run_pid, e.run, e.id)), &t)
                           .WithContext("looking for a host-side expiry the run never heard back from"));
    std::istringstream lines(t.out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) out.swept.push_back(line);
  }
  if (!e.expiry_token.empty()) {
    ssh::CommandResult t;
    RC_RETURN_IF_ERROR(RunOk(pool, host, "test -e " + ssh::ShellQuote(e.expiry_token), &t, true)
                           .WithContext("looking for the host-side expiry"));
    fired = t.exit_status == 1;
    RC_RETURN_IF_ERROR(RunOk(pool, host, CancelExpiryCommand(e.expiry_token, e.expiry_pid), nullptr)
                           .WithContext("cancelling the host-side expiry"));
  }
  RC_ASSIGN_OR_RETURN(std::optional<bool> before, InEffect(pool, host, e));
  if (before && !*before) {
    out.found = fired ? Found::kExpiryFired : Found::kAlreadyReverted;
    return out;
  }
  ssh::CommandResult r;
  RC_RETURN_IF_ERROR(RunOk(pool, host, e.revert, &r).WithContext("revert"));
  RC_ASSIGN_OR_RETURN(std::optional<bool> after, InEffect(pool, host, e));
  if (after && *after)
    return Status::Unavailable(e.verify.empty() ? "the value is not back at " + std::to_string(*e.expect) + " after revert"
                                                : "verify says the fault is still in effect after revert");
  return out;
}

// A tray a dead run's healer drained goes back to service as the healer would have returned it: once its
// diagnostic passes, run where the run would have run it (LedgerEntry::verify on resume's host, or
// diagnostic on its own). One that fails it, or whose entry names none, stays drained (the line says why
// and how to resume it); so does one whose resume fails. `why` says which. Each command is
// checked as every other one recover runs (RunOk): no answer keeps the entry open.
// A drain whose command failed was closed by its run (SshBackend::Drain) and never comes here; one that
// got no answer (kDrainUnanswered) may never have happened, and a resume that then fails says so.
Result<Replayed> ReturnDrained(ssh::SshPool& pool, const LedgerEntry& e, std::string* why) {
  // The diagnostic where the run would have run it: on resume's host (verify), or on its own.
  const bool elsewhere = !e.diagnostic.empty();
  if (!elsewhere && e.verify.empty()) {
    *why = "its entry names no diagnostic to check it first";
    return Replayed{Found::kLeftDrained, {}};
  }
  const std::string host = PoolName(e);
  ssh::CommandResult r;
  Status s = elsewhere ? RunOk(pool, PoolName(e.diagnostic_host), e.diagnostic, &r) : RunOk(pool, host, e.verify, &r);
  RC_RETURN_IF_ERROR(r.status.WithContext("diagnostic"));  // unreachable: the entry stays open
  const std::string diag = SshBackend::FirstLine(r.out.empty() ? r.err : r.out);
  if (!s.ok()) {
    *why = "its diagnostic failed (exit " + std::to_string(r.exit_status) + "): " + diag;
    return Replayed{Found::kLeftDrained, {}};
  }
  s = RunOk(pool, host, e.revert, &r);
  RC_RETURN_IF_ERROR(r.status.WithContext("resume"));
  if (!s.ok()) {
    const bool unanswered = e.note.find(kDrainUnanswered) != std::string::npos;
    *why = "its diagnostic passed but resume failed (" + s.message() + "); " +
           (unanswered ? "its drain never answered, so the tray may never have left service"
                       : "it may still be drained");
    return Replayed{Found::kLeftDrained, {}};
  }
  *why = "its diagnostic passed: " + diag;
  return Replayed{Found::kReturned, {}};
}

// The report row of a run killed after its row was written but before it recorded the row's id in the
// ledger (report_run 0; SshBackend::PrepareRun): the row that names this ledger and run (RunInfo::ledger,
// ledger_run; none when it was killed before it wrote one). Rows stored before rows named their ledger run
// (schema version 16: RunRow::ledger_unrecorded) are found by the times, as before: the one such row
// still 'running', started when or after the run registered, that no other unfinished ledger run claims
// (none when there are several, or while another run of that database is alive and unnumbered). 0 when
// there is no row.
Result<int64_t> RowOfUnnumberedRun(const Ledger& ledger, const LedgerRun& run, const std::vector<LedgerRun>& runs,
                                   const std::set<int64_t>& live) {
  std::error_code ec;
  if (!std::filesystem::exists(run.report_db, ec) && !ec) return int64_t{0};
  RC_ASSIGN_OR_RETURN(reports::ReportStore store, reports::ReportStore::Open(run.report_db));
  RC_ASSIGN_OR_RETURN(std::vector<reports::RunRow> rows, store.ListRuns());
  const std::string identity = LedgerIdentity(ledger.path());
  for (const reports::RunRow& row : rows)
    if (row.info.ledger_run == run.id && row.info.ledger == identity) return row.id;
  std::set<int64_t> claimed;
  for (const LedgerRun& r : runs) {
    if (r.report_db != run.report_db) continue;
    if (r.report_run == 0 && live.count(r.id)) return int64_t{0};  // its row may be any of them
    claimed.insert(r.report_run);
  }
  int64_t found = 0;
  for (const reports::RunRow& row : rows) {
    if (!row.ledger_unrecorded || row.status != "running" || claimed.count(row.id) ||
        row.info.started_wall < run.started_wall)
      continue;
    if (found) return int64_t{0};
    found = row.id;
  }
  return found;
}

// What recover did for one dead run: its faults reverted, its drained trays returned or left drained,
// and how many of its entries stay open.
struct RunRecovered {
  std::vector<FaultId> reverted;
  std::vector<std::string> returned, left_drained;  // tray names
  int still_open = 0;
};

// Finishes the report run of a dead owner as 'aborted' and records the recovered reverts in it; its
// reason says what recover did, the trays the run's healer had drained included.
Status AbortReportRun(const LedgerRun& run, const RunRecovered& done, RecoverResult& result) {
  // The path comes from the ledger: an error looking at it (not "absent") is ReportStore::Open's to report.
  std::error_code ec;
  if (!std::filesystem::exists(run.report_db, ec) && !ec) return Status::Ok();
  RC_ASSIGN_OR_RETURN(reports::ReportStore store, reports::ReportStore::Open(run.report_db));
  RC_ASSIGN_OR_RETURN(reports::RunRow row, store.ReadRun(run.report_run));
  if (row.status != "running") return Status::Ok();
  RC_ASSIGN_OR_RETURN(std::vector<reports::EventRow> events, store.ReadEvents(run.report_run));
  const Time at = events.empty() ? Time{} : events.back().at;
  std::vector<Event> reverted;
  for (FaultId f : done.reverted) reverted.push_back({at, FaultReverted{f, "reverted by rackchaos recover"}});
  RC_RETURN_IF_ERROR(store.AppendEvents(run.report_run, reverted));
  std::string reason = "the runner (pid " + std::to_string(run.pid) + ") died; rackchaos recover reverted " +
                       std::to_string(done.reverted.size()) + " fault(s)";
  if (!done.returned.empty())
    reason += ", returned " + std::to_string(done.returned.size()) + " drained tray(s) to service" + NameTrays(done.returned);
  if (!done.left_drained.empty())
    reason += ", left " + std::to_string(done.left_drained.size()) + " drained" + NameTrays(done.left_drained);
  if (done.still_open > 0) reason += ", " + std::to_string(done.still_open) + " still open in the ledger";
  RC_RETURN_IF_ERROR(store.FinishRun(run.report_run, "aborted", ToInt(ExitCode::kRuntimeError), WallStampNow(), reason));
  ++result.runs_aborted;
  result.lines.push_back("run " + std::to_string(run.report_run) + " in " + run.report_db + ": marked aborted (" +
                         reason + ")");
  return Status::Ok();
}

}  // namespace

std::string NameTrays(const std::vector<std::string>& trays) {
  return trays.empty() ? "" : " (" + JoinCut(trays, kTraysNamed, "") + ")";
}

Result<std::vector<std::string>> ListOpen(const Ledger& ledger) {
  RC_ASSIGN_OR_RETURN(std::vector<LedgerEntry> open, ledger.OpenEntries());
  std::vector<std::string> lines;
  for (const LedgerEntry& e : open) {
    lines.push_back("entry " + std::to_string(e.id) + " (run " + std::to_string(e.run) +
                    (ledger.OwnerAlive(e.run) ? ", live" : "") + "): " + Describe(e) + ", opened " + e.opened_wall +
                    (e.note.empty() ? "" : "; note: " + e.note) + "\n    revert: " + e.revert);
  }
  return lines;
}

Result<RecoverResult> Recover(Ledger& ledger, const RecoverOptions& options) {
  // Before anything is read: a recovery that waited sees what the one before it closed.
  RC_RETURN_IF_ERROR(ledger.LockRecovery([&] {
    if (options.on_wait)
      options.on_wait("another process is recovering fault ledger " + ledger.path() +
                      " (a `rackchaos recover`, or a real run starting); waiting for it to finish");
  }));
  struct Unlock {
    Ledger& ledger;
    ~Unlock() { ledger.UnlockRecovery(); }
  } unlock{ledger};
  RecoverResult result;
  RC_ASSIGN_OR_RETURN(std::vector<LedgerEntry> open, ledger.OpenEntries());
  RC_ASSIGN_OR_RETURN(std::vector<LedgerRun> runs, ledger.UnfinishedRuns());
  std::set<int64_t> live;
  std::map<int64_t, int64_t> pids;  // by run: the tag of its expiries (ExpiryTag)
  for (const LedgerRun& r : runs) {
    if (ledger.OwnerAlive(r.id)) live.insert(r.id);
    pids[r.id] = r.pid;
  }

  // Stage 0: entries the operator gave up on are closed unreverted, all or none.
  std::map<int64_t, const LedgerEntry*> by_id;
  for (const LedgerEntry& e : open) by_id[e.id] = &e;
  for (int64_t id : options.forget) {
    auto it = by_id.find(id);
    if (it == by_id.end())
      return Status::NotFound("ledger entry " + std::to_string(id) + " is not open (see `rackchaos recover --list`)");
    if (live.count(it->second->run))
      return Status::Invalid("ledger entry " + std::to_string(id) + " belongs to a run that is still going");
  }
  std::set<int64_t> forgotten(options.forget.begin(), options.forget.end());
  for (int64_t id : forgotten) {
    const std::string note = "forgotten on request, never reverted: " +
                             (options.forget_reason.empty() ? std::string("no reason given") : options.forget_reason);
    RC_RETURN_IF_ERROR(ledger.Close(id, note));
    ++result.forgotten;
    result.lines.push_back(Describe(*by_id[id]) + ": FORGOTTEN (" + note + ")");
  }

  // Stage 1: replay every open entry of a dead owner.
  ssh::PoolOptions pool_options;
  pool_options.accept_new_host_keys = options.accept_new_host_keys;
  pool_options.connect_timeout = options.connect_timeout;
  pool_options.command_timeout = options.command_timeout;
  boost::asio::io_context io;
  ssh::SshPool pool(io, pool_options);
  std::map<int64_t, RunRecovered> done;  // by ledger run
  for (const LedgerEntry& e : open) {
    if (forgotten.count(e.id)) continue;
    if (live.count(e.run)) {
      ++result.skipped_live;
      continue;
    }
    Status s = pool.AddHosts(HostsOf(e));
    std::string why;
    Result<Replayed> replayed = !s.ok()     ? Result<Replayed>(s)
                                : e.drain() ? ReturnDrained(pool, e, &why)
                                            : Replay(pool, e, pids[e.run]);
    s = replayed.status();
    std::string note = "reverted by rackchaos recover";
    std::string line = "reverted (" + e.revert + "), verified";
    if (s.ok() && replayed->found == Found::kReturned) {
      note = "returned to service by rackchaos recover (" + why + ")";
      line = "returned to service (" + e.revert + "); " + why;
    } else if (s.ok() && replayed->found == Found::kLeftDrained) {
      note = "left drained by rackchaos recover: " + why;
      line = "LEFT DRAINED: " + why + "; return it with: " + e.revert;
    } else if (s.ok() && replayed->found == Found::kExpiryFired) {
      note = "found already reverted by its host-side expiry; closed by rackchaos recover";
      line = "already reverted on the host: its host-side expiry fired (verified; not reverted again)";
    } else if (s.ok() && replayed->found == Found::kAlreadyReverted) {
      note = "found not in effect on the host; closed by rackchaos recover";
      line = "not in effect on the host (reverted already, or never applied; verified, nothing run)";
    }
    if (s.ok() && !replayed->swept.empty()) {
      std::string files;
      for (const std::string& f : replayed->swept) files += (files.empty() ? "" : ", ") + f;
      const std::string swept = "removed " + std::to_string(replayed->swept.size()) +
                                " host-side expiry timer(s) whose arming the run never heard back from (" + files + ")";
      note += "; " + swept;
      line += "; " + swept;
      result.expiries_swept += static_cast<int>(replayed->swept.size());
    }
    if (s.ok()) s = ledger.Close(e.id, note);
    if (s.ok() && e.drain()) {
      const bool returned = replayed->found == Found::kReturned;
      ++(returned ? result.returned : result.left_drained);
      (returned ? done[e.run].returned : done[e.run].left_drained).push_back(e.target);
      result.lines.push_back(Describe(e) + ": " + line);
    } else if (s.ok()) {
      ++result.reverted;
      if (replayed->found != Found::kReverted) ++result.already_reverted;
      done[e.run].reverted.push_back(e.fault);
      result.lines.push_back(Describe(e) + ": " + line);
    } else {
      ++result.failed;
      ++done[e.run].still_open;
      (void)ledger.SetNote(e.id, "recover failed: " + s.message());
      result.lines.push_back(Describe(e) + ": STILL OPEN: " + s.ToString());
    }
  }
  if (result.skipped_live > 0)
    result.lines.push_back(std::to_string(result.skipped_live) + " open fault(s) belong to runs that are still going; left alone");

  // Stage 2: the runs of dead owners end as 'aborted' in their reports.
  for (LedgerRun run : runs) {
    if (live.count(run.id)) continue;
    Status s;
    if (run.report_run == 0) {  // killed before it numbered its report row: found by what it can be
      Result<int64_t> row = RowOfUnnumberedRun(ledger, run, runs, live);
      s = row.status();
      if (s.ok()) run.report_run = *row;
    }
    if (s.ok() && run.report_run != 0) s = AbortReportRun(run, done[run.id], result);
    if (!s.ok()) result.lines.push_back("run " + std::to_string(run.report_run) + " in " + run.report_db +
                                        ": could not mark it aborted: " + s.ToString());
    if (done[run.id].still_open == 0) RC_RETURN_IF_ERROR(ledger.FinishRun(run.id));
  }
  return result;
}

}  // namespace rackchaos::runner
