// SshBackend: the Backend seam on real hosts, running a site inventory's command templates over SSH.
//
// Each verb maps to its action in the real-mode action table (injectors/real_actions.h); a verb whose
// action the table or the inventory lacks answers NotSupported (validation checks fault verbs once per
// plan with BindTarget), so a new real-mode action is a row of that table, not code here. Turning a
// fault on renders the action's apply, revert and verify commands for the target, writes a ledger
// entry with the revert command (before anything runs), runs apply on the target's host, verifies it,
// and (for faults the run says end on their own) arms a host-side expiry: a detached
// `sleep N && revert` on the host, so the fault ends even if this process and its machine are gone.
// Turning it off cancels the expiry, runs revert, verifies that, and closes the entry. Value actions
// (power cap, valve) read their baseline with the `baseline` template; apply and revert are verified
// by reading it back. A fault that lands is ground truth for the report (a PhysicsChanged on its
// target, and on the GPUs a NIC serves), as the simulator records it; never shown to the healer.
//
// Several faults may hold one value action's target, as in the simulator (cluster/holds.h): each is a
// hold with its own ledger entry, whose revert restores the baseline read before the first hold. The
// lowest value held is the one applied; Release of one hold applies the lowest of the others (nothing
// runs if that is the value already applied), and the last release restores the baseline. Nothing is
// inferred from a value: a fault setting the baseline holds like any other. An on/off action
// (link_down, link_degrade, ...) takes one fault per target: a second is refused while the first holds.
//
// Healer verbs run the inventory's `healer:` actions once: drain/resume/gpu_reset on the tray's node,
// requeue_job with the plan's job name, diagnostic whose exit status (0 = passed) and first output line
// come back as a DiagnosticResult observation, delivered from a clock callback. They are the site's own
// state changes, not faults, but a drain is written to the ledger before it runs and closed by the
// resume (LedgerEntry::drain()), so that a run killed while a tray is drained leaves `rackchaos recover`
// the way back (recover.h); a drain that fails closes it (the tray never left service: nothing to
// return), one that gets no answer leaves it open with a note (kDrainUnanswered).
//
// A run's lifecycle (cluster/backend.h; ssh_backend_run.cpp): StartRun reverts what earlier runs left
// open in the fault ledger (runner/site/recover.h), registers this run there, opens every session the
// run needs with its host key checked and checks the fault hosts' clocks and bash
// (runner/site/clock_check.h); nothing is applied if one fails. The observation source is an
// SshMonitor (runner/site/ssh_monitor.h) the backend owns; the plan's jobs start with start_job and
// stop with stop_job. Fault groups (ssh_backend_arm.cpp) are staged with their ledger entries, armed on
// their hosts the group's stage lead ahead and landed at one wall-clock instant on the hosts' own clocks.
//
// Every remote command is recorded as an ActionTaken event ("ssh.apply", "ssh.verify", "ssh.revert",
// "ssh.baseline", "ssh.expiry", "ssh.cancel_expiry", for armed faults "ssh.arm", "ssh.land",
// "ssh.disarm", and "ssh.clock" at start) with host, command, exit status and time taken. A failed
// command fails only that verb; other hosts are unaffected.
//
// Threading: call on the thread that runs the pool's io_context, outside its handlers (WallClock
// callbacks qualify): commands run through SshPool::RunAll. Borrowed references must outlive it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "cluster/backend.h"
#include "core/clock.h"
#include "core/event.h"
#include "healer/metrics.h"
#include "injectors/real_actions.h"
#include "runner/site/inventory.h"
#include "runner/site/ledger.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::runner {

// The compute trays a fault on `part` can slow or stop a job on, as the topology places the part: the
// trays under it (a tray and every part inside it; a rack, an NVLink domain, a region); for another
// part of a rack (a CDU, a switch tray, a power shelf) every tray of its NVLink domain; nullopt for a
// part outside the racks (a leaf or spine switch, a checkpoint store), which can trouble any job.
std::optional<std::span<const ComponentId>> TraysReached(const cluster::Topology& topo, ComponentId part);

class SshMonitor;
struct HostClock;

struct SshBackendOptions {
  Ledger* ledger = nullptr;  // a caller's ledger (tests); null and no ledger_path: no ledger
  int64_t ledger_run = 0;
  // Faults that end on their own after this long: they get a host-side expiry at end + expiry grace.
  std::map<FaultId, Duration> durations;
  // The plan's job names ({job} of requeue_job); StartJobs adds them too.
  std::map<JobId, std::string> job_names;
  // A run's start-up (StartRun). `ledger_path` empty: no ledger is opened and nothing recovered.
  std::string ledger_path;
  bool accept_new_host_keys = false;
  std::vector<std::string> hosts;        // inventory hosts the run needs: connected before the first fault
  std::vector<std::string> fault_hosts;  // those the faults land on: their clocks are checked
};

class SshBackend : public cluster::Backend {
 public:
  SshBackend(const Inventory& inventory, const cluster::Topology& topology, ssh::SshPool& pool, Clock& clock,
             EventSink& events, SshBackendOptions options = {});
  ~SshBackend() override;

  std::string Name() const override { return "ssh"; }
  bool Supports(cluster::Verb verb) const override;

  // --- fault verbs (ssh_backend_verbs.cpp), each through its action in the table
  Status SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause) override;
  Status SetNicLink(ComponentId nic, bool up, FaultId cause) override;
  // link_degrade: {bandwidth} in percent, {rate} in kbit of the line rate (the model's NIC rate, or the
  // tray's `line_rate` var such as 100mbit), until Release(kLinkBandwidth).
  Status SetLinkBandwidth(ComponentId link, int port, double fraction, FaultId cause) override;
  Result<double> GetPowerCap(ComponentId gpu) override;
  Status SetPowerCap(ComponentId gpu, double watts, FaultId cause) override;
  Result<double> GetValveOpening(ComponentId valve) override;
  Status SetValveOpening(ComponentId valve, double fraction, FaultId cause) override;
  Status SetStorageRead(ComponentId tray, double fraction, FaultId cause) override;
  Status SetStoreRate(ComponentId store, double fraction, FaultId cause) override;
  Status SetTrayPresent(ComponentId tray, bool present, FaultId cause) override;
  Status SetGpuFailed(ComponentId gpu, bool failed, int xid, FaultId cause) override;       // {xid}
  Status SetComponentFailed(ComponentId component, bool failed, FaultId cause) override;
  Status SetRegionDown(ComponentId region, bool down, FaultId cause) override;
  // A one-shot fault (nothing to revert): its action runs once, as a healer action does.
  Status CrashProcesses(ComponentId gpu, FaultId cause) override;
  // Ends `cause`'s hold (see above); Ok when it holds nothing there. NotSupported for a state the
  // inventory has no action for.
  Status Release(cluster::Held what, cluster::Target target, FaultId cause) override;

  // --- healer verbs (ssh_backend_verbs.cpp)
  Status Drain(ComponentId tray, const std::string& reason) override;  // {reason}: its first line
  Status Resume(ComponentId tray) override;
  Status ResetGpu(ComponentId gpu) override;
  Status RebootNode(ComponentId tray) override;
  Status RequeueJob(JobId job, const std::string& reason) override;  // {job} {reason}
  Status RunDiagnostic(ComponentId tray) override;
  void Subscribe(cluster::ObservationSink* sink) override { sinks_.push_back(sink); }

  // --- the run's lifecycle (ssh_backend_run.cpp; cluster/backend.h gives the order)
  // Serials: the inventory's tray serials, else "<site>-<name>".
  std::string SerialPrefix() const override;
  std::string_view SerialOf(ComponentId id) const override;
  // True when the inventory can observe trays (healer.observe_tray): the healer and the jobs run.
  bool Observes() const override;
  // Registers the run in the fault ledger (ledger_path), before the caller writes its report row to
  // `report_db`: a run killed once that row exists is then one `rackchaos recover` finds and marks
  // aborted. StartRun numbers it (and does this itself when it was not called). Never fails: a failure
  // is StartRun's to return, once the run is on record.
  void PrepareRun(const std::string& report_db);
  // The run's fault ledger (LedgerIdentity) and its id there, for the report row (reports::RunInfo::ledger,
  // ledger_run): "" and 0 until PrepareRun registered it, or when it could not.
  std::string LedgerOfRun() const;
  int64_t LedgerRun() const { return ledger_ ? options_.ledger_run : 0; }
  Status StartRun(const cluster::RunContext& run) override;
  // start_job for each job when Observes(), else a warning that only the faults run.
  Status StartJobs(const std::vector<cluster::JobConfig>& jobs) override;
  void StartObserving() override;
  void StopObserving() override;
  Status StopJobs(const std::vector<cluster::JobConfig>& jobs) override;
  // Resumes the mapped trays among `trays`, each recorded as a "resume" action; the first failure.
  Status ResumeHeld(const std::vector<ComponentId>& trays) override;
  size_t StillApplied() const override { return open_.size(); }
  // True for a fault whose revert failed here and that is no longer open: a retry (the host answered
  // again) or the run's last attempt reverted and verified every target of it.
  bool RevertedLate(FaultId fault) const override;
  // Stops the monitor; closes this run in the ledger when nothing it applied is left open.
  Status Shutdown() override;

  // --- fault groups (ssh_backend_arm.cpp): the Backend's group verbs over the arming steps below.
  cluster::GroupLeads Leads() const override { return {inv_.arm_lead, inv_.fire_lead}; }
  bool StageGroup(Time at) override;
  void DropStaged(FaultId fault, const std::string& why) override { Unstage(fault, why); }
  std::map<FaultId, Status> SealGroup() override { return ArmStaged(); }
  std::map<FaultId, Status> CommitGroup(Time at) override { return FireArmed(UnixMicrosAt(at)); }
  void AbandonGroup(const std::string& why) override { Disarm(why); }
  Status UndoFault(FaultId fault, const std::string& why) override { return RevertFaultTargets(fault, why); }
  // Reverts every fault still applied through this backend (a safety net after the injectors' own
  // reverts). Returns the first failure; every target is tried.
  Status RevertRemaining(const std::string& why) override;

  // Hands `obs` to every subscriber, in subscription order.
  void Publish(const cluster::Observation& obs);
  // Renders `tmpl` for `host` with `values`, the host's env exported first.
  Result<std::string> Render(const std::string& tmpl, const std::string& host,
                             const std::map<std::string, std::string>& values) const;
  // Runs a healer action once ("healer.<action>" ActionTaken); the result, or the transport failure.
  Result<ssh::CommandResult> RunHealerAction(const std::string& action, const TargetBinding& b,
                                             ComponentId component);

  // Arming, the steps under the group verbs. Between BeginStaging() and ArmStaged() the fault verbs do
  // everything but run the apply command: render the commands, read baselines, write the ledger entry
  // (revert command; deadline counted from `until_landing` from now) and queue the apply.
  void BeginStaging(Duration until_landing);
  // Forgets the staged applies of `fault` (staging it failed part-way): their entries close unapplied.
  void Unstage(FaultId fault, const std::string& why);
  // Ends staging and starts every staged apply on its host, gated (SshPool::ArmEach): nothing runs
  // until FireArmed. Returns the faults that could not be armed, and why; their entries close (a
  // gated command that was never fired cannot have run). An "ssh.arm" action per apply.
  std::map<FaultId, Status> ArmStaged();
  bool armed() const { return armed_ != nullptr; }
  // Lands the armed applies at Unix time `unix_us` on every host (SshPool::FireAt), then checks
  // each one as an unarmed apply is checked (exit status, verify, host-side expiry; undone when it
  // failed). Returns the faults that failed, and why.
  std::map<FaultId, Status> FireArmed(int64_t unix_us);
  // Ends the armed applies without running them: the entries of those that exited 125 (unrun)
  // close; any other is reverted, since it may have run. An "ssh.disarm" action per apply.
  void Disarm(const std::string& why);
  // Reverts every target `fault` still holds; the first failure (every target is tried).
  Status RevertFaultTargets(FaultId fault, const std::string& why);
  // How many faults are applied through this backend now.
  size_t applied() const { return open_.size(); }
  // A fault that landed here and where it can trouble a job (TraysReached), for the report's guess at
  // what a job's trouble is due to (SshMonitor).
  struct Landing {
    FaultId fault = kNoFault;
    Time at{};                       // when its first target landed
    std::optional<Time> ended;       // when its last target was reverted (none while one holds)
    bool everywhere = false;         // a part outside the racks (the fabric, a store): any job
    std::vector<ComponentId> trays;  // else the trays its targets reach, sorted and unique
  };
  // The faults landed so far, the last landed last (a fault that lands again moves to the end).
  const std::vector<Landing>& landings() const { return landings_; }
  // Whether `fault` still holds a target here (applied, or its revert not yet done).
  bool Holds(FaultId fault) const;

  // The HostSpec with the inventory's fields for `host`.
  static std::optional<ssh::HostSpec> HostOf(const Inventory& inventory, const std::string& host);

 private:
  struct Open {
    FaultId fault = kNoFault;
    std::string host;
    std::string action;
    cluster::Target target;
    double held = 0;  // a value action's hold: the value this fault asked for, in wire units
    std::string revert, verify, readback;
    std::optional<double> expect;
    int64_t ledger_entry = 0;
    std::string expiry_token;
    int64_t expiry_pid = 0;
    // An expiry armed without an answer (token unknown): its tag, until a sweep on the host removed it.
    std::string expiry_tag;
    // What ran on the host is unknown (an apply or revert whose answer never came): the revert looks
    // whether the fault is in effect before running.
    bool uncertain = false;
  };
  // Cancels `o`'s host-side expiry; true when none is left armed (the token is then forgotten).
  bool CancelExpiry(Open& o);
  // Whether `o`'s fault is in effect on its host (verify, or the value read back); true when the
  // action has no way to tell.
  Result<bool> InEffect(const Open& o);

  // The table's action for `verb` when this inventory defines it; else NotSupported, naming it.
  Result<const injectors::RealAction*> ActionOf(cluster::Verb verb) const;
  // Turns the fault on (apply = true) or off for an on/off action, `extra` added to its placeholders.
  Status Switch(cluster::Verb verb, const cluster::Target& t, bool apply, FaultId cause,
                const std::map<std::string, std::string>& extra = {});
  // Runs a healer action once on `t`'s host (or the site's run_on host); OK when it exits 0.
  Status Once(cluster::Verb verb, const cluster::Target& t, const std::map<std::string, std::string>& extra);
  // What one run of a healer action got: where it ran, and the command's result (its status not OK when
  // no answer came). RunOnce fails only when nothing was run (no such action, a target it cannot bind).
  struct Ran {
    std::string host, action;
    ssh::CommandResult result;
  };
  Result<Ran> RunOnce(cluster::Verb verb, const cluster::Target& t, const std::map<std::string, std::string>& extra);
  // OK when `ran` answered with exit 0; otherwise why, as Once says it.
  static Status Outcome(const Ran& ran);
  // Writes a drain of `tray` to the ledger (LedgerEntry::drain(): resume as its revert, the diagnostic as
  // its verify when it runs on resume's host, else with its own host) unless one is open; nothing without a ledger or a resume
  // action. Returns the new entry's id, 0 when none was written. CloseDrain closes it once the tray is
  // back in service, or when the drain failed (it never left service).
  Result<int64_t> RecordDrain(ComponentId tray, const std::map<std::string, std::string>& extra);
  void CloseDrain(ComponentId tray, const std::string& note);
  // The Unix time (microseconds) at which the clock will read `t`, and the reverse.
  int64_t UnixMicrosAt(Time t) const;
  Time TimeAtUnix(int64_t unix_us) const;
  // Ground truth of a fault that landed at `at` on `o`'s target (PhysicsChanged events).
  void RecordLanded(const Open& o, Time at);
  // Places `cause`'s hold on a value action's target at `value` (model units): applies the lowest value
  // held, with the baseline read before the first hold (kept by the others) as {baseline}.
  Status SetValue(const std::string& action, const cluster::Target& t, double value, FaultId cause);
  Result<double> ReadValue(const std::string& action, const cluster::Target& t);
  // The open_ key of a fault on a target: per fault for value actions (holds), else per target
  // (ssh_backend_holds.cpp, as SetValue, Release and the value verbs).
  std::string OpenKey(const std::string& action, const cluster::Target& t, FaultId cause) const;
  // ssh_backend_holds.cpp: the lowest value held on a value action's target by faults other than the
  // one open under `except` (nullopt: none, or not a value action).
  std::optional<double> LowestHeld(const std::string& action, const cluster::Target& t,
                                   const std::string& except) const;
  // Applies `wire` to `o`'s target (its apply command, read back) for the holds left when `o` ends;
  // RenderHeld: that apply command.
  Status ApplyHeld(const Open& o, double wire);
  Result<std::string> RenderHeld(const Open& o, double wire) const;
  static std::string Number(double v);  // a value in a command or message: %.6g
 public:
  static std::string FirstLine(const std::string& s);  // its first line, at most 200 characters

 private:

  // Opens `key` (OpenKey) and applies; `held`: a value action's own value (Open::held).
  Status ApplyFault(const std::string& key, const std::string& action, const cluster::Target& t,
                    const TargetBinding& b, std::map<std::string, std::string> values,
                    std::optional<double> expect_applied, std::optional<double> baseline, FaultId cause,
                    double held = 0);
  // After the apply command ran: its exit status, then verify and the host-side expiry (or the undo);
  // a fault that landed is recorded as landed at `at`.
  Status Landed(const std::string& key, const Result<ssh::CommandResult>& applied,
                std::optional<double> expect_applied, FaultId cause, Time at);
  // Ends the fault open under `key`: restores the baseline, or for a hold others share on its target
  // applies the lowest value they hold.
  Status RevertFault(const std::string& key, const std::string& why);
  // Records when the armed applies started on their hosts ("ssh.land": spread and delay after the
  // instant, by the hosts' clocks); ok = false when some did not report it.
  void RecordLanding(const std::vector<ssh::CommandResult>& results, int64_t unix_us);
  // Closes the entry of a fault target whose apply never ran, and forgets it.
  void CloseUnapplied(const std::string& key, const std::string& why);
  // Runs start_job or stop_job for every job; the jobs that failed, with why ("" when none did).
  std::string JobActions(const char* action, const std::vector<cluster::JobConfig>& jobs);
  // Records the largest clock offset as an "ssh.clock" action, and one with ok = false per host that is off.
  void RecordClocks(const std::vector<HostClock>& clocks);

  // Runs one command on `host` and records an ActionTaken (ok = it ran and exited `expected_exit`).
  // Fails only when the command did not run to its end (transport); the exit status is the caller's.
  Result<ssh::CommandResult> Run(const std::string& step, const std::string& host, ComponentId component,
                                 const std::string& command, int expected_exit = 0);
  // Records what `r` (of `command`) did as an "ssh.<step>" ActionTaken; fails when it did not run to its end.
  Result<ssh::CommandResult> Record(const std::string& step, const std::string& host, ComponentId component,
                                    const std::string& command, const ssh::CommandResult& r, int expected_exit);
  Status Verify(const std::string& host, ComponentId component, const std::string& verify, bool want_applied);
  Status VerifyValue(const std::string& host, ComponentId component, const std::string& readback, double expect);
  std::string Key(const std::string& action, const cluster::Target& t) const;

  const Inventory& inv_;
  const cluster::Topology& topo_;
  ssh::SshPool& pool_;
  Clock& clock_;
  EventSink& events_;
  SshBackendOptions options_;
  std::vector<cluster::ObservationSink*> sinks_;
  std::map<std::string, Open> open_;          // by OpenKey()
  std::map<ComponentId, int64_t> drains_;     // trays this run drained and has not returned: ledger entries
  std::map<std::string, double> baselines_;   // last value read per Key()
  // Arming: applies queued while staging, then armed (parallel to armed_->names).
  struct Staged {
    std::string key, host, apply;
    ComponentId component = kNoComponent;
    std::optional<double> expect_applied;
    FaultId fault = kNoFault;
  };
  bool staging_ = false;
  Duration until_landing_{};
  std::vector<Staged> staged_;
  std::shared_ptr<ssh::SshPool::Armed> armed_;
  std::vector<Landing> landings_;
  // The run (ssh_backend_run.cpp): the ledger StartRun opened, the plan's jobs, the monitor.
  std::unique_ptr<Ledger> ledger_;
  Status prepare_;  // PrepareRun's failure, returned by StartRun
  std::vector<healer::JobInfo> jobs_;
  bool jobs_started_ = false;
  std::unique_ptr<SshMonitor> monitor_;
  // Reverts that failed because the host did not answer: retried every kRevertRetry from a clock
  // callback until the host answers (HostLost), until RevertRemaining makes the run's last attempt.
  static constexpr Duration kRevertRetry = Duration::Seconds(2);
  void HostLost(const std::string& key);
  void CancelRetries();
  std::map<std::string, TimerId> retries_;  // by OpenKey()
  std::set<std::string> lost_;             // keys whose host was reported lost (once each)
  std::set<FaultId> revert_failed_;        // faults a revert of which failed (RevertedLate)
  int64_t expiries_ = 0;                   // expiries armed (their tags' count without a ledger)
  bool stopping_ = false;
};

// Parses the first number in `text` ("1200.00 W" -> 1200); InvalidArgument when there is none.
Result<double> ParseFirstNumber(const std::string& text);
// A rate as tc writes it (100mbit, 400gbit, 2500kbit, 9600bit) in bits per second.
Result<double> ParseBitRate(const std::string& text);
// What ties a host-side expiry's token file to its ledger entry: "<runner pid>-<ledger run>-<entry>" (with
// no ledger, a count of this runner's expiries stands for the entry). `rackchaos recover` makes the same
// from the ledger (ledger_runs.pid, the entry's run and id).
std::string ExpiryTag(int64_t pid, int64_t run, int64_t entry);
// The command that arms a host-side expiry: after `delay` runs `revert` unless the token file it
// creates, "${TMPDIR:-/tmp}/rackchaos-expiry.<tag>.XXXXXX", is gone by then; prints "<token> <pid>".
std::string ExpiryCommand(Duration delay, const std::string& revert, const std::string& tag);
// The command that cancels an armed expiry (idempotent).
std::string CancelExpiryCommand(const std::string& token, int64_t pid);
// The command that finds the expiries of `tag` on a host whose arming answer never came back (the host
// or its network died while it was armed, so the token and pid are unknown), removes their tokens (which
// disarms them) and kills their timers; prints each token it removed, one a line. Idempotent.
std::string SweepExpiryCommand(const std::string& tag);

}  // namespace rackchaos::runner
