// The regions' shared resources (cluster/sim_region_link.cpp): the link to the next region shared by the
// far checkpoint copies in flight, the object store's read capacity shared by the jobs streaming from
// it, and the rework a failed checkpoint store adds to a restart (charged to the store's fault).
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "tests/cluster/regions_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kStore = 51, kCrash = 52;

// The work each of `jobs` jobs in east redoes when east goes down at `at` and they restart in west.
std::vector<Duration> LostAtOutage(int jobs, Duration at) {
  SimOptions o;
  o.region_link_gbytes_per_s = 50;
  Regions h(o);
  std::vector<JobId> ids;
  for (int i = 0; i < jobs; ++i) ids.push_back(h.sim.AddJob(Copying()).value());
  h.sim.Start();
  for (JobId id : ids) REQUIRE(h.RacksOf(id).front() <= "r02");
  h.At(Time{} + at, [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), true, kStore).ok()); });
  h.At(Time{} + at + kMinute, [&] {
    for (JobId id : ids) CHECK(h.sim.RequeueJob(id, "east down").ok());
  });
  h.clock.RunUntil(Time{} + at + Duration::Minutes(2));
  std::vector<Duration> lost;
  for (JobId id : ids)
    for (const JobChanged& c : h.Changes(id))
      if (c.state == JobState::kQueued) lost.push_back(c.lost_work);
  return lost;
}

TEST_CASE("sim.region_stores: far copies in flight share the region link and each takes longer") {
  // Acknowledged at 20m30s. Alone the copy is done at 36m30s: at 45m the far region has the 20m snapshot.
  CHECK(LostAtOutage(1, Duration::Minutes(45)) == std::vector<Duration>{Duration::Minutes(25)});
  // Two copies at 25 GB/s each are done at 52m30s: at 45m the far region has nothing yet.
  CHECK(LostAtOutage(2, Duration::Minutes(45)) == std::vector<Duration>{Duration::Minutes(45), Duration::Minutes(45)});
  // At 55m both have the 20m snapshot (the 40m one, acknowledged at 40m30s, is copied next).
  CHECK(LostAtOutage(2, Duration::Minutes(55)) == std::vector<Duration>{Duration::Minutes(35), Duration::Minutes(35)});
}

// Two 72-GPU jobs in east streaming 0.3 GB/s per GPU (43.2 GB/s together) from a 30 GB/s store: each
// GPU gets 30 / 144 GB/s, so a 10 s step's 3 GB read takes 14.4 s.
TEST_CASE("sim.region_stores: jobs streaming from one object store share its capacity and stall beyond it") {
  SimOptions o;
  o.object_store_gbytes_per_s = 30;
  Regions h(o);
  JobConfig cfg = Job(72);
  cfg.input_gbytes_per_s = 0.3;
  cfg.input_from_object_store = true;
  const JobId a = h.sim.AddJob(cfg).value(), b = h.sim.AddJob(cfg).value();
  h.sim.Start();
  REQUIRE(h.RacksOf(b) == std::vector<std::string>{"r02"});
  h.At(Time{} + Duration::Minutes(10), [&] { CHECK(h.sim.CrashProcesses(h.Id("r02.tray01.gpu0"), kCrash).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(20));
  const auto ca = h.Changes(a), cb = h.Changes(b);
  REQUIRE(ca.size() >= 2);
  REQUIRE(cb.size() == 2);
  CHECK(cb[0].step_time_s == doctest::Approx(0.3 * 10 / (30.0 / 144)));
  CHECK(cb[1].state == JobState::kFailed);
  // While both read a waits like b; once b stopped at 10m, a alone fits: nominal again.
  CHECK(ca[ca.size() - 2].state == JobState::kRunning);
  CHECK(ca[ca.size() - 2].step_time_s == doctest::Approx(0.3 * 10 / (30.0 / 144)));
  CHECK(ca.back().state == JobState::kRunning);
  CHECK(ca.back().step_time_s == doctest::Approx(StepTime(cfg, 1)));
}

TEST_CASE("sim.region_stores: a small reader gets what it asks and the big one the rest") {
  SimOptions o;
  o.object_store_gbytes_per_s = 20;
  Regions h(o);
  JobConfig big = Job(72), small = Job(72);
  big.input_gbytes_per_s = 0.3;
  small.input_gbytes_per_s = 0.05;
  big.input_from_object_store = small.input_from_object_store = true;
  const JobId a = h.sim.AddJob(big).value(), b = h.sim.AddJob(small).value();
  h.sim.Start();
  h.clock.RunUntil(Time{} + kMinute);
  // small's 72 x 0.05 = 3.6 GB/s is met; big's 72 GPUs share the other 16.4.
  CHECK(h.Changes(a).back().step_time_s == doctest::Approx(0.3 * 10 / (16.4 / 72)));
  CHECK(h.Changes(b).back().step_time_s == doctest::Approx(StepTime(small, 1)));
}

// Checkpoints every 10 minutes (30 s writes); the checkpoint store fails at 15m (and is back at
// `store_back`, if given) and a GPU's process crashes at 35m: the job's failure.
JobChanged FailureAfterStoreFault(std::optional<Duration> store_back) {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.checkpoint_interval = Duration::Minutes(10);
  const JobId a = h.sim.AddJob(cfg).value();
  h.sim.Start();
  const ComponentId store = h.Id("east.ckptstore");
  h.At(Time{} + Duration::Minutes(15), [&] { CHECK(h.sim.SetStoreRate(store, 0, kStore).ok()); });
  if (store_back) h.At(Time{} + *store_back, [&] { CHECK(h.sim.Release(Held::kStoreRate, {store, -1}, kStore).ok()); });
  h.At(Time{} + Duration::Minutes(35), [&] { CHECK(h.sim.CrashProcesses(h.Id("r01.tray01.gpu0"), kCrash).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(36));
  const auto c = h.Changes(a);
  REQUIRE(c.size() == 2);
  CHECK(c[1].state == JobState::kFailed);
  CHECK(c[1].cause == kCrash);
  return c[1];
}

// The 20m and 30m snapshots are not acknowledged: the crash goes back to the 10m checkpoint, 25 minutes
// redone, of which the 20 the 30m snapshot would have kept are the store's.
TEST_CASE("sim.region_stores: a restart after the checkpoint store failed charges the extra rework to the store") {
  const JobChanged failed = FailureAfterStoreFault(std::nullopt);
  CHECK(failed.lost_work == Duration::Minutes(25));
  CHECK(failed.store_lost_work == Duration::Minutes(20));
  CHECK(failed.store_cause == kStore);
}

TEST_CASE("sim.region_stores: once the store acknowledges again a restart owes it nothing") {
  const JobChanged failed = FailureAfterStoreFault(Duration::Minutes(25));
  CHECK(failed.lost_work == Duration::Minutes(5));  // the 30m checkpoint was acknowledged
  CHECK(failed.store_lost_work == Duration{});
  CHECK(failed.store_cause == kNoFault);
}

}  // namespace
}  // namespace rackchaos::cluster
