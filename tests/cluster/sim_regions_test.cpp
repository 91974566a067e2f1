// Regions in the topology and the simulator: two GB200 NVL72 regions, east (r01-r02) and west (r03-r04),
// no hot spare trays unless a test says so (tests/cluster/regions_harness.h).
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/cluster/regions_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

TEST_CASE("topology.regions: a region is the parent of its racks, with its stores, and moves no other id") {
  Topology plain = BuildTopology(4, 0), t = TwoRegions();
  REQUIRE(t.size() == plain.size() + 6);
  for (size_t id = 0; id < plain.size(); ++id) CHECK(t.at(static_cast<ComponentId>(id)).name == plain.at(static_cast<ComponentId>(id)).name);
  const ComponentId east = *t.Find("east"), west = *t.Find("west");
  CHECK(t.at(east).kind == Kind::kRegion);
  CHECK(t.at(*t.Find("east.objstore")).kind == Kind::kObjectStore);
  CHECK(t.at(*t.Find("west.ckptstore")).parent == west);
  CHECK(t.at(*t.Find("r02")).parent == east);
  CHECK(t.at(*t.Find("r03")).parent == west);
  CHECK(t.RegionOf(*t.Find("r04.tray18.gpu3")) == 1);
  CHECK(t.RegionOf(*t.Find("rail0.leaf01")) == -1);
  CHECK(t.GpusServedBy(east).size() == 144);
  CHECK(t.GpusServedBy(*t.Find("east.objstore")).empty());
  CHECK(plain.regions().empty());
}

TEST_CASE("topology.regions: names that collide, racks that do not add up, empty regions are refused") {
  auto model = LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto clash = Topology::Build(*model, 2, 0, {{"rail0", 1}, {"west", 1}});
  REQUIRE_FALSE(clash.ok());
  CHECK(clash.status().message().find("'rail0' is already the name") != std::string::npos);
  auto sum = Topology::Build(*model, 3, 0, {{"east", 1}, {"west", 1}});
  REQUIRE_FALSE(sum.ok());
  CHECK(sum.status().message() == "the regions hold 2 racks but the cluster has 3");
  CHECK_FALSE(Topology::Build(*model, 1, 0, {{"east", 0}, {"west", 1}}).ok());
}

TEST_CASE("sim.regions: a job runs inside one region and waits rather than span two") {
  Regions h;
  JobId a = h.sim.AddJob(Job(108)).value(), b = h.sim.AddJob(Job(108)).value(), c = h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r01", "r02"});
  CHECK(h.RacksOf(b) == std::vector<std::string>{"r03", "r04"});  // east has 36 GPUs left
  // 36 free in each region: 72 free in the cluster, but in no one region.
  CHECK(h.sim.JobStateOf(c) == JobState::kQueued);
}

TEST_CASE("sim.regions: a job with a home region starts there") {
  Regions h;
  JobConfig west = Job(72);
  west.region = 1;
  JobId a = h.sim.AddJob(west).value(), b = h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r03"});
  CHECK(h.RacksOf(b) == std::vector<std::string>{"r01"});
}

TEST_CASE("sim.regions: a job from a lost domain takes its own region's spare rack first") {
  SimOptions o;
  o.spare_racks = 2;
  o.region_spare_racks = {1, 1};  // r02 and r04
  Regions h(o);
  h.sim.AddJob(Job(72)).value();
  JobId b = h.sim.AddJob(Job(72)).value();
  h.sim.Start();
  REQUIRE(h.RacksOf(b) == std::vector<std::string>{"r03"});
  h.At(Time{} + kMinute, [&] {
    CHECK(h.sim.SetComponentFailed(h.Id("r03.cdu"), true, 9).ok());
    CHECK(h.sim.RequeueJob(b, "cdu").ok());
  });
  h.clock.RunUntil(Time{} + Duration::Minutes(2));
  CHECK(h.RacksOf(b) == std::vector<std::string>{"r04"});  // west's spare, not east's r02
}

TEST_CASE("sim.regions: a region outage loses the checkpoints not yet copied and the job restarts in the next region") {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.checkpoint_interval = Duration::Minutes(20);
  cfg.checkpoint_write = Duration::Seconds(30);
  cfg.checkpoint_copy = Duration::Minutes(16);
  JobId a = h.sim.AddJob(cfg).value();
  h.sim.Start();
  REQUIRE(h.RacksOf(a) == std::vector<std::string>{"r01"});
  // Acks at 20m30s, 40m30s, 60m30s; far copies done at 36m30s, 56m30s, 76m30s: at 70m the far region has 40m.
  h.At(Time{} + Duration::Minutes(70), [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), true, kRegionFault).ok()); });
  h.At(Time{} + Duration::Minutes(71), [&] { CHECK(h.sim.RequeueJob(a, "east down").ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(72));
  CHECK(h.PhysicsCount("checkpoint_lost") == 1);
  CHECK(h.PhysicsCount("power_lost") == 2);
  CHECK(h.RacksOf(a) == std::vector<std::string>{"r03"});
  const auto changes = [&] {
    std::vector<JobChanged> out;
    for (const Event& e : h.events.events())
      if (const auto* j = std::get_if<JobChanged>(&e.body); j && j->job == a && j->state == JobState::kQueued) out.push_back(*j);
    return out;
  }();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].lost_work == Duration::Minutes(30));  // back to the 40m far copy, not the 60m local one
  // The region's probe reports it within one period.
  bool probed = false;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kProbeOk && s.component == h.Id("east") && s.value == 0) {
      probed = true;
      CHECK(at > Time{} + Duration::Minutes(70));
      CHECK(at <= Time{} + Duration::Minutes(70) + Duration::Seconds(10));
    }
  CHECK(probed);
}

TEST_CASE("sim.regions: a failed checkpoint store acknowledges nothing while the job trains on") {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.checkpoint_interval = Duration::Minutes(10);
  JobId a = h.sim.AddJob(cfg).value();
  h.sim.Start();
  h.At(Time{} + Duration::Minutes(15), [&] { CHECK(h.sim.SetStoreRate(h.Id("east.ckptstore"), 0, kRegionFault).ok()); });
  h.At(Time{} + Duration::Minutes(45), [&] { CHECK(h.sim.Release(Held::kStoreRate, {h.Id("east.ckptstore"), -1}, kRegionFault).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(55));
  std::vector<Time> acks;
  for (const Event& e : h.events.events())
    if (std::holds_alternative<Checkpointed>(e.body)) acks.push_back(e.at);
  // 10m and 50m acknowledged (30 s writes); 20m, 30m, 40m failed while the store was down.
  CHECK(acks == std::vector<Time>{Time{} + Duration::Seconds(630), Time{} + Duration::Seconds(3030)});
  CHECK(h.PhysicsCount("checkpoint_write_failed") == 3);
  CHECK(h.sim.JobStateOf(a) == JobState::kRunning);
}

TEST_CASE("sim.regions: a job streaming from its object store slows with it and hangs when it fails") {
  Regions h;
  JobConfig cfg = Job(72);
  cfg.input_gbytes_per_s = 0.3;  // 3 s of reading per 10 s step at 1 GB/s: no stall at full rate
  cfg.input_from_object_store = true;
  JobId a = h.sim.AddJob(cfg).value();
  h.sim.Start();
  const double nominal = StepTime(cfg, 1);
  h.At(Time{} + Duration::Minutes(10), [&] { CHECK(h.sim.SetStoreRate(h.Id("east.objstore"), 0.2, kRegionFault).ok()); });
  h.At(Time{} + Duration::Minutes(20), [&] { CHECK(h.sim.SetStoreRate(h.Id("east.objstore"), 0, kRegionFault).ok()); });
  h.At(Time{} + Duration::Minutes(25), [&] { CHECK(h.sim.Release(Held::kStoreRate, {h.Id("east.objstore"), -1}, kRegionFault).ok()); });
  h.clock.RunUntil(Time{} + Duration::Minutes(30));
  std::vector<std::pair<JobState, double>> seen;
  for (const Event& e : h.events.events())
    if (const auto* j = std::get_if<JobChanged>(&e.body); j && j->job == a) seen.push_back({j->state, j->step_time_s});
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].second == doctest::Approx(nominal));
  CHECK(seen[1].second == doctest::Approx(0.3 * 10 / 0.2));  // 15 s: the read at 20% of 1 GB/s
  CHECK(seen[2].first == JobState::kHung);
  CHECK(seen[3].first == JobState::kRunning);
  CHECK(seen[3].second == doctest::Approx(nominal));
}

// A restart in place (cluster/sim_restart.cpp) picks what Place() would: the free trays of the job's own
// region, not east's lower-numbered free trays. Same trays and events with it on and off.
TEST_CASE("sim.regions: a restart in place stays in the job's region as a full placement does") {
  auto run = [](bool in_place) {
    SimOptions options;
    options.restart_in_place = in_place;
    Regions h(options);
    JobConfig cfg = Job(64);
    cfg.region = 1;  // west: r03-r04; east's trays stay free
    const JobId job = h.sim.AddJob(cfg).value();
    h.sim.Start();
    h.At(Duration::Hours(1), [&] {
      CHECK(h.sim.Drain(h.Id("r03.tray02"), "isolated").ok());
      CHECK(h.sim.RequeueJob(job, "tray drained").ok());
    });
    h.clock.RunUntil(Duration::Hours(2));
    std::vector<std::string> changes;
    for (const Event& e : h.events.events())
      if (const auto* c = std::get_if<JobChanged>(&e.body); c && c->job == job)
        changes.push_back(std::to_string(e.at.us) + " " + JobStateName(c->state) + " " + c->detail + " " +
                          std::to_string(c->trays.size()));
    return std::tuple{h.sim.JobTrays(job), h.RacksOf(job), changes, h.sim.RestartsInPlace()};
  };
  const auto [fast_trays, fast_racks, fast_changes, fast_in_place] = run(true);
  const auto [full_trays, full_racks, full_changes, full_in_place] = run(false);
  CHECK(fast_in_place == 1);
  CHECK(full_in_place == 0);
  CHECK(fast_racks == std::vector<std::string>{"r03"});
  CHECK(fast_trays == full_trays);
  CHECK(fast_changes == full_changes);
}

}  // namespace
}  // namespace rackchaos::cluster
