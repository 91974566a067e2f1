// Failure accounting per job (healer/metrics.cpp, docs/metrics.md): a failure during a restart is an
// interruption charged to it, time up and failures give the job's MTTF, and a part failing inside a tray
// the healer had already drained is not a missed fault. Every number worked out by hand.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "healer/metrics.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Fault;
using testing::Id;
using testing::Min;
using testing::Sec;
using testing::Topo;

const std::vector<JobInfo> kOneJob = {{0, "llm", 8, Duration::Seconds(1)}};

JobChanged Change(JobState state, double steps, double speed, FaultId cause, std::vector<ComponentId> trays,
               Duration lost = {}) {
  return {0, state, steps, speed > 0 ? 1.0 / speed : 0, speed, 8, lost, cause, "", std::move(trays)};
}

// Fault 1 fails r01.tray03.gpu2 at 10m: job 0 on trays 03 and 04 hangs; the healer drains tray03 and
// requeues it at 10m20s (10m of work lost); it restarts on trays 04 and 05 at 11m. At 12m fault 2 takes
// r01.tray05.nic0 down for 30 s: the restart stalls, and starts over at 12m30s; running from 17m30s.
std::vector<Event> RestartRun() {
  const ComponentId g = Id("r01.tray03.gpu2"), nic = Id("r01.tray05.nic0");
  const ComponentId x = Id("r01.tray03"), y = Id("r01.tray04"), z = Id("r01.tray05");
  const Time iso = Min(10) + Sec(20);
  return {
      {Sec(0), Change(JobState::kRunning, 0, 1.0, kNoFault, {x, y})},
      {Min(10), PhysicsChanged{g, "failed", 79, 1}},
      {Min(10), FaultInjected{1, "gpu_fail", g, -1, "r01.tray03.gpu2", "xid=79"}},
      {Min(10), Change(JobState::kHung, 600, 0, 1, {x, y})},
      {Min(10) + Sec(5), Detected{1, "xid", g, "Xid 79"}},
      {iso, Isolated{g, "gpu", {1}, "one GPU explains the symptoms"}},
      {iso, ActionTaken{"drain", x, kNoJob, true, "isolating r01.tray03.gpu2"}},
      {iso, Change(JobState::kQueued, 0, 0, 1, {x, y}, Min(10))},
      {iso, ActionTaken{"requeue_job", kNoComponent, 0, true, "restart"}},
      {Min(11), Change(JobState::kRestarting, 0, 0, 1, {y, z})},
      {Min(12), PhysicsChanged{nic, "link_down", 0, 2}},
      {Min(12), FaultInjected{2, "nic_down", nic, -1, "r01.tray05.nic0", ""}},
      {Min(12), Change(JobState::kHung, 0, 0, 2, {y, z})},
      {Min(12) + Sec(30), PhysicsChanged{nic, "link_up", 1, 2}},
      {Min(12) + Sec(30), FaultReverted{2, "link up"}},
      {Min(12) + Sec(30), Change(JobState::kRestarting, 0, 0, 2, {y, z})},
      {Min(17) + Sec(30), Change(JobState::kRunning, 0, 1.0, kNoFault, {y, z})},
  };
}

TEST_CASE("healer.metrics: a failure during a restart is an interruption of the job, charged to that failure") {
  const RunMetrics m = ComputeMetrics(RestartRun(), Topo(), kOneJob, Min(60));
  REQUIRE(m.jobs.size() == 1);
  const JobMetrics& j = m.jobs[0];
  CHECK(j.interruptions == 2);  // hung while running at 10m, stalled while restarting at 12m
  CHECK(j.failures == 2);
  // Up: running 0-10m and 17m30s-60m, restarting 11-12m and 12m30s-17m30s.
  CHECK(j.up == Min(10) + Min(1) + Min(5) + Sec(2550));
  const FaultMetrics& f2 = Fault(m, 2);
  CHECK(f2.jobs_touched == 1);
  CHECK(f2.jobs_interrupted == 1);
  CHECK(f2.time_to_recover == Min(5) + Sec(30));  // running again at 17m30s
  CHECK(f2.gpus_collateral == 7);                 // the placement it stopped (trays 04 and 05), minus the NIC's GPU
  CHECK(m.missed_faults.empty());                 // a 30 s flap needs no isolation
}

TEST_CASE("healer.metrics: job.mttf and failures per day from time up and failures") {
  const RunMetrics m = ComputeMetrics(RestartRun(), Topo(), kOneJob, Min(60));
  const JobMetrics& j = m.jobs[0];
  // 58.5 min up, 2 failures: 0.4875 h between failures, 49.2 a day.
  CHECK(j.up.Hours() / j.failures == doctest::Approx(0.4875));
  // A requeue the healer makes with no fault behind it is not a failure; nor is anything without a cause.
  std::vector<Event> quiet = {{Sec(0), Change(JobState::kRunning, 0, 1.0, kNoFault, {Id("r01.tray04")})},
                              {Min(5), Change(JobState::kQueued, 300, 0, kNoFault, {Id("r01.tray04")})},
                              {Min(5), Change(JobState::kRestarting, 300, 0, kNoFault, {Id("r01.tray05")})},
                              {Min(10), Change(JobState::kRunning, 300, 1.0, kNoFault, {Id("r01.tray05")})}};
  const JobMetrics q = ComputeMetrics(quiet, Topo(), kOneJob, Min(60)).jobs[0];
  CHECK(q.interruptions == 1);
  CHECK(q.failures == 0);
  CHECK(q.up == Min(60));
}

TEST_CASE("healer.metrics: a GPU failing in a tray the healer had already drained is not a missed fault") {
  std::vector<Event> events = RestartRun();
  const ComponentId g = Id("r01.tray03.gpu0"), x = Id("r01.tray03");
  events.push_back({Min(30), PhysicsChanged{g, "failed", 79, 3}});
  events.push_back({Min(30), FaultInjected{3, "gpu_fail", g, -1, "r01.tray03.gpu0", "xid=79"}});
  SUBCASE("the tray stays drained: isolated by that drain") {
    const RunMetrics m = ComputeMetrics(events, Topo(), kOneJob, Min(60));
    CHECK(m.missed_faults.empty());
    CHECK(m.recall == 1.0);
    const FaultMetrics& f3 = Fault(m, 3);
    CHECK(f3.time_to_isolate == Duration{});
    CHECK(f3.isolated == std::vector<std::string>{"r01.tray03"});
    CHECK(m.isolations == 1);  // no isolation of its own
  }
  SUBCASE("the tray is resumed with the GPU still failed: that fault needed an isolation of its own") {
    events.push_back({Min(40), ActionTaken{"resume", x, kNoJob, true, "repaired r01.tray03.gpu2"}});
    const RunMetrics m = ComputeMetrics(events, Topo(), kOneJob, Min(60));
    CHECK(m.missed_faults == std::vector<std::string>{"#3 gpu_fail r01.tray03.gpu0"});
    CHECK_FALSE(Fault(m, 3).time_to_isolate.has_value());
  }
  SUBCASE("a GPU failing in a tray that was drained and resumed before is missed as before") {
    events.insert(events.end() - 2, {Min(20), ActionTaken{"resume", x, kNoJob, true, "repaired"}});
    CHECK(ComputeMetrics(events, Topo(), kOneJob, Min(60)).missed_faults.size() == 1);
  }
}

}  // namespace
}  // namespace rackchaos::healer
