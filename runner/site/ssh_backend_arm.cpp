// SshBackend's arming: faults staged, armed on their hosts ahead of time, landed together at one
// wall-clock instant, or disarmed unrun (see ssh_backend.h and SshPool::ArmEach / FireAt). The
// Backend's fault-group verbs (StageGroup, SealGroup, CommitGroup, AbandonGroup) are these steps.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/log.h"
#include "core/wall_time.h"
#include "runner/site/ssh_backend.h"

namespace rackchaos::runner {

int64_t SshBackend::UnixMicrosAt(Time t) const { return UnixMicrosNow() + (t - clock_.Now()).us; }
Time SshBackend::TimeAtUnix(int64_t unix_us) const { return clock_.Now() + Duration::Micros(unix_us - UnixMicrosNow()); }

bool SshBackend::StageGroup(Time at) {
  BeginStaging(std::max(at - clock_.Now(), Duration{}));
  return true;
}

void SshBackend::BeginStaging(Duration until_landing) {
  staging_ = true;
  until_landing_ = until_landing;
  staged_.clear();
}

void SshBackend::Unstage(FaultId fault, const std::string& why) {
  for (auto it = staged_.begin(); it != staged_.end();) {
    if (it->fault != fault) {
      ++it;
      continue;
    }
    CloseUnapplied(it->key, why);
    it = staged_.erase(it);
  }
}

void SshBackend::CloseUnapplied(const std::string& key, const std::string& why) {
  auto it = open_.find(key);
  if (it == open_.end()) return;
  if (options_.ledger && it->second.ledger_entry)
    (void)options_.ledger->Close(it->second.ledger_entry, "never applied: " + why);
  open_.erase(it);
}

std::map<FaultId, Status> SshBackend::ArmStaged() {
  staging_ = false;
  std::map<FaultId, Status> failed;
  if (staged_.empty()) return failed;
  std::vector<std::string> hosts, commands;
  for (const Staged& s : staged_) {
    hosts.push_back(s.host);
    commands.push_back(s.apply);
  }
  const Status all = pool_.ArmEach(hosts, commands, armed_);
  for (size_t i = 0; i < staged_.size(); ++i) {
    const Staged& s = staged_[i];
    const Status why = armed_ ? armed_->status()[i] : all;
    events_.Record(
        {clock_.Now(), ActionTaken{"ssh.arm", s.component, kNoJob, why.ok(),
                                   s.host + ": " + s.apply + " -> " + (why.ok() ? "armed" : why.ToString())}});
    if (why.ok()) continue;
    failed.emplace(s.fault, why.WithContext("arming fault #" + std::to_string(s.fault) + " " + s.key));
    CloseUnapplied(s.key, "arming failed: " + why.message());
  }
  if (!armed_) staged_.clear();
  return failed;
}

std::map<FaultId, Status> SshBackend::FireArmed(int64_t unix_us) {
  std::map<FaultId, Status> failed;
  if (!armed_) return failed;
  const auto armed = std::exchange(armed_, nullptr);
  const auto staged = std::exchange(staged_, {});
  // The latest a host may start an apply: halfway between the instant and the earliest the armed
  // command can time out here (arming + command_timeout, arming at most arm_lead before the instant),
  // so an apply whose go line a partition held back never starts after this runner gave up on it and
  // undid it.
  const int64_t latest = unix_us + (inv_.command_timeout - inv_.arm_lead).us / 2;
  const std::vector<ssh::CommandResult> results = pool_.FireAt(*armed, unix_us, latest);
  RecordLanding(results, unix_us);
  const Time land = std::min(TimeAtUnix(unix_us), clock_.Now());  // the results arrive a little after it
  for (size_t i = 0; i < staged.size(); ++i) {
    if (!armed->status()[i].ok()) continue;  // closed when arming failed
    const Staged& s = staged[i];
    if (results[i].status.ok() && results[i].exit_status == 125) {  // the go line came too late: not run
      (void)Record("apply", s.host, s.component, s.apply, results[i], 0);
      failed.emplace(s.fault, Status::Unavailable(s.host + ": the apply's go line reached the host too late; not run"));
      CloseUnapplied(s.key, "its go line reached " + s.host + " too late");
      continue;
    }
    Status landed =
        Landed(s.key, Record("apply", s.host, s.component, s.apply, results[i], 0), s.expect_applied, s.fault, land);
    if (!landed.ok()) failed.emplace(s.fault, landed);
  }
  return failed;
}

void SshBackend::RecordLanding(const std::vector<ssh::CommandResult>& results, int64_t unix_us) {
  int64_t first = 0, last = 0, first_end = 0, last_end = 0;
  size_t landed = 0;
  for (const ssh::CommandResult& r : results) {
    if (r.landed_wall_us == 0) continue;
    const int64_t end = r.apply_end_wall_us != 0 ? r.apply_end_wall_us : r.landed_wall_us;
    first = landed == 0 ? r.landed_wall_us : std::min(first, r.landed_wall_us);
    first_end = landed == 0 ? end : std::min(first_end, end);
    last_end = landed == 0 ? end : std::max(last_end, end);
    last = landed++ == 0 ? r.landed_wall_us : std::max(last, r.landed_wall_us);
  }
  if (landed == 0) return;
  char text[240];
  std::snprintf(text, sizeof text,
                "%zu of %zu apply command(s) started within %.1f ms of each other by their hosts' clocks, the "
                "first %.1f ms after the instant; they ended within %.1f ms",
                landed, results.size(), static_cast<double>(last - first) / 1000.0,
                static_cast<double>(first - unix_us) / 1000.0, static_cast<double>(last_end - first_end) / 1000.0);
  spdlog::info("{}", text);
  events_.Record({clock_.Now(), ActionTaken{"ssh.land", kNoComponent, kNoJob, landed == results.size(), text}});
}

void SshBackend::Disarm(const std::string& why) {
  if (!armed_) return;
  const auto armed = std::exchange(armed_, nullptr);
  const auto staged = std::exchange(staged_, {});
  pool_.Disarm(*armed);
  for (size_t i = 0; i < staged.size(); ++i) {
    if (!armed->status()[i].ok()) continue;
    const Staged& s = staged[i];
    const ssh::CommandResult& r = armed->results()[i];
    (void)Record("disarm", s.host, s.component, s.apply, r, 125);
    if (r.status.ok() && r.exit_status == 125) {
      CloseUnapplied(s.key, "disarmed (" + why + ")");
    } else if (Status undo = RevertFault(s.key, why); !undo.ok()) {
      spdlog::error("disarm: {} may have run and its revert failed: {}", s.key, undo.ToString());
    }
  }
}

Status SshBackend::RevertFaultTargets(FaultId fault, const std::string& why) {
  std::vector<std::string> keys;
  for (const auto& [key, o] : open_)
    if (o.fault == fault) keys.push_back(key);
  Status first;
  for (const std::string& key : keys)
    if (Status s = RevertFault(key, why); !s.ok() && first.ok()) first = s;
  return first;
}

}  // namespace rackchaos::runner
