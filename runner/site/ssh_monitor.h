// SshMonitor: the real-mode observation source. What the simulator's physics produce for the healer,
// this reads from real hosts on the wall clock, through the inventory's `healer:` observe actions:
//
//   observe_tray   on every tray host each period. That the host answers at all is the node's
//                  heartbeat; its output may carry the rank's last step ("step <n> <compute_s> <step_s> [<send_s>]").
//   observe_links  on its run_on host: "<host> <iface> up|down" per line (NICs via trays.<t>.nics).
//   observe_jobs   on its run_on host: "<job> <STATE> <checkpoint step> <host,host,...|->" per line,
//                  STATE as Slurm prints it (RUNNING, PENDING, ...; NONE when the job is gone).
//
// Polls are asynchronous (SshPool::Run) and at most one per host is in flight, so an unreachable tray
// never delays the others; answers are turned into observations on the next period's tick, from a
// clock callback (never inside an Asio handler), and published through the SshBackend to the healer:
// HeartbeatChange (a host silent for two periods), LinkStateChange, JobStatus (on change) and
// StepReport (when every rank of a job finished a newer step). The same answers give the report its
// job timeline: JobChanged (running, hung = no step for three periods, restarting with the work lost
// since the checkpoint, slowed) and Checkpointed events, attributed to the last landed fault that can
// reach the job (Suspect: SshBackend::landings, TraysReached), as JobCharge below rules.
//
// The inventory's `observe:` sources (GPU telemetry, NVLink, the kernel log, BMC sensors; see
// observation_sources.h) run beside them in an ObservationDriver, on their own periods; the monitor
// publishes what they read to the healer the same way, and its tick hands their answers over too.
//
// Threading: the run's thread, like SshBackend. Borrowed references must outlive the monitor.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/event.h"
#include "healer/metrics.h"
#include "runner/site/inventory.h"
#include "runner/site/observation_driver.h"
#include "runner/ssh/ssh_pool.h"
#include "runner/site/ssh_backend.h"

namespace rackchaos::runner {

// The plan's jobs as the monitor follows them: the same record the metrics use.
using MonitoredJob = healer::JobInfo;

// The fault a real job's trouble is charged to. Real hosts do not say why a job hung or slowed, so the
// report charges the suspect (the last landed fault that reaches a tray the job held at its landing or
// since: SshMonitor::Suspect), as long as it can be the reason: while it is applied, and
// after its revert until the job is measured at full speed over a window that began after the revert
// (its restart and the work it redoes are the fault's; so is a stall that a short fault caused and the
// step window shows only after the revert). A slow step after that (a busy host, a noisy neighbour) is
// nobody's, as in the simulator, which knows its causes; charging it to the old fault stretched a tray
// pull's time to recover from 6 s to 30 s on a loaded machine.
class JobCharge {
 public:
  // Each tick at `now`: the suspect, whether it is still applied, and, when the job ran at full speed over
  // a measured window, when that window began.
  void See(FaultId landed, bool applied, std::optional<Time> full_speed_since, Time now) {
    if (landed != fault_) {
      fault_ = landed;
      off_since_.reset();
    }
    if (landed == kNoFault || applied) return;
    if (!off_since_) off_since_ = now;
    if (full_speed_since && *full_speed_since >= *off_since_) clear_of_ = landed;
  }
  FaultId Cause(FaultId landed) const { return landed == clear_of_ ? kNoFault : landed; }

 private:
  FaultId fault_ = kNoFault;     // the suspect as of the last See
  std::optional<Time> off_since_;  // when it was first seen reverted
  FaultId clear_of_ = kNoFault;  // the job ran at full speed after this fault's revert
};

// A job's step rate, measured over its ranks' answers: each answer's time (when it came, not the tick
// that asked) and the newest step any rank had finished. The window is the fewest answers that still span
// `span`, measured between answers. Answers lag their tick by up to a period, more on a loaded machine:
// trimmed against the tick's time instead, the window sat at about its span and often fell just short,
// the rate read "unknown", and a slowed or recovering job flip-flopped between full speed and its speed.
class StepWindow {
 public:
  explicit StepWindow(Duration span = Duration{}) : span_(span) {}
  // An answer at `at` with the newest step `step`; one no later than the last answer adds nothing.
  void Add(Time at, long step) {
    if (!answers_.empty() && at <= answers_.back().first) return;
    answers_.push_back({at, step});
    while (answers_.size() > 2 && answers_.back().first - answers_[1].first >= span_) answers_.pop_front();
  }
  void Clear() { answers_.clear(); }  // a new placement: its ranks start again from the checkpoint

  struct Rate {
    bool measured = false;  // the window spans `span`; otherwise the rate is unknown
    double speed = 1;       // steps per second against `nominal_step`'s, at most 1
    double step_s = 0;      // seconds per step over the window; 0 without a step in it
    Time from{};            // when the window began
  };
  Rate Measure(Duration nominal_step) const {
    Rate r;
    if (answers_.empty() || nominal_step <= Duration{}) return r;
    const Duration over = answers_.back().first - answers_.front().first;
    if (over < span_ || over <= Duration{}) return r;  // one answer (or a zero span) measures no rate
    const double steps = static_cast<double>(answers_.back().second - answers_.front().second);
    r.measured = true;
    r.speed = std::min(1.0, steps * nominal_step.Seconds() / over.Seconds());
    r.step_s = steps > 0 ? over.Seconds() / steps : 0;
    r.from = answers_.front().first;
    return r;
  }

 private:
  Duration span_;
  std::deque<std::pair<Time, long>> answers_;  // (when, newest step), oldest first
};

// A job's placement as the scheduler reported it: from when it was seen, on which trays (sorted; none
// while the job runs nowhere).
struct JobPlacement {
  Time since{};
  std::vector<ComponentId> trays;
};

// What a job's trouble can be due to: of the faults landed so far (SshBackend::landings, the last landed
// last), the last whose reach (TraysReached) meets a tray of a placement the job `held` when it landed or
// took while it held, as the simulator's causes would have it: a job on another rack, or on other trays
// of the rack, that slows while a tray is pulled is not slowed by the pull, nor is one placed on that
// tray after the pull was over. kNoFault if none reaches it.
FaultId Suspect(const std::vector<SshBackend::Landing>& landings, const std::vector<JobPlacement>& held);

class SshMonitor {
 public:
  SshMonitor(const Inventory& inventory, const cluster::Topology& topology, ssh::SshPool& pool, Clock& clock,
             SshBackend& backend, EventSink& events, std::vector<MonitoredJob> jobs);
  ~SshMonitor();

  // The inventory hosts the observe actions and the `observe:` sources run on (sorted, unique).
  static std::vector<std::string> Hosts(const Inventory& inventory);

  void Start();  // the first poll now, then one per observe_period
  void Stop();   // no further ticks; answers still in flight are dropped

 private:
  struct Answer {
    bool ok = false;
    Time at{};
    std::string out;
  };
  struct Tray {
    ComponentId id = kNoComponent;
    std::string host;
    bool in_flight = false;
    bool failing = false;  // the last answer was an error (connection refused, timed out)
    Time asked_at{};  // when the poll in flight was sent
    std::optional<Answer> answer;
    Time last_seen{}, step_seen{};  // the last answer; the last answer with a step
    bool alive = true;
    long step = -1;
    double compute_s = 0, step_s = 0, send_s = -1;  // send_s: -1 = not reported
  };
  struct Job {
    MonitoredJob spec;
    JobState sched = JobState::kQueued;  // as the scheduler says
    std::vector<ComponentId> trays;
    std::vector<JobPlacement> held;  // every placement the scheduler reported, in order
    long ckpt = 0, last_step = -1, reported_step = -1;
    Time progress_at{};
    JobState state = JobState::kQueued;  // as the report records it
    double speed = 1;
    bool timed = false;  // the last JobChanged while running carried a measured step time
    bool seen = false;
    bool replaced = false;                       // a new placement appeared since the last Track
    JobCharge charge;                            // what its changes are charged to
    StepWindow progress;                         // the step rate over the last kSpeedPeriods - 1 periods
  };

  void Tick();
  void Poll();
  void PollSite(const std::string& action, bool& in_flight, std::optional<Answer>& answer);
  void Heartbeats(Time now);
  void Links(const std::string& out, Time now);
  void Jobs(const std::string& out, Time now);
  void Steps(Job& job, Time now);
  void Track(Job& job, Time now);
  void Publish(cluster::ObservationBody body, Time now);
  Tray& TrayOf(ComponentId tray);  // a tray of a job's placement (always one of the inventory's)

  const Inventory& inv_;
  const cluster::Topology& topo_;
  ssh::SshPool& pool_;
  Clock& clock_;
  SshBackend& backend_;
  EventSink& events_;
  Duration period_;
  std::vector<Tray> trays_;
  std::map<std::string, size_t> tray_of_host_;
  std::map<std::string, Job> jobs_;  // by name
  std::map<ComponentId, bool> link_up_;
  bool links_in_flight_ = false, jobs_in_flight_ = false;
  std::optional<Answer> links_answer_, jobs_answer_;
  TimerId timer_ = 0;
  bool running_ = false;
  ObservationDriver driver_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rackchaos::runner
