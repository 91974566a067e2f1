#include "runner/engine/real_timeline.h"

#include <algorithm>

#include "core/log.h"

namespace rackchaos::runner {

void RealTimeline::Schedule() {
  std::map<Time, Group> groups;  // by `at`; plan order within a group
  for (const ResolvedFault& f : spec_.faults) groups[f.at].push_back(&f);
  Time previous{};
  for (const auto& [at, group] : groups) {
    // One group armed at a time: the next one arms once the previous one has landed.
    const Time arm = std::max(at - leads_.arm, previous);
    clock_.CallAt(arm, [this, g = group, at = at] { Arm(g, at); });
    clock_.CallAt(std::max(at - leads_.fire, arm), [this, at = at] { Fire(at); });
    previous = at;
  }
}

void RealTimeline::Arm(const Group& group, Time at) {
  armed_.clear();
  arm_failed_.clear();
  backend_.BeginStaging(std::max(at - clock_.Now(), Duration{}));
  for (const ResolvedFault* f : group) {
    auto applied = f->injector->Apply(backend_, spec_.topology, f->target, f->params, f->id);
    if (!applied.ok()) {
      backend_.Unstage(f->id, applied.status().message());
      Failed(*f, applied.status());
      continue;
    }
    armed_.push_back({f, *applied, 0});
  }
  for (const auto& [id, why] : backend_.ArmStaged()) {
    auto it = std::find_if(armed_.begin(), armed_.end(), [id = id](const Applied& a) { return a.fault->id == id; });
    if (it == armed_.end()) continue;
    Failed(*it->fault, why);
    arm_failed_.insert(id);
    armed_.erase(it);
  }
  if (!armed_.empty()) spdlog::info("{} fault(s) armed to land at {}", armed_.size(), FormatDuration(at));
}

void RealTimeline::Fire(Time at) {
  // Late (arming took longer than planned): still all at once, a fire lead from now.
  const Time land = std::max(at, clock_.Now() + leads_.fire);
  const std::map<FaultId, Status> failed = backend_.FireArmed(clock_.UnixMicrosAt(land));
  for (FaultId id : arm_failed_) (void)backend_.RevertFaultTargets(id, "another part of the fault could not be armed");
  arm_failed_.clear();
  for (Applied& a : std::exchange(armed_, {})) {
    if (auto it = failed.find(a.fault->id); it != failed.end()) {
      (void)backend_.RevertFaultTargets(a.fault->id, "another part of the fault failed");
      Failed(*a.fault, it->second);
      continue;
    }
    Landed(a, land);
  }
}

void RealTimeline::Landed(Applied a, Time land) {
  const ResolvedFault& f = *a.fault;
  // Ground truth for blast radius: what the fault took out of service (never shown to the healer). At
  // the instant it landed on the hosts (ssh.land says how closely), not when the runner heard of it.
  const Time at = std::min(land, clock_.Now());
  events_.Record({at, PhysicsChanged{f.target.component, std::string(f.injector->name()), 0, f.id}});
  if (spec_.topology.at(f.target.component).kind == cluster::Kind::kNic)  // and the GPU it carries traffic for
    for (ComponentId g : spec_.topology.GpusServedBy(f.target.component))
      events_.Record({at, PhysicsChanged{g, std::string(f.injector->name()), 0, f.id}});
  last_injected_ = f.id;
  events_.Record({at, FaultInjected{f.id, std::string(f.injector->name()), f.target.component, f.target.port,
                                              f.selector, a.applied.detail}});
  spdlog::info("fault #{} {} on {} ({})", f.id, f.injector->name(), spec_.topology.TargetName(f.target),
               a.applied.detail);
  if (f.duration) {
    a.revert_timer = clock_.CallAfter(*f.duration, [this, id = f.id] {
      Applied entry = applied_.at(id);
      applied_.erase(id);
      if (!Revert(entry, "after " + FormatDuration(*entry.fault->duration))) ++failures_;
      watch_.OnFaultsActive(applied_.size(), clock_.Now());
    });
  }
  applied_[f.id] = a;
  watch_.OnFaultsActive(applied_.size(), clock_.Now());
}

void RealTimeline::Failed(const ResolvedFault& f, const Status& why) {
  ++failures_;
  spdlog::error("fault #{} {} on {} failed: {}", f.id, f.injector->name(), spec_.topology.TargetName(f.target),
                why.ToString());
  events_.Record({clock_.Now(), ActionTaken{"fault_apply", f.target.component, kNoJob, false,
                                            "fault #" + std::to_string(f.id) + ": " + why.ToString()}});
}

int RealTimeline::RevertAll(const std::string& why) {
  // First what is armed: disarmed, it never runs (the backend reverts an apply that might have).
  backend_.Disarm(why);
  armed_.clear();
  arm_failed_.clear();
  int failed = 0;
  for (auto& [id, a] : applied_) {
    clock_.Cancel(a.revert_timer);
    failed += Revert(a, why) ? 0 : 1;
  }
  applied_.clear();
  Status s = backend_.RevertRemaining(why);
  if (!s.ok()) spdlog::error("revert: {}", s.ToString());
  return failed + (s.ok() ? 0 : 1);
}

bool RealTimeline::Revert(const Applied& a, const std::string& why) {
  const ResolvedFault& f = *a.fault;
  Status s = f.injector->Revert(backend_, spec_.topology, f.target, a.applied, f.id);
  events_.Record({clock_.Now(), FaultReverted{f.id, s.ok() ? why : why + ": " + s.ToString()}});
  if (!s.ok())
    spdlog::error("fault #{} revert failed: {}", f.id, s.ToString());
  else
    spdlog::info("fault #{} reverted ({})", f.id, why);
  return s.ok();
}

}  // namespace rackchaos::runner
