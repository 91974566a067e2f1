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
  INFO("state ", static_cast<int>(h.sim.JobStateOf(a)), " racks ", h.RacksOf(a).size() ? h.RacksOf(a)[0] : "-");
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r01"});
  CHECK(h.RacksOf(b) == std::vector<std::string>{"r02"});
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
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r03"});
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
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r03"});
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

// free_spare_rack_ and free_count_ are kept in step tray by tray (TouchTray) instead of scanned at each
// placement: recounted each minute through a lost domain's round trip (fail, drain, requeue onto the
// spare rack, a regular tray pulled and back, repair, reboot, resume, requeue off the spare rack, a
// spare rack's tray pulled and back).
TEST_CASE("sim.spare_racks: the free-tray counts kept in step agree with a recount through a spare rack move") {
  Harness h(42, 3, 0, false, WithSpareRack());
  JobId a = h.sim.AddJob(Job(72)).value();
  h.sim.AddJob(Job(64)).value();
  h.sim.Start();
  CHECK(h.sim.RecountFreeTrays() == "");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, kSpareFault).ok()); });
  h.At(Duration::Minutes(11), [&] { DrainRackAndRequeue(h, "r01", a); });
  h.At(Duration::Minutes(20), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r02.tray18"), false, 8).ok()); });
  h.At(Duration::Minutes(25), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r02.tray18"), true, 8).ok()); });
  h.At(Duration::Minutes(40), [&] {
    CHECK(h.RacksOf(a) == std::vector<std::string>{"r03"});
    CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), false, kSpareFault).ok());
    for (ComponentId t : h.topo.ChildrenOf(h.Id("r01")))  // the healer's way back: reboot (GPUs shut down hot), resume
      if (h.topo.at(t).kind == Kind::kComputeTray) CHECK((h.sim.RebootNode(t).ok() && h.sim.Resume(t).ok()));
  });
  h.At(Duration::Minutes(50), [&] { CHECK(h.sim.RequeueJob(a, "back").ok()); });  // frees the spare rack
  h.At(Duration::Minutes(55), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r03.tray18"), false, 9).ok()); });
  h.At(Duration::Minutes(57), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r03.tray18"), true, 9).ok()); });
  for (int minute = 1; minute < 70; ++minute)
    h.At(Duration::Minutes(minute) + Duration::Seconds(30), [&h] { CHECK(h.sim.RecountFreeTrays() == ""); });
  h.clock.RunUntil(Duration::Minutes(70));
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r01"});
  CHECK(h.sim.JobStateOf(a) == JobState::kRunning);
  CHECK(SpareRackActions(h).size() == 1);
  CHECK(h.sim.RecountFreeTrays() == "");
}

}  // namespace
}  // namespace rackchaos::cluster
