// GB200 NVL36x2: two racks of 36 GPUs cabled into one 72-GPU NVLink domain (catalogue
// nvlink.domain_racks: 2). Domain health is per pair; power and cooling stay per rack. Four racks, no
// spares: Job(36) fills one rack. Job(): 10 s steps of which 8.5 s compute, 1 s NVLink, 0.5 s scale-out.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;
using Health = SimBackend::DomainHealth;

constexpr FaultId kPairFault = 21;

Harness Pairs(bool adaptive = false) { return Harness(BuildTopology(4, 0, adaptive, "gb200-nvl36x2"), 42); }

// Three 36-GPU jobs: one per rack of the first pair, one on the second pair's first rack.
std::vector<JobId> OnePerRack(Harness& h) {
  std::vector<JobId> jobs;
  for (const char* name : {"a", "b", "c"}) {
    JobConfig cfg = Job(36);
    cfg.name = name;
    jobs.push_back(h.sim.AddJob(cfg).value());
  }
  h.sim.Start();
  return jobs;
}

TEST_CASE("sim.nvl36x2: two racks make one NVLink domain, shown as a component") {
  Topology t = BuildTopology(4, 0, false, "gb200-nvl36x2");
  CHECK(t.Domains() == 2);
  const ComponentId nvl01 = *t.Find("nvl01");
  CHECK(t.at(nvl01).kind == Kind::kNvlinkDomain);
  CHECK(std::string(KindName(Kind::kNvlinkDomain)) == "nvlink_domain");
  CHECK(t.DomainOf(*t.Find("r02.tray09.gpu3")) == nvl01);
  CHECK(t.DomainOf(*t.Find("r03.switch1")) == *t.Find("nvl02"));
  const auto gpus = t.GpusOfDomain(0);
  REQUIRE(gpus.size() == 72);
  CHECK(t.at(gpus.front()).name == "r01.tray01.gpu0");
  CHECK(t.at(gpus.back()).name == "r02.tray09.gpu3");
  CHECK(t.GpusServedBy(*t.Find("r02.switch3")) == gpus);    // a switch tray: the whole pair
  CHECK(t.GpusServedBy(*t.Find("r02.cdu")).size() == 36);  // a CDU: its own rack
  // NVL72 keeps a rack per domain and no domain component.
  Topology nvl72 = BuildTopology(2, 0);
  CHECK_FALSE(nvl72.Find("nvl01").has_value());
  CHECK(nvl72.DomainOf(*nvl72.Find("r02.tray01")) == *nvl72.Find("r02"));
}

TEST_CASE("sim.nvl36x2: an odd rack count is refused with what would be valid") {
  auto model = LoadRackModel("gb200-nvl36x2");
  REQUIRE(model.ok());
  auto topo = Topology::Build(*model, 3, 0);
  REQUIRE_FALSE(topo.ok());
  CHECK(topo.status().message() ==
        "racks 3 is not a multiple of 2: a gb200-nvl36x2 NVLink domain spans 2 racks (e.g. racks: 4)");
}

TEST_CASE("sim.nvl36x2: a switch tray lost in one rack makes the whole pair UNHEALTHY, the other pair runs on") {
  Harness h = Pairs();
  const auto jobs = OnePerRack(h);
  const ComponentId r01 = h.Id("r01"), r02 = h.Id("r02");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r02.switch3"), true, kPairFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  CHECK(h.sim.DomainHealthOf(r01) == Health::kUnhealthy);
  CHECK(h.sim.DomainHealthOf(r02) == Health::kUnhealthy);
  CHECK(h.sim.DomainHealthOf(h.Id("r03")) == Health::kHealthy);
  CHECK(h.Physics("nvlink_domain_UNHEALTHY", h.Id("nvl01")).size() == 1);
  CHECK(h.Physics("nvlink_domain_UNHEALTHY").size() == 1);  // once, on the domain, not per rack
  for (JobId j : {jobs[0], jobs[1]}) {
    CHECK(h.sim.JobStateOf(j) == JobState::kHung);
    CHECK(h.JobChanges(j).back().second.cause == kPairFault);
  }
  CHECK(h.sim.JobStateOf(jobs[2]) == JobState::kRunning);
  // The ports into the lost tray are on its own rack's GPUs (2 of 18 each): that is what a site sees.
  std::set<int> racks;
  size_t down = 0;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>())
    if (l.port >= 0 && !l.up) {
      racks.insert(h.topo.at(l.component).rack);
      ++down;
    }
  CHECK(racks == std::set<int>{1});
  CHECK(down == 36 * 2);
}

TEST_CASE("sim.nvl36x2: adaptive mode - every GPU of the pair at 8/9, counted by switch position") {
  Harness h = Pairs(true);
  const auto jobs = OnePerRack(h);
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.switch3"), true, kPairFault).ok()); });
  h.At(Duration::Minutes(20), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r02.switch3"), true, kPairFault + 1).ok()); });
  h.At(Duration::Minutes(30), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r02.switch5"), true, kPairFault + 2).ok()); });
  h.clock.RunUntil(Duration::Minutes(15));
  CHECK(h.sim.DomainHealthOf(h.Id("r02")) == Health::kBandwidth);
  CHECK(h.sim.DomainBandwidth(h.Id("r02")) == doctest::Approx(8.0 / 9));
  const double slowed = 8.5 + 1 / (8.0 / 9) + 0.5;
  for (JobId j : {jobs[0], jobs[1]}) CHECK(h.JobChanges(j).back().second.step_time_s == doctest::Approx(slowed));
  CHECK(h.JobChanges(jobs[2]).size() == 1);  // the other pair: untouched
  h.clock.RunUntil(Duration::Minutes(25));  // the same position in the other rack: still 8/9
  CHECK(h.sim.DomainBandwidth(h.Id("r01")) == doctest::Approx(8.0 / 9));
  h.clock.RunUntil(Duration::Minutes(35));  // a second position: 7/9
  CHECK(h.sim.DomainBandwidth(h.Id("r01")) == doctest::Approx(7.0 / 9));
  CHECK(h.JobChanges(jobs[0]).back().second.step_time_s == doctest::Approx(8.5 + 1 / (7.0 / 9) + 0.5));
}

TEST_CASE("sim.nvl36x2: power and cooling stay per rack") {
  SUBCASE("a rack without power takes its switch trays: the pair is UNHEALTHY, the other rack's job hangs") {
    Harness h = Pairs();
    const auto jobs = OnePerRack(h);
    h.At(Duration::Minutes(10), [&] {
      for (const char* s : {"r01.shelf1", "r01.shelf2", "r01.shelf3"})  // 33 kW left for 43.2 kW of GPUs
        CHECK(h.sim.SetComponentFailed(h.Id(s), true, kPairFault).ok());
    });
    h.clock.RunUntil(Duration::Minutes(11));
    CHECK(h.sim.DomainHealthOf(h.Id("r02")) == Health::kUnhealthy);
    CHECK(h.sim.JobStateOf(jobs[1]) == JobState::kHung);
    CHECK(h.JobChanges(jobs[1]).back().second.cause == kPairFault);
    CHECK(h.sim.JobStateOf(jobs[2]) == JobState::kRunning);
  }
  SUBCASE("a CDU heats its own rack: the pair is DEGRADED until that rack's switch trays shut down, then UNHEALTHY") {
    Harness h = Pairs();
    const auto jobs = OnePerRack(h);
    h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, kPairFault).ok()); });
    h.clock.RunUntil(Duration::Minutes(10) + Duration::Seconds(30));  // GPUs trip in seconds, switch trays later
    CHECK(h.sim.DomainHealthOf(h.Id("r02")) == Health::kDegraded);
    CHECK(h.sim.JobStateOf(jobs[0]) != JobState::kRunning);
    CHECK(h.sim.JobStateOf(jobs[1]) == JobState::kRunning);
    CHECK(h.JobChanges(jobs[1]).size() == 1);
    h.clock.RunUntil(Duration::Minutes(15));  // r01's switch trays are lost, the pair's partition with them
    CHECK(h.sim.DomainHealthOf(h.Id("r02")) == Health::kUnhealthy);
    CHECK(h.sim.JobStateOf(jobs[1]) == JobState::kHung);
    CHECK(h.JobChanges(jobs[1]).back().second.cause == kPairFault);
    CHECK(h.sim.JobStateOf(jobs[2]) == JobState::kRunning);  // the other pair
  }
}

TEST_CASE("sim.nvl36x2: a TP block may cross the two racks of a pair, never two pairs") {
  Harness h = Pairs();
  JobConfig filler = Job(32);  // r01.tray01-08: one tray of r01 left
  filler.name = "filler";
  REQUIRE(h.sim.AddJob(filler).ok());
  JobConfig tp8 = Job(8);
  tp8.name = "tp8";
  tp8.grouped = true;
  tp8.tp = 8;
  const JobId in_pair = h.sim.AddJob(tp8).value();  // r01.tray09 + r02.tray01: one domain
  JobConfig rest = Job(32);                         // r02.tray02-09
  rest.name = "rest";
  REQUIRE(h.sim.AddJob(rest).ok());
  JobConfig tp8b = tp8;
  tp8b.gpus = 72;
  tp8b.dp = 9;
  const JobId whole = h.sim.AddJob(tp8b).value();  // all of r03 + r04: the second pair
  h.sim.Start();
  auto names = [&](JobId j) {
    std::vector<std::string> out;
    for (ComponentId t : h.sim.JobTrays(j)) out.push_back(h.topo.at(t).name);
    return out;
  };
  CHECK(names(in_pair) == std::vector<std::string>{"r01.tray09", "r02.tray01"});
  CHECK(h.sim.JobStateOf(whole) == JobState::kRunning);
  CHECK(names(whole).front() == "r03.tray01");
  // tp*ep may fill a 72-GPU domain on this model, not on a 36-GPU rack.
  JobConfig wide = tp8;
  wide.gpus = 72;
  wide.dp = 9;
  wide.ep = 9;
  CHECK(CheckGroups(wide, h.model()).ok());
}

}  // namespace
}  // namespace rackchaos::cluster
