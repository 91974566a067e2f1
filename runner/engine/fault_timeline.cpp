#include "runner/engine/fault_timeline.h"

#include <algorithm>

#include "core/log.h"

namespace rackchaos::runner {

void FaultTimeline::Schedule() {
  std::map<Time, Group> groups;  // by `at`; plan order within a group
  for (const ResolvedFault& f : spec_.faults) groups[f.at].push_back(&f);
  Time previous{};
  for (const auto& [at, group] : groups) {
    if (leads_.stage == Duration{}) {  // nothing to prepare ahead: stage and land at `at` itself
      clock_.CallAt(at, [this, g = group, at = at] {
        Stage(g, at);
        Commit(at);
      });
      continue;
    }
    // One group staged at a time: the next one is staged once the previous one has landed.
    const Time stage = std::max(at - leads_.stage, previous);
    clock_.CallAt(stage, [this, g = group, at = at] { Stage(g, at); });
    clock_.CallAt(std::max(at - leads_.commit, stage), [this, at = at] { Commit(at); });
    previous = at;
  }
}

bool FaultTimeline::AtLimit(const ResolvedFault& f) {
  const size_t active = open_.size() + staged_.size();
  if (!spec_.max_faults_at_once || active < static_cast<size_t>(*spec_.max_faults_at_once)) return false;
  // Safety: the fault is not applied; the skip is an action on the record, with the reason.
  const std::string why = "fault #" + std::to_string(f.id) + " " + std::string(f.injector->name()) + " on " +
                          spec_.topology->TargetName(f.target) + " skipped: " + std::to_string(active) +
                          " faults active, safety.max_faults_at_once " + std::to_string(*spec_.max_faults_at_once);
  events_.Record({clock_.Now(), ActionTaken{"safety", f.target.component, kNoJob, false, why}});
  spdlog::warn("{}", why);
  return true;
}

void FaultTimeline::Stage(const Group& group, Time at) {
  staged_.clear();
  part_failed_.clear();
  const bool staging = backend_.StageGroup(at);
  for (const ResolvedFault* f : group) {
    if (AtLimit(*f)) continue;
    auto applied = f->injector->Apply(backend_, spec_.topology, f->target, f->params, f->id);
    if (!applied.ok()) {
      backend_.DropStaged(f->id, applied.status().message());
      Failed(*f, applied.status());
      continue;
    }
    if (staging)
      staged_.push_back({f, *applied, 0});
    else
      Landed({f, *applied, 0}, clock_.Now());  // the backend applied it there and then
  }
  if (!staging) return;
  for (const auto& [id, why] : backend_.SealGroup()) {
    auto it = std::find_if(staged_.begin(), staged_.end(), [id = id](const Open& o) { return o.fault->id == id; });
    if (it == staged_.end()) continue;
    Failed(*it->fault, why);
    part_failed_.insert(id);
    staged_.erase(it);
  }
  if (!staged_.empty()) spdlog::info("{} fault(s) armed to land at {}", staged_.size(), FormatDuration(at));
}

void FaultTimeline::Commit(Time at) {
  if (staged_.empty() && part_failed_.empty()) return;
  // Late (staging took longer than planned): still all at once, a commit lead from now.
  const Time land = std::max(at, clock_.Now() + leads_.commit);
  const std::map<FaultId, Status> failed = backend_.CommitGroup(land);
  for (FaultId id : part_failed_) (void)backend_.UndoFault(id, "another part of the fault could not be armed");
  part_failed_.clear();
  for (Open& o : std::exchange(staged_, {})) {
    if (auto it = failed.find(o.fault->id); it != failed.end()) {
      (void)backend_.UndoFault(o.fault->id, "another part of the fault failed");
      Failed(*o.fault, it->second);
      continue;
    }
    // At the instant it landed (the backend's ssh.land says how closely), not when the runner heard of it.
    Landed(o, std::min(land, clock_.Now()));
  }
}

void FaultTimeline::Landed(Open o, Time at) {
  const ResolvedFault& f = *o.fault;
  events_.Record({at, FaultInjected{f.id, std::string(f.injector->name()), f.target.component, f.target.port,
                                    f.selector, o.applied.detail}});
  spdlog::info("fault #{} {} on {} ({})", f.id, f.injector->name(), spec_.topology->TargetName(f.target),
               o.applied.detail);
  ++injected_;
  if (f.duration) {
    o.revert_timer = clock_.CallAfter(*f.duration, [this, id = f.id] {
      const Open entry = open_.at(id);
      open_.erase(id);
      (void)Revert(entry, "after " + FormatDuration(*entry.fault->duration));
      watch_.OnFaultsActive(open_.size(), clock_.Now());
    });
  }
  open_[f.id] = o;
  watch_.OnFaultsActive(open_.size(), clock_.Now());
}

void FaultTimeline::Failed(const ResolvedFault& f, const Status& why) {
  ++failures_;
  spdlog::error("fault #{} {} on {} failed: {}", f.id, f.injector->name(), spec_.topology->TargetName(f.target),
                why.ToString());
  events_.Record({clock_.Now(), ActionTaken{"fault_apply", f.target.component, kNoJob, false,
                                            "fault #" + std::to_string(f.id) + ": " + why.ToString()}});
}

int FaultTimeline::RevertAll(const std::string& why) {
  // First what is staged: abandoned, it never lands (the backend reverts what might have).
  backend_.AbandonGroup(why);
  staged_.clear();
  part_failed_.clear();
  int failed = 0;
  for (auto& [id, o] : open_) {
    if (o.revert_timer) clock_.Cancel(o.revert_timer);
    failed += Revert(o, why) ? 0 : 1;
  }
  open_.clear();
  Status s = backend_.RevertRemaining(why);
  if (!s.ok()) spdlog::error("revert: {}", s.ToString());
  failures_ += s.ok() ? 0 : 1;
  return failed + (s.ok() ? 0 : 1);
}

int FaultTimeline::failures() const {
  int n = failures_;
  for (FaultId id : revert_failed_) n += backend_.RevertedLate(id) ? 0 : 1;
  return n;
}

bool FaultTimeline::Revert(const Open& o, const std::string& why) {
  const ResolvedFault& f = *o.fault;
  Status s = f.injector->Revert(backend_, spec_.topology, f.target, o.applied, f.id);
  events_.Record({clock_.Now(), FaultReverted{f.id, s.ok() ? why : why + ": " + s.ToString()}});
  if (!s.ok()) {
    revert_failed_.insert(f.id);
    spdlog::error("fault #{} revert failed: {}", f.id, s.ToString());
  } else {
    spdlog::info("fault #{} reverted ({})", f.id, why);
  }
  return s.ok();
}

}  // namespace rackchaos::runner
