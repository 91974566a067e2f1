// CDU pumps, spine switches and BlueField DPUs in the simulator. Step times are worked out by hand from
// Job(): 10 s steps of which 8.5 s compute, 1 s NVLink and 0.5 s scale-out.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kPartFault = 7;

// Part health reports (CDU controller, DPU BMC, fabric manager) for `part`: (time, value).
std::vector<std::pair<Time, double>> PartReports(const Harness& h, ComponentId part) {
  std::vector<std::pair<Time, double>> out;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kPartOk && s.component == part) out.emplace_back(at, s.value);
  return out;
}

std::set<ComponentId> DryTrays(const Harness& h) {
  std::set<ComponentId> dry;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kCoolantFlow && s.value < h.model().tray_flow_l_per_min * 0.99)
      dry.insert(h.topo.TrayOf(s.component));
  return dry;
}

TEST_CASE("sim.parts: the topology appends pumps, DPUs and spines after every earlier part") {
  Harness h(42, 8, 2);
  // 8 racks x (rack + CDU + 8 shelves x 7 + 9 switch trays + 18 trays x 12 parts) = 8 x 283, then
  // 4 rails, 2 leaves per rail: every id of the earlier catalogue is unchanged.
  CHECK(h.Id("rail3.leaf02") == 8 * 283 + 4 + 7);
  CHECK(h.Id("r01.cdu.pump1") == 8 * 283 + 12);
  CHECK(h.Id("r08.cdu.pump2") == 8 * 283 + 12 + 15);
  CHECK(h.Id("r01.tray01.dpu0") == 8 * 283 + 12 + 16);
  CHECK(h.topo.spines().size() == 4);  // 8 leaves x 72 up ports / 144 ports per spine
  CHECK(h.topo.at(h.topo.spines().back()).name == "spine04");
  CHECK(h.topo.LeafGroups() == 2);
  CHECK(h.topo.DpuOfNic(h.Id("r01.tray03.nic1")) == h.Id("r01.tray03.dpu0"));
  CHECK(h.topo.DpuOfNic(h.Id("r01.tray03.nic2")) == h.Id("r01.tray03.dpu1"));
  CHECK(h.topo.NicsOfDpu(h.Id("r01.tray03.dpu1")) ==
        std::vector<ComponentId>{h.Id("r01.tray03.nic2"), h.Id("r01.tray03.nic3")});
}

TEST_CASE("sim.parts: a pump within the CDU's redundancy is only reported, the second stops the rack's flow") {
  Harness h(42, 2, 2);
  JobId job = h.sim.AddJob(Job(64)).value();
  h.sim.Start();
  ComponentId pump1 = h.Id("r01.cdu.pump1"), pump2 = h.Id("r01.cdu.pump2");
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.SetComponentFailed(pump1, true, kPartFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(10));
  auto reports = PartReports(h, pump1);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].second == 0);
  CHECK(reports[0].first - Time{Duration::Minutes(5)} <= Duration::Seconds(10));  // the next 10 s poll
  CHECK(DryTrays(h).empty());                                                     // 1 of 2 pumps carries the full flow
  CHECK(h.Physics("cdu_flow").empty());
  CHECK(h.Physics("thermal_slowdown").empty());
  CHECK(h.JobChanges(job).size() == 1);  // still running at its first speed
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(pump2, true, kPartFault + 1).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  auto flow = h.Physics("cdu_flow", h.Id("r01.cdu"));
  REQUIRE(flow.size() == 1);
  CHECK(flow[0].second.value == 0);
  CHECK(flow[0].second.cause == kPartFault + 1);
  std::set<ComponentId> dry = DryTrays(h);
  CHECK(dry.size() == 18);
  for (ComponentId t : dry) CHECK(h.topo.at(h.topo.RackOf(t)).name == "r01");
  auto slow = h.Physics("thermal_slowdown");
  CHECK(slow.size() >= 64);
  for (const auto& [at, p] : slow) CHECK(p.cause == kPartFault + 1);
  // One pump back: full flow again (and the CDU's own failure still stops it).
  h.At(Duration::Minutes(12), [&] { CHECK(h.sim.SetComponentFailed(pump1, false, kPartFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(13));
  CHECK(h.Physics("cdu_flow_up", h.Id("r01.cdu")).size() == 1);
  CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, kPartFault + 2).ok());
  CHECK(h.Physics("cdu_flow", h.Id("r01.cdu")).size() == 2);
}

TEST_CASE("sim.parts: a lost spine slows only the job spanning leaf groups, by its share of 4 spines") {
  Harness h(42, 8, 2);
  JobId wide = h.sim.AddJob(Job(448)).value();   // 112 trays at 16 per rack: r01-r07, both leaf groups
  JobId narrow = h.sim.AddJob(Job(64)).value();  // r08's 16 trays, inside the second leaf group
  h.sim.Start();
  ComponentId spine = h.Id("spine02");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(spine, true, kPartFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  auto changes = h.JobChanges(wide);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.state == JobState::kRunning);
  CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 + 1.0 + 0.5 * 4 / 3));
  CHECK(changes[1].second.cause == kPartFault);
  CHECK(h.JobChanges(narrow).size() == 1);
  REQUIRE(PartReports(h, spine).size() == 1);
  // Taken out by the healer, a second spine lost: 2 of 4 left; repaired and returned: nominal again.
  CHECK(h.sim.Drain(h.Id("spine03"), "test").ok());
  h.clock.RunUntil(Duration::Minutes(12));
  CHECK(h.JobChanges(wide).back().second.step_time_s == doctest::Approx(8.5 + 1.0 + 0.5 * 2));
  CHECK(h.sim.Resume(h.Id("spine03")).ok());
  CHECK(h.sim.SetComponentFailed(spine, false, kPartFault).ok());
  h.clock.RunUntil(Duration::Minutes(13));
  CHECK(h.JobChanges(wide).back().second.step_time_s == doctest::Approx(10.0));
  CHECK(h.JobChanges(narrow).size() == 1);
}

// The fault behind a job's spine slowdown is a fault on a spine lost now: not one repaired since, and
// none for a spine the healer took out.
TEST_CASE("sim.parts: a spine slowdown is charged to a fault on a spine still lost") {
  Harness h(42, 8, 2);
  JobId wide = h.sim.AddJob(Job(448)).value();
  h.sim.Start();
  ComponentId a = h.Id("spine02"), b = h.Id("spine03");
  CHECK(h.sim.SetComponentFailed(a, true, kPartFault).ok());
  CHECK(h.sim.SetComponentFailed(b, true, kPartFault + 1).ok());
  CHECK(h.sim.SetComponentFailed(b, false, kPartFault + 1).ok());
  h.clock.RunUntil(Duration::Minutes(1));
  CHECK(h.JobChanges(wide).back().second.cause == kPartFault);  // spine03's fault is over
  CHECK(h.sim.SetComponentFailed(a, false, kPartFault).ok());
  CHECK(h.sim.Drain(b, "test").ok());  // taken out, no fault
  h.clock.RunUntil(Duration::Minutes(2));
  CHECK(h.JobChanges(wide).back().second.step_time_s == doctest::Approx(8.5 + 1.0 + 0.5 * 4 / 3));
  CHECK(h.JobChanges(wide).back().second.cause == kNoFault);
}

TEST_CASE("sim.parts: every spine lost hangs the job spanning leaf groups") {
  Harness h(42, 8, 2);
  JobId wide = h.sim.AddJob(Job(512)).value();
  h.sim.Start();
  for (ComponentId s : h.topo.spines()) CHECK(h.sim.SetComponentFailed(s, true, kPartFault).ok());
  h.clock.RunUntil(Duration::Minutes(1));
  CHECK(h.sim.JobStateOf(wide) == JobState::kHung);
  CHECK(h.JobChanges(wide).back().second.cause == kPartFault);
}

TEST_CASE("sim.parts: a DPU takes the links of the NICs it fronts and hangs the job, its BMC reports it") {
  Harness h(42, 1, 2);
  JobId job = h.sim.AddJob(Job(16)).value();
  h.sim.Start();
  ComponentId dpu = h.Id("r01.tray03.dpu1");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(dpu, true, kPartFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  std::set<ComponentId> down;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>())
    if (!l.up) down.insert(l.component);
  CHECK(down == std::set<ComponentId>{h.Id("r01.tray03.nic2"), h.Id("r01.tray03.nic3")});
  CHECK(h.sim.JobStateOf(job) == JobState::kHung);
  REQUIRE(PartReports(h, dpu).size() == 1);
  CHECK(PartReports(h, dpu)[0].second == 0);
  // The tray's diagnostic fails while the DPU is down and passes once it is repaired.
  CHECK(h.sim.SetComponentFailed(dpu, false, kPartFault).ok());
  h.clock.RunUntil(Duration::Minutes(12));
  std::set<ComponentId> up;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>())
    if (l.up) up.insert(l.component);
  CHECK(up == down);
}

// The last state change of `nic`'s link seen so far: true when up (no change: up).
bool LastLinkUp(const Harness& h, ComponentId nic) {
  bool up = true;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>())
    if (l.component == nic) up = l.up;
  return up;
}

TEST_CASE("sim.parts: a NIC held down by a link_down and its DPU comes up only when both are reverted") {
  constexpr FaultId kLinkFault = 8;
  Harness h(42, 1, 2);
  h.sim.Start();
  ComponentId dpu = h.Id("r01.tray03.dpu1"), nic = h.Id("r01.tray03.nic2"), other = h.Id("r01.tray03.nic3");
  // Link first, then the DPU; the link's fault ends first: the DPU still holds the NIC down.
  CHECK(h.sim.SetNicLink(nic, false, kLinkFault).ok());
  CHECK(h.sim.SetComponentFailed(dpu, true, kPartFault).ok());
  CHECK(h.sim.SetNicLink(nic, true, kLinkFault).ok());
  h.clock.RunUntil(Duration::Minutes(1));
  CHECK_FALSE(LastLinkUp(h, nic));
  CHECK(h.sim.SetComponentFailed(dpu, false, kPartFault).ok());
  h.clock.RunUntil(Duration::Minutes(2));
  CHECK(LastLinkUp(h, nic));
  CHECK(LastLinkUp(h, other));
  // DPU first, then the link; the DPU is repaired first: the link_down still holds the NIC down.
  CHECK(h.sim.SetComponentFailed(dpu, true, kPartFault).ok());
  CHECK(h.sim.SetNicLink(nic, false, kLinkFault).ok());
  CHECK(h.sim.SetComponentFailed(dpu, false, kPartFault).ok());
  h.clock.RunUntil(Duration::Minutes(3));
  CHECK_FALSE(LastLinkUp(h, nic));
  CHECK(LastLinkUp(h, other));
  CHECK(h.sim.SetNicLink(nic, true, kLinkFault).ok());
  h.clock.RunUntil(Duration::Minutes(4));
  CHECK(LastLinkUp(h, nic));
}

// Three tiers over 80 GB200 racks: 20 leaf groups of 4 racks; a pod is 18 groups (72 leaves over 4 rails),
// so pod 1 is r01-r72 (72 spines), pod 2 r73-r80 (8 spines); 80 spines send 40 x 144 ports up: 40
// super-spines.
struct ThreeTiers {
  static Topology Build() {
    auto model = LoadRackModel("gb200-nvl72");
    REQUIRE(model.ok());
    model->fabric_tiers = 3;
    return std::move(Topology::Build(*model, 80, 0)).value();
  }
  Topology topo = Build();
  VirtualClock clock;
  EventLog events;
  SimBackend sim{topo, clock, Rng(42), events};
  ComponentId Id(const std::string& n) const { return *topo.Find(n); }
  double Step(JobId job) const {
    double last = 0;
    for (const Event& e : events.events())
      if (const auto* c = std::get_if<JobChanged>(&e.body))
        if (c->job == job) last = c->step_time_s;
    return last;
  }
};

TEST_CASE("sim.parts: three tiers - 2 pods of 72 and 8 spines, 40 super-spines, names after the two-tier parts") {
  ThreeTiers t;
  CHECK(t.topo.Pods() == 2);
  CHECK(t.topo.spines().size() == 80);
  CHECK(t.topo.SpinesInPod(0) == 72);
  CHECK(t.topo.SpinesInPod(1) == 8);
  CHECK(t.topo.super_spines().size() == 40);
  CHECK(t.topo.PodOfRack(71) == 0);
  CHECK(t.topo.PodOfRack(72) == 1);
  CHECK(t.topo.PodOfSpine(t.Id("spine73")) == 1);
  CHECK(t.topo.at(t.topo.super_spines().back()).name == "superspine40");
  CHECK(t.Id("superspine01") == t.topo.spines().back() + 1);
}

TEST_CASE("sim.parts: three tiers - a super-spine slows only the job spanning pods, a spine only its pod's") {
  ThreeTiers t;
  JobId a = t.sim.AddJob(Job(71 * 72)).value();  // r01-r71: pod 1, many leaf groups
  JobId b = t.sim.AddJob(Job(2 * 72)).value();   // r72-r73: both pods
  JobId c = t.sim.AddJob(Job(4 * 72)).value();   // r74-r77: two leaf groups of pod 2
  t.sim.Start();
  CHECK(t.sim.SetComponentFailed(t.Id("superspine01"), true, kPartFault).ok());
  t.clock.RunUntil(Duration::Minutes(1));
  CHECK(t.Step(a) == doctest::Approx(10.0));
  CHECK(t.Step(b) == doctest::Approx(8.5 + 1.0 + 0.5 * 40 / 39));
  CHECK(t.Step(c) == doctest::Approx(10.0));
  CHECK(t.sim.SetComponentFailed(t.Id("spine73"), true, kPartFault + 1).ok());  // pod 2's first spine
  t.clock.RunUntil(Duration::Minutes(2));
  CHECK(t.Step(a) == doctest::Approx(10.0));
  CHECK(t.Step(b) == doctest::Approx(8.5 + 1.0 + 0.5 * 8 / 7));
  CHECK(t.Step(c) == doctest::Approx(8.5 + 1.0 + 0.5 * 8 / 7));
  CHECK(t.sim.SetComponentFailed(t.Id("spine01"), true, kPartFault + 2).ok());  // pod 1's
  t.clock.RunUntil(Duration::Minutes(3));
  CHECK(t.Step(a) == doctest::Approx(8.5 + 1.0 + 0.5 * 72 / 71));
  CHECK(t.Step(c) == doctest::Approx(8.5 + 1.0 + 0.5 * 8 / 7));
  // The healer takes super-spines out like spines: two of 40 lost, the cross-pod job keeps 38/40, less than 7/8.
  CHECK(t.sim.SetComponentFailed(t.Id("spine73"), false, kPartFault + 1).ok());
  CHECK(t.sim.Drain(t.Id("superspine02"), "test").ok());
  t.clock.RunUntil(Duration::Minutes(4));
  CHECK(t.Step(b) == doctest::Approx(8.5 + 1.0 + 0.5 * 40 / 38));
  CHECK(t.sim.Resume(t.Id("superspine02")).ok());
  t.clock.RunUntil(Duration::Minutes(5));
  CHECK(t.Step(b) == doctest::Approx(8.5 + 1.0 + 0.5 * 40 / 39));
}

// The controllers' poll phases come from the seeded generator (SimBackend::PartPollPhase): a report
// lands within one 10 s poll of the failure, at a phase that is the same for the same seed, shared by
// the parts one controller reports (a CDU's two pumps, a shelf's PSUs), and not the same for every seed.
TEST_CASE("sim.parts: part health reports land at a poll phase drawn from the seed, per controller") {
  const Time at = Time{Duration::Minutes(5)};
  auto offsets = [&](uint64_t seed) {  // pump1, pump2, spine02, dpu1, psu1, psu2: time after the failure
    Harness h(seed, 8, 2);
    h.sim.Start();
    const std::vector<std::string> parts = {"r01.cdu.pump1", "r01.cdu.pump2", "spine02", "r01.tray03.dpu1"};
    h.At(at, [&] {
      for (size_t k = 0; k < parts.size(); ++k)
        CHECK(h.sim.SetComponentFailed(h.Id(parts[k]), true, kPartFault + static_cast<FaultId>(k)).ok());
      CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf1"), true, kPartFault + 9).ok());
    });
    h.clock.RunUntil(at + Duration::Seconds(20));
    std::vector<Duration> out;
    for (const std::string& p : parts) {
      auto reports = PartReports(h, h.Id(p));
      REQUIRE(reports.size() == 1);
      out.push_back(reports[0].first - at);
    }
    for (const char* psu : {"r01.shelf1.psu1", "r01.shelf1.psu2"})
      for (const auto& [t, s] : h.seen.Of<TelemetrySample>())
        if (s.metric == Metric::kPsuOk && s.component == h.Id(psu)) out.push_back(t - at);
    REQUIRE(out.size() == 6);
    return out;
  };
  std::set<int64_t> pump_offsets;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const std::vector<Duration> o = offsets(seed);
    CHECK(offsets(seed) == o);  // the same seed, the same phases
    for (Duration d : o) CHECK((d > Duration{} && d <= Duration::Seconds(10)));
    CHECK(o[0] == o[1]);  // one CDU controller
    CHECK(o[4] == o[5]);  // one shelf BMC
    pump_offsets.insert(o[0].us);
  }
  CHECK(pump_offsets.size() > 1);  // a fixed phase would report every seed's failure at the same moment
}

}  // namespace
}  // namespace rackchaos::cluster
