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

Status SshBackend::Once(Verb verb, const cluster::Target& t, const std::map<std::string, std::string>& extra) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(verb));
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, a->name, t));
  for (const auto& [k, v] : extra) b.values[k] = v;
  const ComponentId component = a->target == injectors::RealTarget::kSite ? kNoComponent : t.component;
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, RunHealerAction(a->name, b, component));
  if (r.exit_status != 0)
    return Status::Unavailable(b.host + ": " + a->name + " exited " + std::to_string(r.exit_status) + ": " +
                               FirstLine(r.err.empty() ? r.out : r.err));
  return Status::Ok();
}

Status SshBackend::Drain(ComponentId tray, const std::string& reason) {
  // One line of plain text: Slurm keeps the reason, and a template value may not span lines.
  const std::map<std::string, std::string> extra{{"reason", FirstLine(reason)}};
  // Written down before it runs, as a fault is: a run that dies holding the tray drained leaves
  // `rackchaos recover` the way back (the diagnostic, then resume).
  RC_RETURN_IF_ERROR(RecordDrain(tray, extra));
  return Once(Verb::kDrain, {tray, -1}, extra);
}
Status SshBackend::Resume(ComponentId tray) {
  Status s = Once(Verb::kResume, {tray, -1}, {});
  if (s.ok()) CloseDrain(tray, "returned to service by the run");
  return s;
}

Status SshBackend::RecordDrain(ComponentId tray, const std::map<std::string, std::string>& extra) {
  auto resume = ActionOf(Verb::kResume);
  if (!options_.ledger || drains_.count(tray) || !resume.ok()) return Status::Ok();
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
  // An entry has one host: the diagnostic is its check only where it runs on resume's host.
  if (auto diag = ActionOf(Verb::kDiagnostic); diag.ok()) {
    auto b = BindTarget(inv_, topo_, (*diag)->name, {tray, -1});
    if (b.ok() && b->host == r.host) {
      RC_ASSIGN_OR_RETURN(e.verify, Render(inv_.actions.at((*diag)->name).apply, b->host, b->values));
    }
  }
  RC_ASSIGN_OR_RETURN(const int64_t entry, options_.ledger->Record(e));
  drains_[tray] = entry;
  return Status::Ok();
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
