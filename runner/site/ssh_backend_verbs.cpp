// SshBackend's verbs: each goes through the action the real-mode table (injectors/real_actions.h) gives
// its verb, so a verb lights up on real hosts when a row names it and the inventory defines that
// action, and answers NotSupported otherwise. Fault verbs are on/off switches (ssh_backend.cpp) or
// value holds (ssh_backend_holds.cpp); healer verbs run their action once.
#include <cmath>

#include "core/log.h"
#include "runner/site/ssh_backend.h"

namespace rackchaos::runner {

using cluster::Verb;

Status SshBackend::SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause) {
  return Switch(Verb::kNvlinkPort, {gpu, port}, !up, cause);
}
Status SshBackend::SetNicLink(ComponentId nic, bool up, FaultId cause) {
  return Switch(Verb::kNicLink, {nic, -1}, !up, cause);
}
Status SshBackend::SetTrayPresent(ComponentId tray, bool present, FaultId cause) {
  return Switch(Verb::kTrayPresence, {tray, -1}, !present, cause);
}
Status SshBackend::SetGpuFailed(ComponentId gpu, bool failed, int xid, FaultId cause) {
  return Switch(Verb::kGpuFailure, {gpu, -1}, failed, cause, {{"xid", std::to_string(xid)}});
}
Status SshBackend::SetComponentFailed(ComponentId component, bool failed, FaultId cause) {
  return Switch(Verb::kComponentFailure, {component, -1}, failed, cause);
}
Status SshBackend::SetRegionDown(ComponentId region, bool down, FaultId cause) {
  return Switch(Verb::kRegionOutage, {region, -1}, down, cause);
}

// Through the table like every verb: refused in its words while no row carries it out (the default
// refusal of cluster/backend.h would not say where a row would go).
Status SshBackend::CrashProcesses(ComponentId gpu, FaultId) { return Once(Verb::kProcessCrash, {gpu, -1}, {}); }

Status SshBackend::SetLinkBandwidth(ComponentId link, int port, double fraction, FaultId cause) {
  const cluster::Target t{link, port};
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kLinkBandwidth));
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, a->name, t));
  // The rate tc takes: a share of the line rate, the tray's `line_rate` var when the site sets one.
  double line_bits = topo_.model().nic_gbit_per_s * 1e9;
  if (auto it = b.values.find("line_rate"); it != b.values.end()) {
    RC_ASSIGN_OR_RETURN(line_bits, ParseBitRate(it->second));
  }
  return Switch(Verb::kLinkBandwidth, t, true, cause,
                {{"bandwidth", Number(fraction * 100)},
                 {"rate", std::to_string(std::max<int64_t>(1, std::llround(line_bits * fraction / 1000))) + "kbit"}});
}

Result<double> SshBackend::GetPowerCap(ComponentId gpu) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kPowerCap));
  RC_ASSIGN_OR_RETURN(double wire, ReadValue(a->name, {gpu, -1}));
  return wire / a->wire_scale;
}
Status SshBackend::SetPowerCap(ComponentId gpu, double watts, FaultId cause) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kPowerCap));
  return SetValue(a->name, {gpu, -1}, watts, cause);
}
Result<double> SshBackend::GetValveOpening(ComponentId valve) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kValve));
  RC_ASSIGN_OR_RETURN(double wire, ReadValue(a->name, {valve, -1}));
  return wire / a->wire_scale;
}
Status SshBackend::SetValveOpening(ComponentId valve, double fraction, FaultId cause) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kValve));
  return SetValue(a->name, {valve, -1}, fraction, cause);
}
Status SshBackend::SetStorageRead(ComponentId tray, double fraction, FaultId cause) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kStorageRead));
  return SetValue(a->name, {tray, -1}, fraction, cause);
}
Status SshBackend::SetStoreRate(ComponentId store, double fraction, FaultId cause) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kStoreRate));
  return SetValue(a->name, {store, -1}, fraction, cause);
}

Result<ssh::CommandResult> SshBackend::RunHealerAction(const std::string& action, const TargetBinding& b,
                                                       ComponentId component) {
  RC_ASSIGN_OR_RETURN(std::string cmd, Render(inv_.actions.at(action).apply, b.host, b.values));
  return Run(action, b.host, component, cmd);
}

Result<SshBackend::Ran> SshBackend::RunOnce(Verb verb, const cluster::Target& t,
                                            const std::map<std::string, std::string>& extra) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(verb));
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, a->name, t));
  for (const auto& [k, v] : extra) b.values[k] = v;
  const ComponentId component = a->target == injectors::RealTarget::kSite ? kNoComponent : t.component;
  RC_ASSIGN_OR_RETURN(std::string cmd, Render(inv_.actions.at(a->name).apply, b.host, b.values));
  Ran ran{b.host, a->name, pool_.RunAll({b.host}, cmd).at(0)};
  (void)Record(a->name, b.host, component, cmd, ran.result, 0);  // the ssh.<action> event; Outcome says why
  return ran;
}

Status SshBackend::Outcome(const Ran& ran) {
  const ssh::CommandResult& r = ran.result;
  if (!r.status.ok()) return r.status.WithContext(ran.action + " on " + ran.host);
  if (r.exit_status != 0)
    return Status::Unavailable(ran.host + ": " + ran.action + " exited " + std::to_string(r.exit_status) + ": " +
                               FirstLine(r.err.empty() ? r.out : r.err));
  return Status::Ok();
}

Status SshBackend::Once(Verb verb, const cluster::Target& t, const std::map<std::string, std::string>& extra) {
  RC_ASSIGN_OR_RETURN(Ran ran, RunOnce(verb, t, extra));
  return Outcome(ran);
}

Status SshBackend::Drain(ComponentId tray, const std::string& reason) {
  // One line of plain text: Slurm keeps the reason, and a template value may not span lines.
  const std::map<std::string, std::string> extra{{"reason", FirstLine(reason)}};
  // Written down before it runs, as a fault is: a run that dies holding the tray drained leaves
  // `rackchaos recover` the way back (the diagnostic, then resume).
  RC_ASSIGN_OR_RETURN(const int64_t entry, RecordDrain(tray, extra));
  Result<Ran> ran = RunOnce(Verb::kDrain, {tray, -1}, extra);
  const Status s = ran.ok() ? Outcome(*ran) : ran.status();
  if (s.ok() || entry == 0) return s;
  if (ran.ok() && !ran->result.status.ok()) {
    // No answer: the drain may have run. The entry stays for recover, which diagnoses and returns the tray.
    (void)options_.ledger->SetNote(entry, std::string(kDrainUnanswered) + " (" + s.message() +
                                              "): whether the tray left service is unknown");
  } else {
    // It did not happen (the command said so, or never ran): there is nothing to return, by the run or by
    // recover, and nothing to report as returned.
    CloseDrain(tray, "never drained, nothing to return: " + s.message());
  }
  return s;
}
Status SshBackend::Resume(ComponentId tray) {
  Status s = Once(Verb::kResume, {tray, -1}, {});
  if (s.ok()) CloseDrain(tray, "returned to service by the run");
  return s;
}

Result<int64_t> SshBackend::RecordDrain(ComponentId tray, const std::map<std::string, std::string>& extra) {
  auto resume = ActionOf(Verb::kResume);
  if (!options_.ledger || drains_.count(tray) || !resume.ok()) return int64_t{0};
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* drain, ActionOf(Verb::kDrain));
  RC_ASSIGN_OR_RETURN(TargetBinding d, BindTarget(inv_, topo_, drain->name, {tray, -1}));
  for (const auto& [k, v] : extra) d.values[k] = v;
  RC_ASSIGN_OR_RETURN(TargetBinding r, BindTarget(inv_, topo_, (*resume)->name, {tray, -1}));
  LedgerEntry e;
  e.run = options_.ledger_run;
  e.action = drain->name;
  e.target = topo_.at(tray).name;
  e.host = *HostOf(inv_, r.host);
  RC_ASSIGN_OR_RETURN(e.apply, Render(inv_.actions.at(drain->name).apply, d.host, d.values));
  RC_ASSIGN_OR_RETURN(e.revert, Render(inv_.actions.at((*resume)->name).apply, r.host, r.values));
  // The diagnostic is the entry's check: its verify where it runs on resume's host, else with its own host
  // (a run_on head node on either side), so recover runs it where the run would have.
  if (auto diag = ActionOf(Verb::kDiagnostic); diag.ok()) {
    auto b = BindTarget(inv_, topo_, (*diag)->name, {tray, -1});
    if (b.ok()) {
      RC_ASSIGN_OR_RETURN(std::string check, Render(inv_.actions.at((*diag)->name).apply, b->host, b->values));
      if (b->host == r.host) {
        e.verify = std::move(check);
      } else {
        e.diagnostic = std::move(check);
        e.diagnostic_host = *HostOf(inv_, b->host);
      }
    }
  }
  RC_ASSIGN_OR_RETURN(const int64_t entry, options_.ledger->Record(e));
  drains_[tray] = entry;
  return entry;
}

void SshBackend::CloseDrain(ComponentId tray, const std::string& note) {
  auto it = drains_.find(tray);
  if (it == drains_.end()) return;
  if (Status s = options_.ledger->Close(it->second, note); !s.ok()) spdlog::warn("ledger: {}", s.ToString());
  drains_.erase(it);
}
Status SshBackend::ResetGpu(ComponentId gpu) { return Once(Verb::kGpuReset, {gpu, -1}, {}); }
Status SshBackend::RebootNode(ComponentId tray) { return Once(Verb::kReboot, {tray, -1}, {}); }

Status SshBackend::RequeueJob(JobId job, const std::string& reason) {
  auto name = options_.job_names.find(job);
  if (name == options_.job_names.end()) return Status::NotFound("job " + std::to_string(job) + " is not in the plan");
  return Once(Verb::kRequeueJob, {kNoComponent, -1}, {{"job", name->second}, {"reason", FirstLine(reason)}});
}

Status SshBackend::RunDiagnostic(ComponentId tray) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(Verb::kDiagnostic));
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, a->name, {tray, -1}));
  auto r = RunHealerAction(a->name, b, tray);
  cluster::DiagnosticResult result{tray, r.ok() && r->exit_status == 0,
                                   r.ok() ? FirstLine(r->out.empty() ? r->err : r->out) : r.status().ToString()};
  // Delivered later, as a finished diagnostic is in the simulator: never inside the healer's own call.
  clock_.CallAfter(Duration{}, [this, result] { Publish({clock_.Now(), result}); });
  return Status::Ok();
}

}  // namespace rackchaos::runner
