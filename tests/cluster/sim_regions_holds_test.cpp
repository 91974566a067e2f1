// Overlapping faults on a region, its racks' power and its stores (cluster/holds.h): two outages of one
// region, an outage and a rack's own PSUs, two faults on one store. Each state is the worst held; the
// last release gives the baseline back.
#include <doctest/doctest.h>

#include <string>

#include "tests/cluster/regions_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kFirst = 41, kSecond = 42, kShelves = 43;

TEST_CASE("sim.regions_holds: two overlapping outages keep the region dark until the last is reverted") {
  for (bool first_reverted_first : {true, false}) {
    CAPTURE(first_reverted_first);
    Regions h;
    const ComponentId east = h.Id("east");
    h.At(Time{} + Duration::Minutes(10), [&] { CHECK(h.sim.SetRegionDown(east, true, kFirst).ok()); });
    h.At(Time{} + Duration::Minutes(20), [&] { CHECK(h.sim.SetRegionDown(east, true, kSecond).ok()); });
    h.At(Time{} + Duration::Minutes(30), [&] {
      CHECK(h.sim.SetRegionDown(east, false, first_reverted_first ? kFirst : kSecond).ok());
    });
    h.clock.RunUntil(Time{} + Duration::Minutes(35));
    CHECK_FALSE(h.Powered("r01"));
    CHECK_FALSE(h.Powered("r02"));
    CHECK(h.PhysicsCount("region_down") == 1);
    CHECK(h.PhysicsCount("region_up") == 0);
    h.At(Time{} + Duration::Minutes(40), [&] {
      CHECK(h.sim.SetRegionDown(east, false, first_reverted_first ? kSecond : kFirst).ok());
    });
    h.clock.RunUntil(Time{} + Duration::Minutes(45));
    CHECK(h.Powered("r01"));
    CHECK(h.Powered("r02"));
    CHECK(h.PhysicsCount("region_up") == 1);
    CHECK(h.PhysicsCount("power_lost") == 2);  // once per rack: the second outage changed nothing
  }
}

TEST_CASE("sim.regions_holds: a rack's PSUs repaired during its region's outage leave it dark") {
  Regions h;
  auto shelves = [&](bool failed) {
    for (int s = 1; s <= 6; ++s) CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf" + std::to_string(s)), failed, kShelves).ok());
  };
  h.At(Time{} + Duration::Minutes(10), [&] { shelves(true); });
  h.At(Time{} + Duration::Minutes(20), [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), true, kFirst).ok()); });
  h.At(Time{} + Duration::Minutes(30), [&] { shelves(false); });
  h.clock.RunUntil(Time{} + Duration::Minutes(35));
  CHECK_FALSE(h.Powered("r01"));  // the outage still holds it
  CHECK_FALSE(h.Powered("r02"));
  h.At(Time{} + Duration::Minutes(40), [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), false, kFirst).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(45));
  CHECK(h.Powered("r01"));
  CHECK(h.Powered("r02"));
}

TEST_CASE("sim.regions_holds: an outage reverted while a rack's PSUs are still failed leaves that rack dark") {
  Regions h;
  h.At(Time{} + Duration::Minutes(10), [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), true, kFirst).ok()); });
  h.At(Time{} + Duration::Minutes(20), [&] {
    for (int s = 1; s <= 6; ++s) CHECK(h.sim.SetComponentFailed(h.Id("r02.shelf" + std::to_string(s)), true, kShelves).ok());
  });
  h.At(Time{} + Duration::Minutes(30), [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), false, kFirst).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(35));
  CHECK(h.Powered("r01"));
  CHECK_FALSE(h.Powered("r02"));
}

TEST_CASE("sim.regions_holds: reverting one of two object store faults keeps the other's rate") {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.input_gbytes_per_s = 0.3;  // 3 s of reading per 10 s step at 1 GB/s
  cfg.input_from_object_store = true;
  const JobId a = h.sim.AddJob(cfg).value();
  h.sim.Start();
  const ComponentId store = h.Id("east.objstore");
  h.At(Time{} + Duration::Minutes(10), [&] { CHECK(h.sim.SetStoreRate(store, 0.2, kFirst).ok()); });
  h.At(Time{} + Duration::Minutes(20), [&] { CHECK(h.sim.SetStoreRate(store, 0, kSecond).ok()); });
  h.At(Time{} + Duration::Minutes(30), [&] { CHECK(h.sim.Release(Held::kStoreRate, {store, -1}, kSecond).ok()); });
  h.At(Time{} + Duration::Minutes(40), [&] { CHECK(h.sim.Release(Held::kStoreRate, {store, -1}, kFirst).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(50));
  const auto c = h.Changes(a);
  REQUIRE(c.size() == 5);
  CHECK(c[1].step_time_s == doctest::Approx(15));  // 0.3 x 10 / 0.2
  CHECK(c[2].state == JobState::kHung);
  CHECK(c[2].cause == kSecond);
  CHECK(c[3].state == JobState::kRunning);  // the failure reverted: back to the degrade's 20%
  CHECK(c[3].step_time_s == doctest::Approx(15));
  CHECK(c[3].cause == kFirst);
  CHECK(c[4].step_time_s == doctest::Approx(StepTime(cfg, 1)));
}

TEST_CASE("sim.regions_holds: reverting one of two checkpoint store failures acknowledges nothing yet") {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.checkpoint_interval = Duration::Minutes(10);
  h.sim.AddJob(cfg).value();
  h.sim.Start();
  const ComponentId store = h.Id("east.ckptstore");
  h.At(Time{} + Duration::Minutes(5), [&] { CHECK(h.sim.SetStoreRate(store, 0, kFirst).ok()); });
  h.At(Time{} + Duration::Minutes(15), [&] { CHECK(h.sim.SetStoreRate(store, 0, kSecond).ok()); });
  h.At(Time{} + Duration::Minutes(25), [&] { CHECK(h.sim.Release(Held::kStoreRate, {store, -1}, kFirst).ok()); });
  h.At(Time{} + Duration::Minutes(35), [&] { CHECK(h.sim.Release(Held::kStoreRate, {store, -1}, kSecond).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(45));
  std::vector<Time> acks;
  for (const Event& e : h.events.events())
    if (std::holds_alternative<Checkpointed>(e.body)) acks.push_back(e.at);
  // 10m, 20m, 30m fail (30 s writes) while either failure holds; 40m is acknowledged.
  CHECK(acks == std::vector<Time>{Time{} + Duration::Seconds(2430)});
  CHECK(h.PhysicsCount("checkpoint_write_failed") == 3);
  CHECK(h.PhysicsCount("checkpoint_store_up") == 1);
}

}  // namespace
}  // namespace rackchaos::cluster
