// Recovery and damage metrics from a hand-built event list, every number worked out by hand.
#include "healer/metrics.h"

#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Fault;
using testing::Id;
using testing::Min;
using testing::Sec;
using testing::Topo;

const std::vector<JobInfo> kJobs = {{0, "llm", 8, Duration::Seconds(1)}};

JobChanged Job(JobState state, double steps, double step_time_s, double speed, FaultId cause,
               std::vector<ComponentId> trays, Duration lost = {}) {
  return {0, state, steps, step_time_s, speed, 8, lost, cause, "", std::move(trays)};
}

// Fault 1 caps r01.tray03.gpu2 at 10m; job 0 on trays 03 and 04 slows to 0.8, the straggler detector
// fires at 15m, the healer isolates the GPU (draining tray03) at 15m20s and requeues the job, which
// throws away 10m of work, restarts on trays 04 and 05 at 16m and runs at full speed from 18m.
std::vector<Event> BaseRun() {
  const ComponentId g = Id("r01.tray03.gpu2"), x = Id("r01.tray03"), y = Id("r01.tray04"), z = Id("r01.tray05");
  return {
      {Sec(0), Job(JobState::kRunning, 0, 1.0, 1.0, kNoFault, {x, y})},
      {Min(10), PhysicsChanged{g, "power_cap", 600, 1}},
      {Min(10), FaultInjected{1, "gpu_throttle", g, -1, "r01.tray03.gpu2", "power_cap=600W"}},
      {Min(10), Job(JobState::kRunning, 600, 1.25, 0.8, 1, {x, y})},
      {Min(15), Detected{1, "straggler", g, "rank slower than the median for 5m"}},
      {Min(15) + Sec(20), Isolated{g, "gpu", {1}, "one GPU explains the symptoms"}},
      {Min(15) + Sec(20), ActionTaken{"drain", x, kNoJob, true, "isolating r01.tray03.gpu2"}},
      {Min(15) + Sec(20), Job(JobState::kQueued, 300, 0, 0, 1, {x, y}, Min(10))},
      {Min(15) + Sec(20), ActionTaken{"requeue_job", kNoComponent, 0, true, "restart"}},
      {Min(16), Job(JobState::kRestarting, 300, 0, 0, 1, {y, z})},
      {Min(18), Job(JobState::kRunning, 300, 1.0, 1.0, kNoFault, {y, z})},
  };
}

TEST_CASE("healer.metrics: detect, isolate and recover times, blast radius and rework of one fault") {
  RunMetrics m = ComputeMetrics(BaseRun(), Topo(), kJobs, Min(60));
  REQUIRE(m.faults.size() == 1);
  const FaultMetrics& f = m.faults[0];
  CHECK(f.fault == 1);
  CHECK(f.kind == "gpu_throttle");
  CHECK(f.target == "r01.tray03.gpu2");
  CHECK(f.injected == Min(10));
  CHECK_FALSE(f.reverted.has_value());
  CHECK(f.time_to_detect == Min(5));
  CHECK(f.time_to_isolate == Min(5) + Sec(20));
  CHECK(f.time_to_recover == Min(18) - Min(10));
  CHECK(f.rework == Min(10));
  CHECK(f.gpus_direct == 1);
  CHECK(f.gpus_collateral == 7);  // the job's 8 GPUs on trays 03 and 04 (tray03 also drained), minus the GPU
  CHECK(f.jobs_touched == 1);
  CHECK(f.jobs_interrupted == 1);
  CHECK(f.isolated == std::vector<std::string>{"r01.tray03.gpu2"});
  // 8 GPUs x (160 s stalled + 320 s x 20% slow + 600 s redone)
  CHECK(f.gpu_hours_lost == doctest::Approx(8 * (160 + 64 + 600) / 3600.0));

  CHECK(m.isolations == 1);
  CHECK(m.correct_isolations == 1);
  CHECK(m.precision == 1.0);
  CHECK(m.recall == 1.0);
  CHECK(m.false_isolations.empty());
  CHECK(m.missed_faults.empty());

  REQUIRE(m.impacts.size() == 1);
  CHECK(m.impacts[0].fault == 1);
  CHECK(m.impacts[0].job == 0);
  CHECK(m.impacts[0].job_name == "llm");
  CHECK(m.impacts[0].interrupted);
  CHECK(m.impacts[0].stalled == Sec(160));
  CHECK(m.impacts[0].rework == Min(10));
  CHECK(m.impacts[0].slowdown_hours == doctest::Approx(64 / 3600.0));
}

TEST_CASE("healer.metrics: a fault's collateral is the union of its drains and the placement it first interrupted") {
  // After the restart on trays 04 and 05 the same fault hangs the job again: the job idles its 8 GPUs
  // once, not 12 (collateral never more than the job's GPUs and the drained trays).
  std::vector<Event> events = BaseRun();
  events.push_back({Min(20), Job(JobState::kHung, 420, 0, 0, 1, {Id("r01.tray04"), Id("r01.tray05")})});
  const RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  const FaultMetrics& f = Fault(m, 1);
  CHECK(f.gpus_collateral == 7);  // trays 03 and 04, minus the GPU
  // A drain outside the placements it interrupted (tray03 leaves the job's list) still counts.
  std::vector<Event> apart = BaseRun();
  for (Event& e : apart)
    if (auto* c = std::get_if<JobChanged>(&e.body); c && c->trays.Contains(Id("r01.tray03")))
      c->trays = std::vector<ComponentId>{Id("r01.tray04")};
  CHECK(Fault(ComputeMetrics(apart, Topo(), kJobs, Min(60)), 1).gpus_collateral == 7);  // trays 03 and 04
}

TEST_CASE("healer.metrics: a drain of a tray the collateral holds adds nothing - a later new tray still joins it, "
          "a part that is not a compute tray with no GPUs") {
  std::vector<Event> events = BaseRun();
  const ActionTaken again{"drain", Id("r01.tray03"), kNoJob, true, "isolating r01.tray03.gpu2"};
  events.insert(events.begin() + 7, {Min(15) + Sec(20), again});
  CHECK(Fault(ComputeMetrics(events, Topo(), kJobs, Min(60)), 1).gpus_collateral == 7);  // trays 03 and 04
  const ActionTaken other{"drain", Id("r01.tray05"), kNoJob, true, "isolating r01.tray03.gpu2"};
  events.insert(events.begin() + 8, {Min(15) + Sec(20), other});
  CHECK(Fault(ComputeMetrics(events, Topo(), kJobs, Min(60)), 1).gpus_collateral == 11);  // 03, 04 and 05
  // The healer drains compute trays only; a drain naming another part (a switch tray) joins the list and
  // counts no GPUs.
  const ActionTaken odd{"drain", Id("r01.switch4"), kNoJob, true, "isolating r01.tray03.gpu2"};
  events.insert(events.begin() + 9, {Min(15) + Sec(20), odd});
  CHECK(Fault(ComputeMetrics(events, Topo(), kJobs, Min(60)), 1).gpus_collateral == 11);  // still 03, 04 and 05
}

TEST_CASE("healer.metrics: ETTR and goodput of the job") {
  RunMetrics m = ComputeMetrics(BaseRun(), Topo(), kJobs, Min(60));
  REQUIRE(m.jobs.size() == 1);
  const JobMetrics& j = m.jobs[0];
  CHECK(j.job == 0);
  CHECK(j.name == "llm");
  CHECK(j.gpus == 8);
  CHECK(j.wall == Min(60));
  // Running 0-15m20s and 18m-60m (3440 s), minus the 600 s thrown away.
  CHECK(j.productive == Sec(2840));
  CHECK(j.ettr == doctest::Approx(2840.0 / 3600));
  CHECK(j.interruptions == 1);
  // 300 kept steps at the restart, then 2520 s at 1 s per step; nominal 1 s per step.
  CHECK(j.steps == doctest::Approx(2820));
  CHECK(j.goodput == doctest::Approx(2820.0 / 3600));
}

TEST_CASE("healer.metrics: isolating an unrelated tray is a false isolation") {
  std::vector<Event> events = BaseRun();
  const ComponentId other = Id("r02.tray05");
  events.push_back({Min(29) + Sec(40), Detected{2, "heartbeat", other, "3 heartbeats missed"}});
  events.push_back({Min(30), Isolated{other, "compute_tray", {2}, "node stopped answering"}});
  events.push_back({Min(30), ActionTaken{"drain", other, kNoJob, true, "isolating r02.tray05"}});
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK(m.isolations == 2);
  CHECK(m.correct_isolations == 1);
  CHECK(m.precision == doctest::Approx(0.5));
  CHECK(m.false_isolations == std::vector<std::string>{"r02.tray05 at 30m"});
  CHECK(m.recall == 1.0);
  const FaultMetrics& f = Fault(m, 1);
  CHECK(f.gpus_collateral == 7);  // the unrelated drain is not this fault's damage
  CHECK(f.isolated == std::vector<std::string>{"r01.tray03.gpu2"});
}

TEST_CASE("healer.metrics: drained GPUs and GPU-hours from drains and resumes - faulty isolations named") {
  std::vector<Event> events = BaseRun();
  const ComponentId x = Id("r01.tray03"), other = Id("r02.tray05");
  // tray03 (drained at 15m20s) comes back at 45m20s; the false isolation of r02.tray05 at 30m stays
  // drained to the end (60m); a failed drain takes nothing out.
  events.push_back({Min(30), Isolated{other, "compute_tray", {2}, "node stopped answering"}});
  events.push_back({Min(30), ActionTaken{"drain", other, kNoJob, true, "isolating r02.tray05"}});
  events.push_back({Min(31), ActionTaken{"drain", Id("r02.tray06"), kNoJob, false, "isolating r02.tray06: timeout"}});
  events.push_back({Min(45) + Sec(20), ActionTaken{"resume", x, kNoJob, true, "diagnostic passed"}});
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK(m.gpus_drained == 8);
  CHECK(m.drained_gpu_hours == doctest::Approx(4 * 0.5 + 4 * 0.5));  // 4 GPUs x 30 min, twice
  CHECK(m.faulty_isolations == std::vector<std::string>{"r01.tray03.gpu2"});
  CHECK(m.false_isolations == std::vector<std::string>{"r02.tray05 at 30m"});
  // Drained again after the resume: counted again.
  events.push_back({Min(50), ActionTaken{"drain", x, kNoJob, true, "isolating r01.tray03 again"}});
  m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK(m.gpus_drained == 12);
  CHECK(m.drained_gpu_hours == doctest::Approx(2 + 4 * 10 / 60.0 + 2));
}

TEST_CASE("healer.metrics: a fault that changed a GPU and was never isolated is missed") {
  std::vector<Event> events = BaseRun();
  const ComponentId g2 = Id("r01.tray07.gpu1");
  events.push_back({Min(20), PhysicsChanged{g2, "thermal_slowdown", 88, 2}});
  events.push_back({Min(20), FaultInjected{2, "valve_close", Id("r01.tray07.valve"), -1, "r01.tray07.valve", ""}});
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  REQUIRE(m.faults.size() == 2);
  CHECK(m.missed_faults == std::vector<std::string>{"#2 valve_close r01.tray07.valve"});
  CHECK(m.recall == doctest::Approx(0.5));
  CHECK(m.precision == 1.0);
  const FaultMetrics& f2 = Fault(m, 2);
  CHECK_FALSE(f2.time_to_detect.has_value());
  CHECK_FALSE(f2.time_to_isolate.has_value());
  CHECK_FALSE(f2.time_to_recover.has_value());
  CHECK(f2.gpus_direct == 1);
  CHECK(f2.jobs_touched == 0);
}

// Two faults on one GPU, one after the other: a detection goes to the fault active on the part then,
// not to the earliest ever injected there; one that lands just after a revert (a poll's delay) goes to
// the fault just reverted.
TEST_CASE("healer.metrics: a detection is credited to the fault active on its part - not to one reverted") {
  const ComponentId g = Id("r01.tray06.gpu0");
  const std::vector<Event> events = {
      {Min(1), PhysicsChanged{g, "power_cap", 600, 1}},
      {Min(1), FaultInjected{1, "gpu_throttle", g, -1, "r01.tray06.gpu0", "power_cap=600W"}},
      {Min(5), PhysicsChanged{g, "power_cap", 1200, 1}},
      {Min(5), FaultReverted{1, ""}},
      {Min(5) + Sec(10), Detected{1, "straggler", g, "slow rank"}},
      {Min(20), PhysicsChanged{g, "power_cap", 500, 2}},
      {Min(20), FaultInjected{2, "gpu_throttle", g, -1, "r01.tray06.gpu0", "power_cap=500W"}},
      {Min(21), Detected{2, "straggler", g, "slow rank"}},
      {Min(25), FaultReverted{2, ""}},
      // A crashed process is over at once (never reverted): the GPU failing later takes its own symptom.
      {Min(30), PhysicsChanged{g, "process_crash", 0, 3}},
      {Min(30), FaultInjected{3, "process_crash", g, -1, "r01.tray06.gpu0", ""}},
      {Min(40), PhysicsChanged{g, "failed", 79, 4}},
      {Min(40), FaultInjected{4, "gpu_fail", g, -1, "r01.tray06.gpu0", "xid=79"}},
      {Min(40) + Sec(2), Detected{3, "xid", g, "Xid 79"}},
  };
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  REQUIRE(m.faults.size() == 4);
  CHECK(Fault(m, 1).time_to_detect == Duration::Seconds(250));  // 5m10s - 1m
  CHECK(Fault(m, 2).time_to_detect == Duration::Minutes(1));
  CHECK_FALSE(Fault(m, 3).time_to_detect.has_value());
  CHECK(Fault(m, 4).time_to_detect == Duration::Seconds(2));
}

TEST_CASE("healer.metrics: a fault that only moved a valve open needs no isolation") {
  std::vector<Event> events = BaseRun();
  const ComponentId valve = Id("r01.tray09.valve");
  events.push_back({Min(20), PhysicsChanged{valve, "valve_opening", 0.9, 2}});
  events.push_back({Min(20), FaultInjected{2, "valve_partial", valve, -1, "r01.tray09.valve", "opening=90%"}});
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK(m.missed_faults.empty());
  CHECK(m.recall == 1.0);
  CHECK(Fault(m, 2).gpus_direct == 0);
}

TEST_CASE("healer.metrics: a job still down at the end has no recovery time - an isolated fault without jobs recovers "
          "when isolated") {
  std::vector<Event> events = BaseRun();
  events.pop_back();  // the job never runs again
  events.pop_back();
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK_FALSE(Fault(m, 1).time_to_recover.has_value());
  CHECK(m.jobs[0].interruptions == 1);
  CHECK(m.impacts[0].stalled == Min(60) - Min(15) - Sec(20));

  const ComponentId g = Id("r02.tray02.gpu0");
  std::vector<Event> idle = {
      {Min(1), PhysicsChanged{g, "link_down", 0, 1}},
      {Min(1), FaultInjected{1, "nvlink_down", g, 3, "r02.tray02.gpu0.nvlink3", ""}},
      {Min(1) + Sec(5), Detected{1, "link_state", g, "NVLink port 3 inactive"}},
      {Min(1) + Sec(25), Isolated{g, "gpu", {1}, "one GPU explains the symptoms"}},
      {Min(1) + Sec(25), ActionTaken{"drain", Id("r02.tray02"), kNoJob, true, ""}},
  };
  RunMetrics i = ComputeMetrics(idle, Topo(), {}, Min(10));
  const FaultMetrics& f = Fault(i, 1);
  CHECK(f.target == "r02.tray02.gpu0.nvlink3");
  CHECK(f.time_to_detect == Sec(5));
  CHECK(f.time_to_isolate == Sec(25));
  CHECK(f.time_to_recover == Sec(25));
  CHECK(f.gpus_direct == 1);
  CHECK(f.gpus_collateral == 3);  // the rest of the drained tray
  CHECK(i.precision == 1.0);
  CHECK(i.recall == 1.0);
}

// Fault 1 takes r01.tray03.nic2 down at 10m; job 0 on trays 03 and 04 keeps its traffic on NVLink and
// never slows. The healer isolates the NIC at 10m20s, drains tray03 and requeues the job, which throws
// away 10m of work (no cause of its own), restarts on trays 04 and 05 at 11m and runs from 13m.
std::vector<Event> RequeueRun(bool job_failed_first) {
  const ComponentId nic = Id("r01.tray03.nic2"), x = Id("r01.tray03"), y = Id("r01.tray04"), z = Id("r01.tray05");
  const Time iso = Min(10) + Sec(20);
  std::vector<Event> ev = {
      {Sec(0), Job(JobState::kRunning, 0, 1.0, 1.0, kNoFault, {x, y})},
      {Min(10), PhysicsChanged{nic, "link_down", 0, 1}},
      {Min(10), FaultInjected{1, "link_down", nic, -1, "r01.tray03.nic2", ""}},
      {Min(10), Detected{1, "link_state", nic, "NIC link down"}},
      {iso, Isolated{nic, "nic", {1}, "the NIC's link is down"}},
      {iso, ActionTaken{"drain", x, kNoJob, true, "isolating r01.tray03.nic2"}},
  };
  // The same requeue after the job's own failure (detected on its own): not the isolation's doing.
  if (job_failed_first) ev.push_back({iso, Detected{2, "job_state", kNoComponent, "job failed"}});
  ev.push_back({iso, Job(JobState::kQueued, 600, 0, 0, kNoFault, {x, y}, Min(10))});
  ev.push_back({iso, ActionTaken{"requeue_job", kNoComponent, 0, true, "restart"}});
  ev.push_back({Min(11), Job(JobState::kRestarting, 600, 0, 0, kNoFault, {y, z})});
  ev.push_back({Min(13), Job(JobState::kRunning, 600, 1.0, 1.0, kNoFault, {y, z})});
  return ev;
}

TEST_CASE("healer.metrics: a job the healer requeued to carry out an isolation is the fault's collateral damage") {
  RunMetrics m = ComputeMetrics(RequeueRun(false), Topo(), kJobs, Min(60));
  const FaultMetrics& f = Fault(m, 1);
  CHECK(f.jobs_touched == 1);
  CHECK(f.jobs_interrupted == 1);
  CHECK(f.rework == Min(10));
  CHECK(f.time_to_isolate == Sec(20));
  CHECK(f.time_to_recover == Min(3));  // running again at 13m
  CHECK(f.gpus_direct == 1);
  CHECK(f.gpus_collateral == 7);  // the job's placement on trays 03 and 04 (tray03 drained), minus the NIC's GPU
  // 8 GPUs x (160 s queued and restarting + 600 s redone)
  CHECK(f.gpu_hours_lost == doctest::Approx(8 * (160 + 600) / 3600.0));
  REQUIRE(m.impacts.size() == 1);
  CHECK(m.impacts[0].stalled == Sec(160));
  CHECK(m.jobs[0].interruptions == 1);
}

TEST_CASE("healer.metrics: a requeue after the job's own failure is not charged to an earlier isolation") {
  RunMetrics m = ComputeMetrics(RequeueRun(true), Topo(), kJobs, Min(60));
  const FaultMetrics& f = Fault(m, 1);
  CHECK(f.jobs_touched == 0);
  CHECK(f.rework == Duration{});
  CHECK(f.gpus_collateral == 3);  // the rest of the drained tray only
  CHECK(f.time_to_recover == Sec(20));  // touched no job: recovered when isolated
  CHECK(m.impacts.empty());
}

// r02.tray10.nic1 flaps for 10 s at 1m (transient: nothing to isolate), with or without job 0 on that tray.
std::vector<Event> FlapRun(bool job_on_tray, bool job_resumes) {
  const ComponentId nic = Id("r02.tray10.nic1"), t = Id("r02.tray10"), u = Id("r02.tray11");
  std::vector<Event> ev = {
      {Sec(0), Job(JobState::kRunning, 0, 1.0, 1.0, kNoFault, {job_on_tray ? t : Id("r01.tray01"), u})},
      {Min(1), PhysicsChanged{nic, "link_down", 0, 1}},
      {Min(1), FaultInjected{1, "link_down", nic, -1, "r02.tray10.nic1", ""}},
  };
  if (job_on_tray) ev.push_back({Min(1), Job(JobState::kHung, 60, 0, 0, 1, {t, u})});
  ev.push_back({Min(1) + Sec(1), Detected{1, "link_state", nic, "NIC link down"}});
  ev.push_back({Min(1) + Sec(10), PhysicsChanged{nic, "link_up", 1, 1}});
  ev.push_back({Min(1) + Sec(10), FaultReverted{1, ""}});
  if (job_on_tray && job_resumes)
    ev.push_back({Min(1) + Sec(12), Job(JobState::kRunning, 60, 1.0, 1.0, kNoFault, {t, u})});
  return ev;
}

TEST_CASE("healer.metrics: a flap that touched no job and needed no isolation recovers when it ends - one that hung a "
          "job recovers with the job or never") {
  RunMetrics idle = ComputeMetrics(FlapRun(false, false), Topo(), kJobs, Min(10));
  const FaultMetrics& f = Fault(idle, 1);
  CHECK(f.gpus_direct == 1);
  CHECK(f.jobs_touched == 0);
  CHECK_FALSE(f.time_to_isolate.has_value());
  CHECK(f.time_to_recover == Sec(10));
  CHECK(idle.missed_faults.empty());
  // Reverted by the run's end (what every fault still active then gets): it never ended within the run.
  CHECK_FALSE(Fault(ComputeMetrics(FlapRun(false, false), Topo(), kJobs, Min(1) + Sec(10)), 1).time_to_recover);

  RunMetrics resumed = ComputeMetrics(FlapRun(true, true), Topo(), kJobs, Min(10));
  CHECK(Fault(resumed, 1).jobs_touched == 1);
  CHECK(Fault(resumed, 1).time_to_recover == Sec(12));

  RunMetrics stuck = ComputeMetrics(FlapRun(true, false), Topo(), kJobs, Min(10));
  CHECK(Fault(stuck, 1).jobs_touched == 1);
  CHECK_FALSE(Fault(stuck, 1).time_to_recover.has_value());  // the fault ended, the job never came back
}

TEST_CASE("healer.metrics: a fault that needed isolation and got none has not recovered even after it ends") {
  std::vector<Event> events = FlapRun(false, false);
  events.pop_back();  // back up after 5 minutes instead of 10 s
  events.pop_back();
  const ComponentId nic = Id("r02.tray10.nic1");
  events.push_back({Min(6), PhysicsChanged{nic, "link_up", 1, 1}});
  events.push_back({Min(6), FaultReverted{1, ""}});
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(10));
  CHECK(m.missed_faults.size() == 1);
  CHECK_FALSE(Fault(m, 1).time_to_recover.has_value());
}

// Fault 2 fails the region's checkpoint store at 5m: the 10m checkpoint is never acknowledged. Fault 1
// (BaseRun's cap) makes the healer requeue the job at 15m20s, which throws away 15m20s of work; 10m of
// it (what the 10m checkpoint would have kept) is the store's doing.
TEST_CASE("healer.metrics: the rework a failed checkpoint store added is charged to it, the rest to the restart's fault") {
  std::vector<Event> events = BaseRun();
  const ComponentId store = Id("r01.tray05");  // any part: the metrics look only at causes here
  events.insert(events.begin() + 1, {Min(5), FaultInjected{2, "checkpoint_store_fail", store, -1, "east.ckptstore", ""}});
  for (Event& e : events)
    if (auto* c = std::get_if<JobChanged>(&e.body); c && c->state == JobState::kQueued) {
      c->lost_work = Min(15) + Sec(20);
      c->store_lost_work = Min(10);
      c->store_cause = 2;
    }
  RunMetrics m = ComputeMetrics(events, Topo(), kJobs, Min(60));
  CHECK(Fault(m, 1).rework == Min(5) + Sec(20));
  CHECK(Fault(m, 2).rework == Min(10));
  CHECK(Fault(m, 2).jobs_touched == 1);
  CHECK(Fault(m, 2).jobs_interrupted == 0);
  CHECK(Fault(m, 2).gpu_hours_lost == doctest::Approx(8 * 600 / 3600.0));
  CHECK(Fault(m, 2).time_to_recover == Min(18) - Min(5));  // running at full speed again after the restart
  CHECK(m.jobs[0].productive == Min(42));  // 15m20s + 42m running, 15m20s of it redone
}

}  // namespace
}  // namespace rackchaos::healer
