// SshBackend's value holds (see ssh_backend.h): several faults on one value action's target, the lowest
// value held in force, the baseline back at the last release. The simulator's rule (cluster/holds.h)
// on real hosts; each hold keeps its own ledger entry, so `rackchaos recover` restores the baseline.
#include <algorithm>

#include "runner/site/ssh_backend.h"

namespace rackchaos::runner {
namespace {

// A value action's units on the wire per model unit (a valve's opening: percent on the wire, a fraction
// in the model) and the placeholder that carries the value, from the action table.
double Scale(const std::string& action) {
  const injectors::RealAction* a = injectors::FindRealAction(action);
  return a ? a->wire_scale : 1.0;
}
std::string ValueName(const std::string& action) {
  const injectors::RealAction* a = injectors::FindRealAction(action);
  return a && !a->value.empty() ? a->value : "value";
}

}  // namespace

std::string SshBackend::OpenKey(const std::string& action, const cluster::Target& t, FaultId cause) const {
  return IsValueAction(action) ? Key(action, t) + " #" + std::to_string(cause) : Key(action, t);
}

std::optional<double> SshBackend::LowestHeld(const std::string& action, const cluster::Target& t,
                                             const std::string& except) const {
  std::optional<double> lowest;
  if (!IsValueAction(action)) return lowest;
  const std::string target = Key(action, t);
  for (const auto& [key, o] : open_)
    if (key != except && o.action == action && Key(action, o.target) == target)
      lowest = std::min(lowest.value_or(o.held), o.held);
  return lowest;
}

Result<std::string> SshBackend::RenderHeld(const Open& o, double wire) const {
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, o.action, o.target));
  b.values[ValueName(o.action)] = Number(wire);
  b.values["baseline"] = Number(o.expect.value_or(0));
  return Render(inv_.actions.at(o.action).apply, b.host, b.values);
}

Status SshBackend::ApplyHeld(const Open& o, double wire) {
  RC_ASSIGN_OR_RETURN(std::string apply, RenderHeld(o, wire));
  RC_ASSIGN_OR_RETURN(ssh::CommandResult r, Run("apply", o.host, o.target.component, apply));
  if (r.exit_status != 0)
    return Status::Unavailable(o.host + ": apply exited " + std::to_string(r.exit_status) + ": " +
                               r.err.substr(0, r.err.find('\n')));
  return VerifyValue(o.host, o.target.component, o.readback, wire);
}

Status SshBackend::SetValue(const std::string& action, const cluster::Target& t, double value, FaultId cause) {
  RC_ASSIGN_OR_RETURN(TargetBinding b, BindTarget(inv_, topo_, action, t));
  const std::string key = OpenKey(action, t, cause);
  // The baseline is the value without holds: read before the first hold, kept by every later one.
  std::optional<double> baseline;
  for (const auto& [k, o] : open_)
    if (o.action == action && Key(action, o.target) == Key(action, t)) baseline = o.expect;
  if (!baseline) {
    if (!baselines_.count(Key(action, t))) RC_RETURN_IF_ERROR(ReadValue(action, t).status());
    baseline = baselines_.at(Key(action, t));
  }
  const double wire = value * Scale(action);
  const double applied = std::min(wire, LowestHeld(action, t, key).value_or(wire));
  std::map<std::string, std::string> values = b.values;
  values[ValueName(action)] = Number(applied);
  values["baseline"] = Number(*baseline);
  RC_RETURN_IF_ERROR(ApplyFault(key, action, t, b, values, applied, baseline, cause, wire));
  // Holds staged with this one land at the same instant: every one of them sets the lowest value, so
  // the order their commands run in on the host cannot matter.
  if (!staging_) return Status::Ok();
  for (Staged& st : staged_) {
    auto o = open_.find(st.key);
    if (st.key == key || o == open_.end() || o->second.action != action || Key(action, o->second.target) != Key(action, t))
      continue;
    RC_ASSIGN_OR_RETURN(st.apply, RenderHeld(o->second, applied));
    st.expect_applied = applied;
  }
  return Status::Ok();
}

Status SshBackend::Release(cluster::Held what, cluster::Target t, FaultId cause) {
  auto a = ActionOf(cluster::VerbOf(what));
  if (!a.ok())
    return Status::NotSupported(std::string("the inventory has no action that holds a ") + cluster::HeldName(what));
  const std::string key = OpenKey((*a)->name, t, cause);
  auto it = open_.find(key);
  if (it == open_.end() || it->second.fault != cause) return Status::Ok();  // `cause` holds nothing there
  return RevertFault(key, "fault #" + std::to_string(cause) + " reverted");
}

}  // namespace rackchaos::runner
