#include "runner/site/ssh_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/log.h"
#include "core/wall_time.h"
#include "runner/ssh/command_template.h"

namespace rackchaos::runner {
namespace {

bool Near(double a, double b) { return std::fabs(a - b) <= std::max(1.0, 0.01 * std::fabs(b)); }


std::string Abbrev(const std::string& s) { return s.size() > 400 ? s.substr(0, 400) + "..." : s; }

}  // namespace

std::string SshBackend::FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

std::string SshBackend::Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

Result<double> ParseFirstNumber(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const bool sign = (text[i] == '-' || text[i] == '+') && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (!sign && !std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    char* end = nullptr;
    double v = std::strtod(text.c_str() + i, &end);
    if (end != text.c_str() + i && std::isfinite(v)) return v;
  }
  return Status::Invalid("no number in \"" + SshBackend::FirstLine(text) + "\"");
}

Result<double> ParseBitRate(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  const double scale = unit == "bit" ? 1 : unit == "kbit" ? 1e3 : unit == "mbit" ? 1e6 : unit == "gbit" ? 1e9 : 0;
  if (end == text.c_str() || !(v > 0) || !std::isfinite(v) || scale == 0)
    return Status::Invalid("line_rate '" + text + "' is not a rate; write e.g. 100mbit, 400gbit (units bit, kbit, "
                           "mbit, gbit as tc takes them)");
  return v * scale;
}

std::string ExpiryTag(int64_t pid, int64_t run, int64_t entry) {
  return std::to_string(pid) + "-" + std::to_string(run) + "-" + std::to_string(entry);
}

std::string ExpiryCommand(Duration delay, const std::string& revert, const std::string& tag) {
  const int64_t seconds = std::max<int64_t>(1, (delay.us + 999999) / 1000000);
  // The token file is the expiry's "still armed" flag: cancelling removes it, and the timer only
  // reverts if it can remove it itself, so a late timer never undoes a later fault on the target.
  const std::string script =
      "sleep " + std::to_string(seconds) + "; rm -- \"$1\" 2>/dev/null || exit 0; " + revert;
  return "t=$(mktemp \"${TMPDIR:-/tmp}/rackchaos-expiry." + tag + ".XXXXXX\") || exit 1; nohup sh -c " +
         ssh::ShellQuote(script) +
         " rackchaos-expiry \"$t\" >/dev/null 2>&1 </dev/null & echo \"$t $!\"";
}

std::string CancelExpiryCommand(const std::string& token, int64_t pid) {
  std::string cmd = "rm -f -- " + ssh::ShellQuote(token) + ";";
  if (pid > 0) cmd += " kill " + std::to_string(pid) + " 2>/dev/null;";
  return cmd + " true";
}

std::string SweepExpiryCommand(const std::string& tag) {
  // The timer's command line ends "rackchaos-expiry <token>" (ExpiryCommand); the token removed first,
  // so a timer that pkill misses (no procps) wakes, fails to remove it and exits without reverting.
  return "for t in \"${TMPDIR:-/tmp}\"/rackchaos-expiry." + tag +
         ".??????; do [ -e \"$t\" ] || continue; rm -f -- \"$t\"; "
         "pkill -f -- \"rackchaos-expiry $t\\$\" 2>/dev/null; echo \"$t\"; done; true";
}


std::optional<ssh::HostSpec> SshBackend::HostOf(const Inventory& inventory, const std::string& host) {
  auto it = inventory.hosts.find(host);
  if (it == inventory.hosts.end()) return std::nullopt;
  return it->second.spec;
}

bool SshBackend::Supports(cluster::Verb verb) const { return ActionOf(verb).ok(); }

Result<const injectors::RealAction*> SshBackend::ActionOf(cluster::Verb verb) const {
  const injectors::RealAction* a = injectors::RealActionFor(verb);
  if (!a)
    return Status::NotSupported(std::string("no real-mode action carries out the '") + cluster::VerbName(verb) +
                                "' verb (injectors/real_actions.cpp)");
  if (!inv_.actions.count(a->name))
    return Status::NotSupported("site inventory " + inv_.path + " defines no " + (a->healer ? "healer." : "injectors.") +
                                a->name + " command" + (a->healer ? "" : "s"));
  return a;
}

std::string SshBackend::Key(const std::string& action, const cluster::Target& t) const {
  return action + " " + topo_.TargetName(t);
}

Result<std::string> SshBackend::Render(const std::string& tmpl, const std::string& host,
                                       const std::map<std::string, std::string>& values) const {
  RC_ASSIGN_OR_RETURN(std::string command, ssh::RenderTemplate(tmpl, values));
  std::string prefix;
  for (const auto& [name, value] : inv_.hosts.at(host).env) {
    RC_RETURN_IF_ERROR(ssh::ValidateTemplateValue(name, value));
    prefix += (prefix.empty() ? "export " : " ") + name + "=" + ssh::ShellQuote(value);
  }
  return prefix.empty() ? command : prefix + "; " + command;
}

Result<ssh::CommandResult> SshBackend::Run(const std::string& step, const std::string& host, ComponentId component,
                                           const std::string& command, int expected_exit) {
  return Record(step, host, component, command, pool_.RunAll({host}, command).at(0), expected_exit);
}

Result<ssh::CommandResult> SshBackend::Record(const std::string& step, const std::string& host, ComponentId component,
                                              const std::string& command, const ssh::CommandResult& r,
                                              int expected_exit) {
  const bool ok = r.status.ok() && r.exit_status == expected_exit;
  std::string detail = host + ": " + Abbrev(command) + " -> ";
  if (!r.status.ok()) detail += r.status.ToString();
  else detail += "exit " + std::to_string(r.exit_status) + (r.err.empty() ? "" : ": " + FirstLine(r.err));
  detail += " (" + FormatDurationShort(r.elapsed) + ")";
  events_.Record({clock_.Now(), ActionTaken{"ssh." + step, component, kNoJob, ok, detail}});
  spdlog::debug("{}", detail);
  if (!r.status.ok()) return r.status.WithContext(step + " on " + host);
  return r;
}

Status SshBackend::Verify(const std::string& host, ComponentId component, const std::string& verify,
                          bool want_applied) {
  if (verify.empty()) return Status::Ok();
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("verify", host, component, verify, want_applied ? 0 : 1));
  if (r.exit_status != 0 && r.exit_status != 1)
    return Status::Unavailable(host + ": verify exited " + std::to_string(r.exit_status) +
                               " (0 = fault in effect, 1 = not): " + FirstLine(r.err));
  const bool applied = r.exit_status == 0;
  if (applied == want_applied) return Status::Ok();
  return Status::Unavailable(host + ": verify says the fault is " + (applied ? "still in effect" : "not in effect") +
                             " after " + (want_applied ? "apply" : "revert"));
}

Status SshBackend::VerifyValue(const std::string& host, ComponentId component, const std::string& readback,
                               double expect) {
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("verify", host, component, readback));
  if (r.exit_status != 0) return Status::Unavailable(host + ": reading the value back exited " + std::to_string(r.exit_status));
  RC_ASSIGN_OR_RETURN(double value, ParseFirstNumber(r.out));
  if (Near(value, expect)) return Status::Ok();
  return Status::Unavailable(host + ": the value reads " + Number(value) + ", expected " + Number(expect));
}

Result<double> SshBackend::ReadValue(const std::string& action, const cluster::Target& t) {
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, action, t));
  RC_ASSIGN_OR_RETURN(std::string cmd, Render(inv_.actions.at(action).baseline, b.host, b.values));
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("baseline", b.host, t.component, cmd));
  if (r.exit_status != 0)
    return Status::Unavailable(b.host + ": baseline of " + topo_.TargetName(t) + " exited " +
                               std::to_string(r.exit_status) + ": " + FirstLine(r.err));
  auto value = ParseFirstNumber(r.out);
  if (!value.ok()) return value.status().WithContext(b.host + ": baseline of " + topo_.TargetName(t));
  baselines_[Key(action, t)] = *value;
  return *value;
}

Status SshBackend::ApplyFault(const std::string& key, const std::string& action, const cluster::Target& t,
                              const TargetBinding& b, std::map<std::string, std::string> values,
                              std::optional<double> expect_applied, std::optional<double> baseline, FaultId cause,
                              double held) {
  const std::string name = topo_.TargetName(t);
  if (auto it = open_.find(key); it != open_.end())
    return Status::Invalid(action + " on " + name + " is already applied by fault #" + std::to_string(it->second.fault));
  const ActionTemplates& a = inv_.actions.at(action);
  Open o;
  o.fault = cause;
  o.host = b.host;
  o.action = action;
  o.target = t;
  o.held = held;
  o.expect = baseline;
  RC_ASSIGN_OR_RETURN(std::string apply, Render(a.apply, b.host, values));
  RC_ASSIGN_OR_RETURN(o.revert, Render(a.revert, b.host, values));
  if (!a.verify.empty()) {
    RC_ASSIGN_OR_RETURN(o.verify, Render(a.verify, b.host, values));
  }
  if (!a.baseline.empty()) {
    RC_ASSIGN_OR_RETURN(o.readback, Render(a.baseline, b.host, values));
  }

  // The ledger entry comes first: from here on a crash leaves a revert someone can replay.
  if (options_.ledger) {
    LedgerEntry e;
    e.run = options_.ledger_run;
    e.fault = cause;
    e.action = action;
    e.target = name;
    e.host = *HostOf(inv_, b.host);
    e.apply = apply;
    e.revert = o.revert;
    e.verify = o.verify;
    e.readback = o.readback;
    e.expect = baseline;
    // Staged faults land later (until_landing_); the deadline is their planned end all the same.
    if (auto d = options_.durations.find(cause); d != options_.durations.end())
      e.deadline_unix = UnixSecondsNow() + ((staging_ ? until_landing_ : Duration{}) + d->second).us / 1000000;
    RC_ASSIGN_OR_RETURN(o.ledger_entry, options_.ledger->Record(e));
  }
  open_[key] = o;
  if (staging_) {
    staged_.push_back({key, b.host, apply, t.component, expect_applied, cause});
    return Status::Ok();
  }
  return Landed(key, Run("apply", b.host, t.component, apply), expect_applied, cause, clock_.Now());
}

Status SshBackend::Landed(const std::string& key, const Result<ssh::CommandResult>& applied,
                          std::optional<double> expect_applied, FaultId cause, Time at) {
  const Open o = open_.at(key);
  Status s = applied.ok() ? (applied->exit_status == 0 ? Status::Ok()
                                                       : Status::Unavailable(o.host + ": apply exited " +
                                                                             std::to_string(applied->exit_status) + ": " +
                                                                             FirstLine(applied->err)))
                          : applied.status();
  if (s.ok()) s = expect_applied ? VerifyValue(o.host, o.target.component, o.readback, *expect_applied)
                                 : Verify(o.host, o.target.component, o.verify, true);
  if (!s.ok()) {
    // No answer (a timeout, the session lost): whether it ran is unknown, so the undo looks first.
    if (!applied.ok()) open_[key].uncertain = true;
    // Half-applied is worse than not applied: undo now; the ledger keeps it if that fails too.
    Status undo = RevertFault(key, "apply failed, reverted");
    return s.WithContext("fault #" + std::to_string(cause) + " " + key +
                         (undo.ok() ? " (reverted)" : " (revert failed too: " + undo.message() + ")"));
  }
  auto duration = options_.durations.find(cause);
  if (duration != options_.durations.end()) {
    ++expiries_;
    const std::string tag = ExpiryTag(::getpid(), options_.ledger_run, o.ledger_entry ? o.ledger_entry : expiries_);
    auto armed =
        Run("expiry", o.host, o.target.component, ExpiryCommand(duration->second + inv_.expiry_grace, o.revert, tag));
    std::istringstream out(armed.ok() ? armed->out : "");
    Open& stored = open_[key];
    if (armed.ok() && armed->exit_status == 0 && (out >> stored.expiry_token >> stored.expiry_pid)) {
      if (options_.ledger) (void)options_.ledger->SetExpiry(o.ledger_entry, stored.expiry_token, stored.expiry_pid);
    } else {
      // The arming may have run without its answer reaching us (the host or the network died): a timer
      // may be there that nobody knows the token of. Its tag finds it when the fault is reverted.
      stored.expiry_token.clear();
      stored.expiry_pid = 0;
      stored.expiry_tag = tag;
      spdlog::warn("fault #{} {}: no host-side expiry on {}; the ledger still has its revert", cause, key, o.host);
    }
  }
  RecordLanded(o, at);
  return Status::Ok();
}

void SshBackend::RecordLanded(const Open& o, Time at) {
  // At the instant it landed on the host (ssh.land says how closely), not when the runner heard of it.
  const injectors::RealAction* a = injectors::FindRealAction(o.action);
  const std::string what = a ? a->injector : o.action;
  events_.Record({at, PhysicsChanged{o.target.component, what, 0, o.fault}});
  if (topo_.at(o.target.component).kind == cluster::Kind::kNic)  // and the GPUs it carries traffic for
    for (ComponentId g : topo_.GpusServedBy(o.target.component)) events_.Record({at, PhysicsChanged{g, what, 0, o.fault}});
  auto landed = std::find_if(landings_.begin(), landings_.end(), [&](const Landing& l) { return l.fault == o.fault; });
  Landing l = landed == landings_.end() ? Landing{o.fault, at, std::nullopt, false, {}} : std::move(*landed);
  if (landed != landings_.end()) landings_.erase(landed);
  l.ended.reset();
  if (auto trays = TraysReached(topo_, o.target.component)) {
    l.trays.insert(l.trays.end(), trays->begin(), trays->end());
    std::sort(l.trays.begin(), l.trays.end());
    l.trays.erase(std::unique(l.trays.begin(), l.trays.end()), l.trays.end());
  } else {
    l.everywhere = true;
  }
  landings_.push_back(std::move(l));
}

std::optional<std::span<const ComponentId>> TraysReached(const cluster::Topology& topo, ComponentId part) {
  switch (topo.at(part).kind) {
    case cluster::Kind::kRail: case cluster::Kind::kLeaf: case cluster::Kind::kSpine:
    case cluster::Kind::kSuperSpine: case cluster::Kind::kObjectStore: case cluster::Kind::kCheckpointStore:
      return std::nullopt;
    default: break;
  }
  if (auto under = topo.TraysUnder(part); !under.empty()) return under;
  return topo.TraysUnder(topo.DomainOf(part));  // a part of a rack: a CDU and its pumps, a switch tray, a shelf
}

bool SshBackend::CancelExpiry(Open& o) {
  if (!o.expiry_tag.empty()) {
    auto c = Run("cancel_expiry", o.host, o.target.component, SweepExpiryCommand(o.expiry_tag));
    if (c.ok() && c->exit_status == 0) {
      if (!c->out.empty())
        spdlog::warn("fault #{} on {}: removed a host-side expiry whose arming never answered: {}", o.fault, o.host,
                     FirstLine(c->out));
      o.expiry_tag.clear();
    }
  }
  if (o.expiry_token.empty()) return o.expiry_tag.empty();
  auto c = Run("cancel_expiry", o.host, o.target.component, CancelExpiryCommand(o.expiry_token, o.expiry_pid));
  // Forgotten only once cancelled: a host that did not answer still has the timer, and a later
  // attempt (the retry below, the end of the run, `rackchaos recover`) must cancel it, or it fires
  // after a later fault on the target and undoes that one.
  if (c.ok() && c->exit_status == 0) o.expiry_token.clear();
  return o.expiry_token.empty() && o.expiry_tag.empty();
}

Result<bool> SshBackend::InEffect(const Open& o) {
  if (o.expect) {
    RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("verify", o.host, o.target.component, o.readback));
    if (r.exit_status != 0) return Status::Unavailable(o.host + ": reading the value back exited " + std::to_string(r.exit_status));
    RC_ASSIGN_OR_RETURN(double value, ParseFirstNumber(r.out));
    return !Near(value, *o.expect);
  }
  if (o.verify.empty()) return true;  // cannot tell: revert
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("verify", o.host, o.target.component, o.verify, 1));
  if (r.exit_status != 0 && r.exit_status != 1)
    return Status::Unavailable(o.host + ": verify exited " + std::to_string(r.exit_status) + ": " + FirstLine(r.err));
  return r.exit_status == 0;
}

Status SshBackend::RevertFault(const std::string& key, const std::string& why) {
  auto it = open_.find(key);
  if (it == open_.end()) return Status::Ok();
  Open& o = it->second;
  (void)CancelExpiry(o);
  Status s;
  bool unreachable = false;  // the host did not answer (as opposed to a revert that ran and failed)
  if (const std::optional<double> others = LowestHeld(o.action, o.target, key)) {
    // Other faults still hold the value: the lowest of theirs is in force now (nothing runs if it
    // already was), not the baseline.
    if (*others > o.held) s = ApplyHeld(o, *others);
  } else {
    // After the host was lost (or an apply's answer was), what ran there is unknown: a revert that
    // reached it late, an apply that never did. Looked at first, so a fault not in effect is not
    // reverted again (`tc qdisc del` of a limit that is gone fails, and the entry would stay open).
    bool in_effect = true;
    if (o.uncertain) {
      Result<bool> e = InEffect(o);
      unreachable = !e.ok();  // retried as a lost host's: the look is what must get through first
      if (!e.ok()) s = e.status();
      else in_effect = *e;
    }
    if (s.ok() && in_effect) {
      auto r = Run("revert", o.host, o.target.component, o.revert);
      unreachable = !r.ok();
      s = r.ok() ? (r->exit_status == 0 ? Status::Ok()
                                        : Status::Unavailable(o.host + ": revert exited " + std::to_string(r->exit_status) +
                                                              ": " + FirstLine(r->err)))
                 : r.status();
      if (s.ok()) s = o.expect ? VerifyValue(o.host, o.target.component, o.readback, *o.expect)
                               : Verify(o.host, o.target.component, o.verify, false);
    }
  }
  // The host answered the revert: an expiry it did not let us cancel before is cancelled now; one
  // still armed keeps the entry open (a later attempt or `rackchaos recover` cancels it).
  if (s.ok() && !CancelExpiry(o)) {
    s = Status::Unavailable(o.host + ": reverted, but its host-side expiry (" + o.expiry_token + ") could not be cancelled");
    unreachable = true;
  }
  if (!s.ok()) {
    revert_failed_.insert(o.fault);
    if (options_.ledger && o.ledger_entry)
      (void)options_.ledger->SetNote(o.ledger_entry, std::string(unreachable ? "host lost, " : "") +
                                                         "revert failed: " + s.message());
    if (unreachable) HostLost(key);
    return s;
  }
  if (options_.ledger && o.ledger_entry) RC_RETURN_IF_ERROR(options_.ledger->Close(o.ledger_entry, why));
  const FaultId fault = o.fault;
  open_.erase(it);
  if (!Holds(fault))
    for (Landing& l : landings_)
      if (l.fault == fault) l.ended = clock_.Now();
  return Status::Ok();
}

bool SshBackend::RevertedLate(FaultId fault) const { return revert_failed_.count(fault) && !Holds(fault); }

bool SshBackend::Holds(FaultId fault) const {
  return std::any_of(open_.begin(), open_.end(), [fault](const auto& kv) { return kv.second.fault == fault; });
}

void SshBackend::HostLost(const std::string& key) {
  Open& o = open_.at(key);
  o.uncertain = true;
  const std::string detail = o.host + " did not answer: fault #" + std::to_string(o.fault) + " " + key +
                             " stays applied; its revert is retried every " + FormatDurationShort(kRevertRetry) +
                             " until the host answers (or at the end of the run, or by `rackchaos recover`)";
  if (lost_.insert(key).second) {  // once per loss; the retries are the ssh.revert actions
    events_.Record({clock_.Now(), ActionTaken{"host_lost", o.target.component, kNoJob, false, detail}});
    spdlog::error("{}", detail);
  }
  if (retries_.count(key) || stopping_) return;
  retries_[key] = clock_.CallAfter(kRevertRetry, [this, key] {
    retries_.erase(key);
    auto it = open_.find(key);
    if (it == open_.end() || stopping_) return;
    const std::string host = it->second.host;
    const FaultId fault = it->second.fault;
    const ComponentId component = it->second.target.component;
    Status s = RevertFault(key, "fault #" + std::to_string(fault) + " reverted late: " + host + " answered again");
    if (s.ok()) {
      lost_.erase(key);
      events_.Record({clock_.Now(), ActionTaken{"host_returned", component, kNoJob, true,
                                                host + " answers again: fault #" + std::to_string(fault) + " " + key +
                                                    " reverted and verified"}});
      spdlog::info("{} answers again: fault #{} {} reverted late", host, fault, key);
    } else if (!retries_.count(key)) {
      // Reachable but the revert failed: no more retries here; RevertRemaining tries once more at the end.
      spdlog::error("fault #{} {}: revert failed after {} answered again: {}", fault, key, host, s.ToString());
    }
  });
}

void SshBackend::CancelRetries() {
  for (const auto& [key, timer] : retries_) clock_.Cancel(timer);
  retries_.clear();
}

Status SshBackend::Switch(cluster::Verb verb, const cluster::Target& t, bool apply, FaultId cause,
                          const std::map<std::string, std::string>& extra) {
  RC_ASSIGN_OR_RETURN(const injectors::RealAction* a, ActionOf(verb));
  if (a->healer || a->check != injectors::RealCheck::kVerify)
    return Status::Internal(a->name + " is not an on/off fault action");
  if (!apply) return RevertFault(Key(a->name, t), "fault #" + std::to_string(cause) + " reverted");
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, a->name, t));
  for (const auto& [k, v] : extra) b.values[k] = v;
  return ApplyFault(OpenKey(a->name, t, cause), a->name, t, b, b.values, std::nullopt, std::nullopt, cause);
}

Status SshBackend::RevertRemaining(const std::string& why) {
  Disarm(why);  // an armed apply must never land after its revert
  // This is the last attempt of the run: no retry may fire after it (the backend may be gone by then).
  stopping_ = true;
  CancelRetries();
  Status first;
  std::vector<std::string> keys;
  for (const auto& [key, o] : open_) keys.push_back(key);
  for (const std::string& key : keys) {
    Status s = RevertFault(key, why);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

void SshBackend::Publish(const cluster::Observation& obs) {
  for (cluster::ObservationSink* sink : sinks_) sink->OnObservation(obs);
}

}  // namespace rackchaos::runner
