#include "healer/metrics.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace rackchaos::healer {
namespace {

using cluster::Kind;

constexpr Duration kTransient = Duration::Seconds(60);

// Every tray of `few` is in `many` (both sorted): a few drained trays are looked up, more are merged.
bool Holds(const std::vector<ComponentId>& many, const std::vector<ComponentId>& few) {
  if (few.size() > 8) return std::includes(many.begin(), many.end(), few.begin(), few.end());
  return std::all_of(few.begin(), few.end(), [&](ComponentId t) { return std::binary_search(many.begin(), many.end(), t); });
}

struct FaultFacts {
  FaultMetrics m;
  cluster::Target target;
  std::set<ComponentId> affected;  // components the fault physically changed
  std::set<ComponentId> trays;     // their compute trays
  std::set<ComponentId> direct_gpus;
  std::set<ComponentId> part_racks;  // racks of the rack-wide parts it changed (switch tray, CDU, rack power)
  // Trays whose GPUs lost service with it (drained, or the placement of a job it interrupted), sorted
  // and unique: a 100k-GPU placement is merged as a tray list, not inserted GPU by GPU. Usually one
  // placement holds them all (the drained trays are in it): then `collateral_shared` is that event's
  // own list, not a 100 KB copy per fault; otherwise `collateral_own` holds the union.
  std::vector<ComponentId> collateral_own;
  const std::vector<ComponentId>* collateral_shared = nullptr;
  int64_t shared_gpus = -1;  // the GPUs on collateral_shared's trays when its maker counted them
  const std::vector<ComponentId>* last_merged = nullptr;
  bool needs_isolation = false;
  // Injected inside trays the healer had already drained, still drained: the part was out of service
  // before it failed, so it needs no isolation of its own (a second GPU failing in an isolated tray).
  bool covered = false;
  bool lasting = false;  // changed some part for longer than an instant (not only a crashed process)

  const std::vector<ComponentId>& collateral_trays() const {
    return collateral_shared ? *collateral_shared : collateral_own;
  }

  // `sorted_trays` must outlive the metrics pass when `keep` (an event's own list) is set.
  // `tray_gpus`: the GPUs on `sorted_trays` if known (TrayList::tray_gpus), else -1.
  void AddCollateral(const std::vector<ComponentId>& sorted_trays, bool keep, int64_t tray_gpus = -1) {
    // The same placement as the last event: a shared list is the same object, found in O(1).
    if (last_merged && (last_merged == &sorted_trays || *last_merged == sorted_trays)) return;
    last_merged = keep ? &sorted_trays : nullptr;
    const std::vector<ComponentId>& have = collateral_trays();
    // Nothing new (a drained tray of the placement already held): the union is what it holds, not a copy.
    if (Holds(have, sorted_trays)) return;
    if (keep && Holds(sorted_trays, have)) {
      collateral_shared = &sorted_trays;
      shared_gpus = tray_gpus;
      collateral_own.clear();
      return;
    }
    std::vector<ComponentId> merged;
    merged.reserve(have.size() + sorted_trays.size());
    std::set_union(have.begin(), have.end(), sorted_trays.begin(), sorted_trays.end(), std::back_inserter(merged));
    collateral_own = std::move(merged);
    collateral_shared = nullptr;
    shared_gpus = -1;
  }
};

bool Active(const FaultFacts& f, Time t) { return f.m.injected <= t; }
// When its effect ended: a crashed process's at once, else at its revert (none: still in force).
std::optional<Time> Ended(const FaultFacts& f) { return f.lasting ? f.m.reverted : f.m.injected; }
// In force at `t`: injected and its effect not yet over.
bool InForce(const FaultFacts& f, Time t) { return Active(f, t) && (!Ended(f) || t < *Ended(f)); }

// Which of two faults injected by `t` a symptom seen at `t` shows: one in force over one over; of two in
// force the earlier injected; of two over the later ended (a symptom is detected up to a poll and a
// detection rule after it shows, so it may land just after its fault's revert).
bool Better(const FaultFacts& a, const FaultFacts& b, Time t) {
  const bool in_a = InForce(a, t), in_b = InForce(b, t);
  if (in_a != in_b) return in_a;
  return in_a ? a.m.injected < b.m.injected : *Ended(a) > *Ended(b);
}

// A symptom or isolation on `c` relates to a fault if it sits on what the fault changed or in the same tray.
bool Related(const FaultFacts& f, const cluster::Topology& topo, ComponentId c) {
  if (c == kNoComponent) return false;
  if (f.affected.count(c)) return true;
  ComponentId tray = topo.TrayOf(c);
  // A rack-level part's symptoms show on the trays and GPUs of its rack (link ports, flow, heartbeats).
  if (!f.part_racks.empty() && f.part_racks.count(topo.RackOf(c))) return true;
  if (tray != kNoComponent) return f.trays.count(tray) > 0;
  for (ComponentId t : f.trays)  // rack-wide domains (CDU, rack) relate to faults inside them
    if (topo.RackOf(t) == topo.RackOf(c)) return true;
  return false;
}

// The faults a component may relate to (a superset of those Related() accepts), in fault id order: a
// month of a fleet has thousands of faults and symptoms, and each symptom relates to a few of them.
class FaultIndex {
 public:
  FaultIndex(std::map<FaultId, FaultFacts>& faults, const cluster::Topology& topo) : topo_(topo) {
    for (auto& [id, f] : faults) {
      for (ComponentId c : f.affected) by_part_[c].push_back(&f);
      for (ComponentId t : f.trays) by_tray_[t].push_back(&f);
      for (ComponentId r : f.part_racks) by_part_rack_[r].push_back(&f);
      for (ComponentId t : f.trays) by_tray_rack_[topo.RackOf(t)].push_back(&f);
    }
  }
  // Faults that changed `c` itself.
  const std::vector<FaultFacts*>& Changed(ComponentId c) const { return Find(by_part_, c); }
  std::vector<FaultFacts*> Candidates(ComponentId c) const {
    if (c == kNoComponent) return {};
    ComponentId tray = topo_.TrayOf(c), rack = topo_.RackOf(c);
    std::vector<FaultFacts*> out;
    for (const auto* list : {&Find(by_part_, c), &Find(by_part_rack_, rack),
                             tray != kNoComponent ? &Find(by_tray_, tray) : &Find(by_tray_rack_, rack)})
      out.insert(out.end(), list->begin(), list->end());
    std::sort(out.begin(), out.end(), [](const FaultFacts* a, const FaultFacts* b) { return a->m.fault < b->m.fault; });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  using Lists = std::unordered_map<ComponentId, std::vector<FaultFacts*>>;  // each list in fault id order
  static const std::vector<FaultFacts*>& Find(const Lists& lists, ComponentId key) {
    static const std::vector<FaultFacts*> kNone;
    auto it = lists.find(key);
    return it == lists.end() ? kNone : it->second;
  }
  const cluster::Topology& topo_;
  Lists by_part_, by_tray_, by_part_rack_, by_tray_rack_;
};

// The fault in force at `t` that changed `c` itself, else one in force the event relates to, else the
// last ended of those (Better: among several in force the earliest injected; at once, the lowest id),
// or nullptr. A fault reverted before another was injected on the part never takes the later one's
// symptoms. (Six shelves failing at once: each PSU's symptom is its own shelf's fault's.)
FaultFacts* Attribute(const FaultIndex& index, const cluster::Topology& topo, ComponentId c, Time t) {
  FaultFacts* own = nullptr;
  if (c != kNoComponent)
    for (FaultFacts* f : index.Changed(c))
      if (Active(*f, t) && (!own || Better(*f, *own, t))) own = f;
  if (own && InForce(*own, t)) return own;
  FaultFacts* near = nullptr;
  for (FaultFacts* f : index.Candidates(c))
    if (Active(*f, t) && Related(*f, topo, c) && (!near || Better(*f, *near, t))) near = f;
  if (near && InForce(*near, t)) return near;
  return own ? own : near;
}

bool CorrectIsolation(const FaultFacts& f, const cluster::Topology& topo, ComponentId domain) {
  return domain == f.target.component || domain == topo.TrayOf(f.target.component) || f.affected.count(domain) > 0;
}

using Changes = std::vector<std::pair<Time, const JobChanged*>>;
using Requeues = std::vector<std::pair<Time, FaultId>>;  // a job's healer requeues and the fault each carried out

// The fault each change is charged to: its own cause, or for a job the healer requeued to carry out an
// isolation while no fault of its own stopped it, that isolation's fault from the requeue until the job
// runs again (the queue wait, the restart and the work thrown away are collateral damage of the fault).
std::vector<FaultId> ChargedCauses(const Changes& changes, const Requeues& requeues) {
  std::vector<FaultId> out(changes.size(), kNoFault);
  size_t next = 0;
  Time pending_at{};  // a requeue not yet seen in the job's changes, if pending != kNoFault
  FaultId pending = kNoFault, carried = kNoFault;
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& [t, c] = changes[i];
    for (; next < requeues.size() && requeues[next].first <= t; ++next) std::tie(pending_at, pending) = requeues[next];
    if (c->cause != kNoFault || c->state == JobState::kRunning) carried = kNoFault;
    if (pending != kNoFault && c->state == JobState::kQueued) {
      if (c->cause == kNoFault) carried = pending;
      pending = kNoFault;
    } else if (pending != kNoFault && c->state == JobState::kRunning && t > pending_at) {
      pending = kNoFault;  // the job was not running when requeued: the requeue changed nothing
    }
    out[i] = c->cause != kNoFault ? c->cause : carried;
  }
  return out;
}

// Per-job walk over its JobChanged events: time stalled, slowed and redone, attributed to causes.
struct JobWalk {
  std::map<FaultId, JobImpact> impacts;
  std::map<FaultId, Time> recovered_at;  // last time the job stopped being impaired by the fault
  JobMetrics metrics;
};

bool Impaired(const JobChanged& c) { return c.state != JobState::kRunning || c.speed < 0.999; }

// A job up (running, or restarting on its trays) stops when it hangs, fails or is requeued; running, any
// other change (a real job seen restarting at once, or finished) stops it too.
bool Stops(JobState was, JobState now) {
  if (was == JobState::kRunning) return now != JobState::kRunning;
  return was == JobState::kRestarting &&
         (now == JobState::kHung || now == JobState::kFailed || now == JobState::kQueued);
}

JobWalk WalkJob(const JobInfo& info, const Changes& changes, const std::vector<FaultId>& cause, Time end) {
  JobWalk w;
  w.metrics.job = info.id;
  w.metrics.name = info.name;
  w.metrics.gpus = info.gpus;
  if (changes.empty()) return w;
  Time start = changes.front().first;
  Duration running{}, up{}, lost{};
  std::vector<FaultId> rework_only;  // store faults charged rework at a restart they did not cause
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& [t, c] = changes[i];
    Time next = i + 1 < changes.size() ? changes[i + 1].first : end;
    Duration dt = next - t;
    if (c->lost_work > Duration{}) {
      lost += c->lost_work;
      // A failed checkpoint store's share: the work its unacknowledged checkpoint would have kept.
      const Duration unsafe = c->store_cause != kNoFault ? std::min(c->store_lost_work, c->lost_work) : Duration{};
      if (unsafe > Duration{}) {
        w.impacts[c->store_cause].rework += unsafe;
        if (c->store_cause != cause[i]) rework_only.push_back(c->store_cause);
      }
      if (cause[i] != kNoFault) w.impacts[cause[i]].rework += c->lost_work - unsafe;
    }
    if (!Impaired(*c)) {  // running at full speed again: recovered from that extra rework
      for (FaultId f : rework_only) w.recovered_at[f] = t;
      rework_only.clear();
    }
    // Training stopped for a checkpoint (running at speed 0: sim_checkpoints.cpp) is not productive.
    if (c->state == JobState::kRunning && c->speed > 0) running += dt;
    if (c->state == JobState::kRunning || c->state == JobState::kRestarting) up += dt;
    if (i > 0 && Stops(changes[i - 1].second->state, c->state)) ++w.metrics.interruptions;
    if (cause[i] != kNoFault && Impaired(*c)) {
      JobImpact& imp = w.impacts[cause[i]];
      if (c->state == JobState::kRunning) imp.slowdown_hours += dt.Hours() * (1 - c->speed);
      else {
        imp.stalled += dt;
        imp.interrupted = true;
      }
    }
    // Recovery from fault F: the first change after an F-impaired stretch that is no longer impaired by F.
    if (i > 0) {
      const JobChanged* prev = changes[i - 1].second;
      if (cause[i - 1] != kNoFault && Impaired(*prev) && (cause[i] != cause[i - 1] || !Impaired(*c)))
        w.recovered_at[cause[i - 1]] = t;
      if (cause[i] != kNoFault && Impaired(*c)) w.recovered_at.erase(cause[i]);
    }
  }
  const JobChanged* last = changes.back().second;
  double steps = last->steps;
  if (last->state == JobState::kRunning && last->step_time_s > 0) steps += (end - changes.back().first).Seconds() / last->step_time_s;
  w.metrics.wall = end - start;
  w.metrics.productive = running - lost;
  if (w.metrics.productive < Duration{}) w.metrics.productive = {};
  w.metrics.steps = steps;
  w.metrics.up = up;
  double wall_s = w.metrics.wall.Seconds();
  w.metrics.ettr = wall_s > 0 ? w.metrics.productive.Seconds() / wall_s : 0;
  w.metrics.goodput = wall_s > 0 ? steps * info.nominal_step.Seconds() / wall_s : 0;
  for (auto& [f, imp] : w.impacts) {
    w.metrics.failures += imp.interrupted;
    imp.fault = f;
    imp.job = info.id;
    imp.job_name = info.name;
    imp.gpu_hours_lost = info.gpus * (imp.stalled.Hours() + imp.slowdown_hours + imp.rework.Hours());
  }
  return w;
}

std::vector<ComponentId> Sorted(std::vector<ComponentId> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

RunMetrics ComputeMetrics(const std::vector<Event>& events, const cluster::Topology& topo,
                          const std::vector<JobInfo>& jobs, Time end) {
  std::map<FaultId, FaultFacts> faults;
  std::map<JobId, Changes> job_changes;
  // Pass 1: faults (an injector's physical effects are recorded before its FaultInjected, at the same
  // time, so faults are collected first) and what they physically changed.
  for (const Event& e : events) {
    if (const auto* fi = std::get_if<FaultInjected>(&e.body)) {
      FaultFacts& f = faults[fi->fault];
      f.m.fault = fi->fault;
      f.m.kind = fi->kind;
      f.target = {fi->target, fi->port};
      f.m.target = topo.TargetName(f.target);
      f.m.injected = e.at;
      f.affected.insert(fi->target);
    }
  }
  for (const Event& e : events) {
    if (const auto* fr = std::get_if<FaultReverted>(&e.body)) {
      if (faults.count(fr->fault)) faults[fr->fault].m.reverted = e.at;
    } else if (const auto* pc = std::get_if<PhysicsChanged>(&e.body)) {
      if (pc->cause == kNoFault || !faults.count(pc->cause)) continue;
      FaultFacts& f = faults[pc->cause];
      f.affected.insert(pc->component);
      f.lasting = f.lasting || pc->what != "process_crash";
      // Changes that take no part out of service: a valve setting (its GPUs' throttling is recorded on
      // them), restorations, and a crashed process (software: nothing to isolate).
      if (pc->what == "valve_opening" || pc->what.ends_with("_up") || pc->what == "inserted" ||
          pc->what == "repaired" || pc->what == "process_crash")
        continue;
      for (ComponentId g : topo.GpusServedBy(pc->component)) f.direct_gpus.insert(g);
      f.needs_isolation = true;
    } else if (const auto* jc = std::get_if<JobChanged>(&e.body)) {
      job_changes[jc->job].push_back({e.at, jc});
    }
  }
  for (auto& [id, f] : faults)
    for (ComponentId c : f.affected) {
      if (topo.TrayOf(c) != kNoComponent) f.trays.insert(topo.TrayOf(c));
      else if (!topo.GpusServedBy(c).empty()) f.part_racks.insert(topo.RackOf(c));  // not a redundant PSU
    }

  // Pass 2: detections, isolations and the drains that carried them out.
  const FaultIndex index(faults, topo);
  RunMetrics run;
  std::vector<FaultFacts*> last_isolation;
  // The last isolation's faults until the next detection: the healer requeues the jobs on what it
  // isolated right after isolating (a requeue for a failed job follows that job's own detection).
  std::vector<FaultFacts*> requeue_for;
  std::map<JobId, Requeues> requeued;
  std::map<ComponentId, Time> drained_since;  // trays drained now
  auto undrain = [&](ComponentId tray, Time at) {
    auto it = drained_since.find(tray);
    if (it == drained_since.end()) return;
    run.drained_gpu_hours += static_cast<double>(topo.GpusOfTray(tray).size()) * (at - it->second).Seconds() / 3600;
    drained_since.erase(it);
  };
  std::unordered_map<DetectionId, const FaultFacts*> credited;  // each detection's fault (Attribute)
  std::unordered_map<ComponentId, std::vector<FaultFacts*>> covered_in;  // drained tray -> faults inside it
  for (const Event& e : events) {
    if (const auto* fi = std::get_if<FaultInjected>(&e.body)) {
      FaultFacts& f = faults[fi->fault];
      f.covered = f.needs_isolation && !f.trays.empty() && f.part_racks.empty() &&
                  std::all_of(f.trays.begin(), f.trays.end(), [&](ComponentId t) { return drained_since.count(t) > 0; });
      if (f.covered)
        for (ComponentId t : f.trays) covered_in[t].push_back(&f);
    } else if (const auto* d = std::get_if<Detected>(&e.body)) {
      if (FaultFacts* f = Attribute(index, topo, d->component, e.at)) {
        if (!f->m.time_to_detect) f->m.time_to_detect = e.at - f->m.injected;
        credited[d->detection] = f;
      }
      requeue_for.clear();
    } else if (const auto* iso = std::get_if<Isolated>(&e.body)) {
      ++run.isolations;
      last_isolation.clear();
      bool correct = false;
      // A fault over by now takes the isolation only when it explains a detection credited to it.
      auto explains = [&](const FaultFacts* f) {
        return std::any_of(iso->because.begin(), iso->because.end(), [&](DetectionId id) {
          auto it = credited.find(id);
          return it != credited.end() && it->second == f;
        });
      };
      for (FaultFacts* f : index.Candidates(iso->component)) {
        if (!Related(*f, topo, iso->component) || !(InForce(*f, e.at) || (Active(*f, e.at) && explains(f)))) continue;
        last_isolation.push_back(f);
        if (!f->m.time_to_isolate) f->m.time_to_isolate = e.at - f->m.injected;
        f->m.isolated.push_back(topo.at(iso->component).name);
        correct = correct || CorrectIsolation(*f, topo, iso->component);
      }
      requeue_for = last_isolation;
      if (correct) {
        ++run.correct_isolations;
        run.faulty_isolations.push_back(topo.at(iso->component).name);
      } else {
        run.false_isolations.push_back(topo.at(iso->component).name + " at " + FormatDuration(e.at));
      }
    } else if (const auto* a = std::get_if<ActionTaken>(&e.body)) {
      // The drains that carried out the last isolation: at its instant in simulation, just after it
      // (one remote command each) on real hosts. The healer drains only when it isolates.
      if (a->action == "drain")
        for (FaultFacts* f : last_isolation)
          f->AddCollateral({a->component}, false);
      if (a->action == "drain" && a->ok && !drained_since.count(a->component)) {
        run.gpus_drained += static_cast<int>(topo.GpusOfTray(a->component).size());
        drained_since[a->component] = e.at;
      }
      if (a->action == "resume" && a->ok) {
        undrain(a->component, e.at);
        auto inside = covered_in.find(a->component);  // back in service with the failed part still failed
        if (inside != covered_in.end()) {
          for (FaultFacts* f : inside->second) f->covered = f->covered && !InForce(*f, e.at);
          covered_in.erase(inside);
        }
      }
      if (a->action == "requeue_job" && a->ok && a->job != kNoJob && !requeue_for.empty()) {
        // Charged to the earliest injected of the isolation's faults, as a symptom would be.
        const FaultFacts* f = *std::min_element(requeue_for.begin(), requeue_for.end(),
            [](const FaultFacts* x, const FaultFacts* y) { return x->m.injected < y->m.injected; });
        requeued[a->job].push_back({e.at, f->m.fault});
      }
    }
  }
  while (!drained_since.empty()) undrain(drained_since.begin()->first, end);

  // Pass 3: jobs.
  for (const JobInfo& info : jobs) {
    const Changes& changes = job_changes[info.id];
    const std::vector<FaultId> cause = ChargedCauses(changes, requeued[info.id]);
    JobWalk w = WalkJob(info, changes, cause, end);
    run.jobs.push_back(w.metrics);
    // Per fault, the first change it caused that stopped the job on some trays: the placement it first
    // interrupted. Found in one pass (a month of a big job has thousands of changes and of faults).
    std::unordered_map<FaultId, const JobChanged*> first_stop;
    for (size_t i = 0; i < changes.size(); ++i) {
      const JobChanged* c = changes[i].second;
      if (c->trays.size() != 0 &&
          (c->state == JobState::kHung || c->state == JobState::kQueued || c->state == JobState::kFailed))
        first_stop.try_emplace(cause[i], c);
    }
    for (auto& [fid, imp] : w.impacts) {
      if (!faults.count(fid)) continue;
      FaultFacts& f = faults[fid];
      ++f.m.jobs_touched;
      if (imp.interrupted) {
        ++f.m.jobs_interrupted;
        // The placement the job was first interrupted on: a restart's new trays are not damage, and a job
        // stopped again by the same fault on another placement idles the same GPUs' worth, not twice.
        if (auto stop = first_stop.find(fid); stop != first_stop.end()) {
          const JobChanged* c = stop->second;
          if (c->trays.sorted()) f.AddCollateral(c->trays.ids(), true, c->trays.tray_gpus());
          else f.AddCollateral(Sorted(c->trays.ids()), false);
        }
      }
      f.m.gpu_hours_lost += imp.gpu_hours_lost;
      f.m.rework += imp.rework;
      Time rec = w.recovered_at.count(fid) ? w.recovered_at[fid] : Time::Max();
      Duration ttr = rec == Time::Max() ? Duration::Max() : rec - f.m.injected;
      if (!f.m.time_to_recover || ttr > *f.m.time_to_recover) f.m.time_to_recover = ttr;
      run.impacts.push_back(imp);
    }
  }

  int needing = 0, isolated = 0;
  // The GPUs of each tray list, counted once per list: most faults of a big job share its placement.
  std::unordered_map<const std::vector<ComponentId>*, size_t> gpus_of_trays;
  for (auto& [id, f] : faults) {
    if (f.m.time_to_recover && *f.m.time_to_recover == Duration::Max()) f.m.time_to_recover.reset();
    // A transient fault (gone within a minute, like a link flap) is not a part that must be taken out.
    const bool transient = f.m.reverted && *f.m.reverted - f.m.injected <= kTransient;
    const bool needed = f.needs_isolation && !transient;
    if (needed && f.covered && !f.m.time_to_isolate) {  // isolated before it happened, by its trays' drain
      f.m.time_to_isolate = Duration{};
      for (ComponentId t : f.trays) f.m.isolated.push_back(topo.at(t).name);
    }
    // A fault that touched no job recovers when it is isolated; one the healer rightly left alone (it
    // needed no isolation) when it ends, if it ends before the run does (the run's end reverts what is
    // left). A fault that needed isolation and got none has not recovered.
    if (f.m.jobs_touched == 0 && f.m.time_to_isolate) f.m.time_to_recover = f.m.time_to_isolate;
    else if (f.m.jobs_touched == 0 && !needed && f.m.reverted && *f.m.reverted < end)
      f.m.time_to_recover = *f.m.reverted - f.m.injected;
    f.m.gpus_direct = static_cast<int>(f.direct_gpus.size());
    const std::vector<ComponentId>& trays = f.collateral_trays();
    auto [counted, fresh] = gpus_of_trays.try_emplace(&trays, 0);
    if (fresh && f.collateral_shared && f.shared_gpus >= 0) counted->second = static_cast<size_t>(f.shared_gpus);
    else if (fresh) counted->second = topo.GpusOnTrays(trays);
    size_t collateral = counted->second;
    for (ComponentId g : f.direct_gpus)  // direct damage is not collateral
      collateral -= std::binary_search(trays.begin(), trays.end(), topo.TrayOf(g));
    f.m.gpus_collateral = static_cast<int>(collateral);
    if (needed) {
      ++needing;
      if (f.m.time_to_isolate) ++isolated;
      else run.missed_faults.push_back("#" + std::to_string(id) + " " + f.m.kind + " " + f.m.target);
    }
    run.faults.push_back(f.m);
  }
  run.precision = run.isolations ? static_cast<double>(run.correct_isolations) / run.isolations : 1.0;
  run.recall = needing ? static_cast<double>(isolated) / needing : 1.0;
  return run;
}

}  // namespace rackchaos::healer
