// Spare racks in the simulator (SimOptions::spare_racks): three GB200 NVL72 racks without hot spare
// trays, r03 kept as a spare rack; job A fills r01 (18 trays), job B fills r02.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kSpareFault = 7;

SimOptions WithSpareRack() {
  SimOptions o;
  o.spare_racks = 1;
  return o;
}

std::vector<std::string> RacksOf(const Harness& h, JobId job) {
  std::vector<std::string> out;
  for (ComponentId t : h.sim.JobTrays(job)) {
    const std::string& r = h.topo.at(h.topo.RackOf(t)).name;
    if (out.empty() || out.back() != r) out.push_back(r);
  }
  return out;
}

std::vector<ActionTaken> SpareRackActions(const Harness& h) {
  std::vector<ActionTaken> out;
  for (const Event& e : h.events.events())
    if (const auto* a = std::get_if<ActionTaken>(&e.body))
      if (a->action == "spare_rack") out.push_back(*a);
  return out;
}

// What the healer does for a lost rack: drain its trays, then requeue the job.
void DrainRackAndRequeue(Harness& h, const std::string& rack, JobId job) {
  for (ComponentId t : h.topo.ChildrenOf(h.Id(rack)))
    if (h.topo.at(t).kind == Kind::kComputeTray) CHECK(h.sim.Drain(t, "test").ok());
  CHECK(h.sim.RequeueJob(job, "test").ok());
}

TEST_CASE("sim.spare_racks: jobs are never placed on a spare rack at the start") {
  Harness h(42, 3, 0, false, WithSpareRack());
  JobId a = h.sim.AddJob(Job(72)).value(), b = h.sim.AddJob(Job(72)).value(), c = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  CHECK(RacksOf(h, a) == std::vector<std::string>{"r01"});
  CHECK(RacksOf(h, b) == std::vector<std::string>{"r02"});
  CHECK(h.sim.JobStateOf(c) == JobState::kQueued);  // r03 is free, but only for lost domains
}

TEST_CASE("sim.spare_racks: a job whose CDU failed moves whole to the spare rack, recorded as spare_rack") {
  Harness h(42, 3, 0, false, WithSpareRack());
  JobId a = h.sim.AddJob(Job(72)).value();
  h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, kSpareFault).ok()); });
  h.At(Duration::Minutes(11), [&] { DrainRackAndRequeue(h, "r01", a); });
  h.clock.RunUntil(Duration::Minutes(20));
  CHECK(RacksOf(h, a) == std::vector<std::string>{"r03"});
  CHECK(h.sim.JobStateOf(a) == JobState::kRunning);
  auto actions = SpareRackActions(h);
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].component == h.Id("r03"));
  CHECK(actions[0].job == a);
}

TEST_CASE("sim.spare_racks: a full-bandwidth switch tray loss also moves the job to the spare rack") {
  Harness h(42, 3, 0, false, WithSpareRack());
  JobId a = h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.switch2"), true, kSpareFault).ok()); });
  h.At(Duration::Minutes(11), [&] { DrainRackAndRequeue(h, "r01", a); });
  h.clock.RunUntil(Duration::Minutes(20));
  // r02 is free and regular, but the lost domain's job goes to the spare rack first.
  CHECK(RacksOf(h, a) == std::vector<std::string>{"r03"});
  CHECK(SpareRackActions(h).size() == 1);
}

TEST_CASE("sim.spare_racks: a lost tray is not a lost domain - the job waits and the spare rack stays free") {
  Harness h(42, 3, 0, false, WithSpareRack());
  JobId a = h.sim.AddJob(Job(72)).value();
  h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r01.tray03"), false, kSpareFault).ok()); });
  h.At(Duration::Minutes(11), [&] {
    CHECK(h.sim.Drain(h.Id("r01.tray03"), "test").ok());
    CHECK(h.sim.RequeueJob(a, "test").ok());
  });
  h.clock.RunUntil(Duration::Minutes(20));
  CHECK(h.sim.JobStateOf(a) == JobState::kQueued);  // 17 regular trays free, it needs 18
  CHECK(SpareRackActions(h).empty());
}

}  // namespace
}  // namespace rackchaos::cluster
