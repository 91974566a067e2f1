// What a checkpoint costs (cluster/sim_checkpoints.cpp, docs/jobs.md): training stops for the blocking part
// of each write, the next interval counts from when it goes on, and the timings a job may run with.
// Job(): 10 s steps, so 30 min of training is 180 steps.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

JobConfig Blocking(Duration write, Duration blocking) {
  JobConfig cfg = Job(4);
  cfg.checkpoint_write = write;
  cfg.checkpoint_blocking = blocking;
  return cfg;
}

TEST_CASE("checkpoint.blocking: training stops for 20 s of each 40 s write and the next interval starts after it") {
  Harness h;
  JobId job = h.sim.AddJob(Blocking(Duration::Seconds(40), Duration::Seconds(20))).value();
  h.sim.Start();
  h.At(Duration::Minutes(30) + Duration::Seconds(10), [&] {  // stopped: no progress since the snapshot
    CHECK(h.sim.JobSteps(job) == doctest::Approx(180));
  });
  h.clock.RunUntil(Duration::Hours(2));
  // Snapshots at 30m, 60m20s and 90m40s (each after 30 min of training), acknowledged 40 s later.
  auto ckpts = h.Checkpoints();
  REQUIRE(ckpts.size() == 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(ckpts[k].first == Duration::Minutes(30 * (k + 1)) + Duration::Seconds(20 * k + 40));
    CHECK(ckpts[k].second.step == doctest::Approx(180.0 * (k + 1)));
  }
  // 2 h less 3 x 20 s stopped: 7140 s of training.
  CHECK(h.sim.JobSteps(job) == doctest::Approx(714));
  // Its events show each stop as running at speed 0, with no fault behind it, and the way back.
  std::vector<std::pair<Time, JobChanged>> stops, goes;
  for (const auto& c : h.JobChanges(job)) {
    if (c.second.detail == "checkpoint: training stops for 20s") stops.push_back(c);
    if (c.second.detail == "checkpoint: training goes on") goes.push_back(c);
  }
  REQUIRE(stops.size() == 3);
  REQUIRE(goes.size() == 3);
  CHECK(stops[1].first == Duration::Minutes(60) + Duration::Seconds(20));
  CHECK(stops[1].second.state == JobState::kRunning);
  CHECK(stops[1].second.speed == 0);
  CHECK(stops[1].second.cause == kNoFault);
  CHECK(goes[1].first == Duration::Minutes(60) + Duration::Seconds(40));
  CHECK(goes[1].second.speed == doctest::Approx(1));
}

TEST_CASE("checkpoint.blocking: without it training never stops; a synchronous write stops it for the whole write") {
  for (Duration blocking : {Duration{}, Duration::Seconds(40)}) {
    CAPTURE(blocking);
    Harness h;
    JobId job = h.sim.AddJob(Blocking(Duration::Seconds(40), blocking)).value();
    h.sim.Start();
    h.clock.RunUntil(Duration::Hours(2));
    // 0: 720 steps in 2 h; 40 s: three stops of 40 s (at 30m, 60m40s, 91m20s).
    CHECK(h.sim.JobSteps(job) == doctest::Approx(blocking == Duration{} ? 720 : 708));
  }
}

TEST_CASE("checkpoint.blocking: a hang while training is stopped loses the snapshot; the next interval is whole") {
  Harness h;
  JobId job = h.sim.AddJob(Blocking(Duration::Seconds(40), Duration::Seconds(20))).value();
  h.sim.Start();
  ComponentId nic = h.Id("r01.tray01.nic0");
  h.At(Duration::Minutes(30) + Duration::Seconds(10), [&] { CHECK(h.sim.SetNicLink(nic, false, 3).ok()); });
  h.At(Duration::Minutes(31), [&] { CHECK(h.sim.SetNicLink(nic, true, 3).ok()); });
  h.clock.RunUntil(Duration::Minutes(62));
  // The 30m snapshot is never acknowledged; resumed at 31m, the next comes 30 min of training later.
  auto ckpts = h.Checkpoints();
  REQUIRE(ckpts.size() == 1);
  CHECK(ckpts[0].first == Duration::Minutes(61) + Duration::Seconds(40));
  CHECK(ckpts[0].second.step == doctest::Approx(360));
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
}

TEST_CASE("checkpoint timings: an interval not longer than the write, or blocking outside 0..write, is refused") {
  std::string key;
  JobConfig ok = Blocking(Duration::Seconds(40), Duration::Seconds(40));
  CHECK(CheckCheckpoint(ok, key).ok());

  JobConfig cancelled = Blocking(Duration::Seconds(61), Duration{});
  cancelled.checkpoint_interval = Duration::Seconds(59);  // each snapshot would cancel the write before it
  Status s = CheckCheckpoint(cancelled, key);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(key == "interval");
  CHECK(s.message().find("not longer than write_time 1m1s") != std::string::npos);
  cancelled.checkpoint_interval = Duration::Seconds(61);
  CHECK_FALSE(CheckCheckpoint(cancelled, key).ok());

  JobConfig too_long = Blocking(Duration::Seconds(40), Duration::Seconds(41));
  CHECK_FALSE(CheckCheckpoint(too_long, key).ok());
  CHECK(key == "blocking");

  Harness h;  // the simulator refuses them too
  CHECK(h.sim.AddJob(cancelled).status().code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.AddJob(too_long).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rackchaos::cluster
