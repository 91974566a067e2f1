// RealTimeline: a real run's faults on the wall clock, armed ahead of time and landed together.
//
// Faults that share an `at` form one group. The arm lead before `at` (and never before the previous
// group's `at`, so that at most one group is armed at a time) every fault of the group is staged
// through the SSH backend: its ledger entry, with revert command and deadline, is written, and its
// apply command is started on its host, gated (SshBackend::ArmStaged). The fire lead before `at` the
// hosts are told the wall-clock instant `at` stands for, and each runs its apply then on its own
// clock (SshBackend::FireArmed): the landing spread is that of the hosts' clocks and of waking a
// process, not of a network pass. Each landed fault is then verified, gets its host-side expiry,
// and is reverted `for` later. A fault that cannot be staged, armed or applied fails alone (an
// ActionTaken "fault_apply" with ok = false) and whatever it changed is reverted. A stop between
// arming and firing disarms: nothing of that group ever runs.
//
// Not thread-safe: everything runs from WallClock callbacks on the pool's thread. Borrowed
// references must outlive it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/event.h"
#include "runner/site/ssh_backend.h"
#include "runner/spec/validate.h"
#include "runner/site/wall_clock.h"
#include "runner/engine/watch.h"

namespace rackchaos::runner {

// How long before their `at` a group's applies are started on the hosts (arm), and when the hosts are
// told the instant (fire): the inventory's ssh.arm_lead and ssh.fire_lead. The fire lead covers one
// write per host (milliseconds even for 256 hosts).
struct ArmLeads {
  Duration arm = Duration::Seconds(3);
  Duration fire = Duration::Millis(250);
};

class RealTimeline {
 public:
  RealTimeline(const RunSpec& spec, WallClock& clock, SshBackend& backend, EventSink& events, Watch& watch,
               ArmLeads leads = {})
      : spec_(spec), clock_(clock), backend_(backend), events_(events), watch_(watch), leads_(leads) {}

  // Schedules every group's arming and firing on the clock.
  void Schedule();
  // Disarms what is armed, reverts everything still applied; returns how many reverts failed.
  int RevertAll(const std::string& why);
  int failures() const { return failures_; }
  // The fault injected last (the report's guess at what a job's trouble is due to), or kNoFault.
  FaultId last_injected() const { return last_injected_; }

 private:
  struct Applied {
    const ResolvedFault* fault;
    injectors::Applied applied;
    TimerId revert_timer = 0;
  };
  using Group = std::vector<const ResolvedFault*>;

  void Arm(const Group& group, Time at);
  void Fire(Time at);
  // `land`: the instant the hosts were told (the results arrive about 100 ms later, the gate in runner/ssh/remote_command.cpp).
  void Landed(Applied a, Time land);
  void Failed(const ResolvedFault& f, const Status& why);
  bool Revert(const Applied& a, const std::string& why);

  const RunSpec& spec_;
  WallClock& clock_;
  SshBackend& backend_;
  EventSink& events_;
  Watch& watch_;
  ArmLeads leads_;
  std::vector<Applied> armed_;    // the armed group's faults, staged and armed
  std::set<FaultId> arm_failed_;  // faults of the armed group that failed part-way: undone after the fire
  std::map<FaultId, Applied> applied_;
  int failures_ = 0;
  FaultId last_injected_ = kNoFault;
};

}  // namespace rackchaos::runner
