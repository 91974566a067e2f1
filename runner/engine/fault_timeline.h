// FaultTimeline: a run's faults on its clock, for every backend. It is where the safety rules of a
// running plan hold, so they hold on the simulator and on real hosts alike.
//
// Faults that share an `at` form one group. Backend::Leads().stage before `at` (never before the
// previous group's `at`, so that at most one group is staged at a time) the group is staged: each
// fault's injector applies it through the backend, which stages it (a site writes its ledger entry and
// queues its command) or, on a backend that stages nothing (the simulator: its lead is zero), applies it
// there and then. The group is sealed (armed on the hosts), and Leads().commit before `at` committed:
// it lands at the instant `at` everywhere at once. Each landed fault is recorded (FaultInjected), kept
// in the open-fault map and reverted `for` later; RevertAll reverts what is still open at the end.
//
// Safety: safety.max_faults_at_once counts the open faults and those staged in the group; a fault past
// it is not applied, recorded as a "safety" action with the reason. safety.abort.faults_at_once is the
// Watch's (told after every apply and revert). A fault that cannot be staged, armed or landed fails
// alone (an ActionTaken "fault_apply" with ok = false) and whatever of it landed is undone; failures()
// counts those and the failed reverts, which make the run's verdict an error, except a revert the
// backend carried out later itself (Backend::RevertedLate: a lost host that answered again).
//
// Not thread-safe: everything runs from clock callbacks on the run's thread. Borrowed references must
// outlive it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/backend.h"
#include "core/clock.h"
#include "core/event.h"
#include "runner/engine/watch.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

class FaultTimeline {
 public:
  FaultTimeline(const RunSpec& spec, Clock& clock, cluster::Backend& backend, EventSink& events, Watch& watch)
      : spec_(spec), clock_(clock), backend_(backend), events_(events), watch_(watch), leads_(backend.Leads()) {}

  // Schedules every group's staging and commit on the clock.
  void Schedule();
  // Abandons a staged group and reverts every open fault (then the backend's own safety net), each
  // recorded as FaultReverted with `why`; returns how many reverts failed.
  int RevertAll(const std::string& why);
  // Faults that could not be applied, armed or landed, and reverts that failed and were not carried
  // out later by the backend.
  int failures() const;
  int injected() const { return injected_; }
  // How many faults are applied now.
  int open_faults() const { return static_cast<int>(open_.size()); }

 private:
  struct Open {
    const ResolvedFault* fault;
    injectors::Applied applied;
    TimerId revert_timer = 0;
  };
  using Group = std::vector<const ResolvedFault*>;

  void Stage(const Group& group, Time at);
  void Commit(Time at);
  // True when one more fault would pass safety.max_faults_at_once (then it is skipped, on the record).
  bool AtLimit(const ResolvedFault& f);
  void Landed(Open o, Time at);
  void Failed(const ResolvedFault& f, const Status& why);
  bool Revert(const Open& o, const std::string& why);

  const RunSpec& spec_;
  Clock& clock_;
  cluster::Backend& backend_;
  EventSink& events_;
  Watch& watch_;
  cluster::GroupLeads leads_;
  std::vector<Open> staged_;       // the group being staged or sealed
  std::set<FaultId> part_failed_;  // faults of that group part of which failed: undone after the commit
  std::map<FaultId, Open> open_;   // landed and not reverted
  int failures_ = 0;
  std::set<FaultId> revert_failed_;  // faults whose revert failed (the backend may have made it good since)
  int injected_ = 0;
};

}  // namespace rackchaos::runner
