// Rack-level failure domains in the simulator: NVLink switch trays and domain health in both modes,
// the CDU, and PSUs within and beyond the rack's redundancy. Step times are worked out by hand from
// Job(): 10 s steps of which 8.5 s compute, 1 s NVLink and 0.5 s scale-out.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;
using Health = SimBackend::DomainHealth;

constexpr FaultId kFault = 7;

// (GPU, port) pairs reported down, and up, by link state observations on GPUs.
std::pair<std::set<std::pair<ComponentId, int>>, std::set<std::pair<ComponentId, int>>> Ports(const Harness& h) {
  std::set<std::pair<ComponentId, int>> down, up;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>())
    if (l.port >= 0) (l.up ? up : down).insert({l.component, l.port});
  return {down, up};
}

TEST_CASE(
    "sim.domains: a switch tray lost in full-bandwidth mode - its ports down on every GPU, domain UNHEALTHY, the job "
    "hangs") {
  Harness h;
  JobId job = h.sim.AddJob(Job(16)).value();
  h.sim.Start();
  ComponentId rack = h.Id("r01"), sw = h.Id("r01.switch3");
  CHECK(h.sim.DomainHealthOf(rack) == Health::kHealthy);
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(sw, true, kFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  CHECK(h.sim.DomainHealthOf(rack) == Health::kUnhealthy);
  CHECK(h.sim.DomainBandwidth(rack) == 0);
  // Switch tray 3 (index 2) carries ports 4 and 5 of each of the 72 GPUs, seen within one link poll.
  auto [down, up] = Ports(h);
  CHECK(down.size() == 72 * 2);
  for (const auto& [gpu, port] : down) CHECK((port == 4 || port == 5));
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>()) CHECK(at - Time{Duration::Minutes(10)} <= kSecond);
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.state == JobState::kHung);
  CHECK(changes[1].second.cause == kFault);
  // Repaired before the collective timeout: the ports come back and the domain is healthy again; the
  // job stays hung (NCCL does not recover a broken communicator) until the watchdog fails it.
  h.At(Duration::Minutes(12), [&] { CHECK(h.sim.SetComponentFailed(sw, false, kFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(25));
  CHECK(h.sim.DomainHealthOf(rack) == Health::kHealthy);
  CHECK(Ports(h).second.size() == 72 * 2);
  CHECK(h.sim.JobStateOf(job) == JobState::kFailed);
  CHECK(h.Physics("nvlink_domain_UNHEALTHY", rack).size() == 1);
  CHECK(h.Physics("nvlink_domain_HEALTHY", rack).size() == 1);
}

TEST_CASE(
    "sim.domains: adaptive mode - 1 and 2 switch trays lost leave every GPU 8/9 and 7/9 of NVLink, the job slows") {
  Harness h(42, 1, 2, /*adaptive=*/true);
  JobId job = h.sim.AddJob(Job(16)).value();
  h.sim.Start();
  ComponentId rack = h.Id("r01");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.switch1"), true, kFault).ok()); });
  h.At(Duration::Minutes(20), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.switch9"), true, kFault + 1).ok()); });
  h.clock.RunUntil(Duration::Minutes(15));
  CHECK(h.sim.DomainHealthOf(rack) == Health::kBandwidth);
  CHECK(h.sim.DomainBandwidth(rack) == doctest::Approx(8.0 / 9));
  h.clock.RunUntil(Duration::Minutes(25));
  CHECK(h.sim.DomainBandwidth(rack) == doctest::Approx(7.0 / 9));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[1].second.state == JobState::kRunning);
  CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 + 1.0 * 9 / 8 + 0.5));
  CHECK(changes[1].second.cause == kFault);
  CHECK(changes[2].second.step_time_s == doctest::Approx(8.5 + 1.0 * 9 / 7 + 0.5));
  CHECK(changes[2].second.cause == kFault + 1);
  // The healer takes switch1 out; repaired, it stays out of the fabric until the healer returns it.
  CHECK(h.sim.Drain(h.Id("r01.switch1"), "test").ok());
  CHECK(h.sim.SetComponentFailed(h.Id("r01.switch1"), false, kFault).ok());
  CHECK(h.sim.SetComponentFailed(h.Id("r01.switch9"), false, kFault + 1).ok());
  CHECK(h.sim.DomainBandwidth(rack) == doctest::Approx(8.0 / 9));
  CHECK(h.sim.Resume(h.Id("r01.switch1")).ok());
  CHECK(h.sim.DomainHealthOf(rack) == Health::kHealthy);
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(10));
}

TEST_CASE("sim.domains: a pulled compute tray leaves the domain DEGRADED at full bandwidth") {
  Harness h;
  h.sim.Start();
  ComponentId rack = h.Id("r01");
  CHECK(h.sim.SetTrayPresent(h.Id("r01.tray04"), false, kFault).ok());
  CHECK(h.sim.DomainHealthOf(rack) == Health::kDegraded);
  CHECK(h.sim.DomainBandwidth(rack) == 1);
  CHECK(h.sim.SetTrayPresent(h.Id("r01.tray04"), true, kFault).ok());
  h.clock.RunUntil(Duration::Minutes(10));  // boots
  CHECK(h.sim.DomainHealthOf(rack) == Health::kHealthy);
  CHECK(h.Physics("nvlink_domain_DEGRADED", rack).size() == 1);
}

TEST_CASE("sim.domains: a CDU failure stops the flow of every tray of its rack and heats them all") {
  Harness h(42, 2, 2);
  h.sim.AddJob(Job(64)).value();
  h.sim.Start();
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, kFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(6));
  std::set<ComponentId> dry;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kCoolantFlow && s.value == 0) dry.insert(h.topo.TrayOf(s.component));
  CHECK(dry.size() == 18);  // every tray of r01, none of r02
  for (ComponentId t : dry) CHECK(h.topo.at(h.topo.RackOf(t)).name == "r01");
  // Busy GPUs (the job's 16 trays) throttle first; all carry the CDU fault as their cause.
  auto slow = h.Physics("thermal_slowdown");
  CHECK(slow.size() >= 64);
  for (const auto& [at, p] : slow) CHECK(p.cause == kFault);
}

TEST_CASE("sim.domains: PSUs within redundancy only report failed, beyond it the rack loses power") {
  Harness h;
  JobId job = h.sim.AddJob(Job(16)).value();
  h.sim.Start();
  ComponentId rack = h.Id("r01");
  // 8 shelves x 6 x 5.5 kW = 264 kW for 72 x 1.2 kW = 86.4 kW of GPU TDP: 5 shelves can go.
  for (int s = 1; s <= 5; ++s) CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf" + std::to_string(s)), true, s).ok());
  h.clock.RunUntil(Duration::Minutes(1));
  CHECK(h.seen.Of<TelemetrySample>().size() > 0);
  int failed = 0;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>()) failed += s.metric == Metric::kPsuOk && s.value == 0;
  CHECK(failed == 30);
  CHECK(h.seen.Of<HeartbeatChange>().empty());
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
  CHECK(h.sim.DomainHealthOf(rack) == Health::kHealthy);
  // A sixth shelf leaves 2 x 33 = 66 kW, below 86.4 kW: every tray goes dark.
  CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf6"), true, 6).ok());
  h.clock.RunUntil(Duration::Minutes(2));
  CHECK(h.seen.Of<HeartbeatChange>().size() == 18);
  CHECK(h.sim.JobStateOf(job) == JobState::kHung);
  CHECK(h.sim.DomainHealthOf(rack) == Health::kUnhealthy);
  CHECK(h.Physics("power_lost", rack).size() == 1);
  CHECK(h.Physics("unpowered").size() == 18);
  // One shelf back (99 kW): the trays boot and beat again.
  CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf6"), false, 6).ok());
  h.clock.RunUntil(Duration::Minutes(20));
  CHECK(h.seen.Of<HeartbeatChange>().size() == 36);
  for (ComponentId g : h.topo.gpus()) CHECK(h.sim.GpuAlive(g));
}

TEST_CASE("sim.domains: a leak trips the zone's sensor at the next poll and the CDU shuts the zone's valve") {
  Harness h;
  h.sim.AddJob(Job(64)).value();
  h.sim.Start();
  ComponentId tray = h.Id("r01.tray05"), valve = h.Id("r01.tray05.valve");
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.SetComponentFailed(valve, true, kFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(6));
  const Time poll = h.PollPhase(tray);
  CHECK(h.sim.GetValveOpening(valve).value() == 0);
  std::vector<std::pair<Time, double>> wet;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kLeak) wet.push_back({at, s.value});
  REQUIRE(wet.size() == 1);
  CHECK(wet[0].second == 1);
  // On the tray's own poll phase, the first poll after the leak.
  CHECK((wet[0].first - poll).us % Duration::Seconds(10).us == 0);
  CHECK(wet[0].first > Time{Duration::Minutes(5)});
  CHECK(wet[0].first - Time{Duration::Minutes(5)} <= Duration::Seconds(10));
  // Only that tray's GPUs heat: the leak's cause is on their slowdown.
  auto slow = h.Physics("thermal_slowdown");
  REQUIRE(slow.size() == 4);
  for (const auto& [at, p] : slow) {
    CHECK(h.topo.TrayOf(p.component) == tray);
    CHECK(p.cause == kFault);
  }
  CHECK(h.sim.SetComponentFailed(valve, false, kFault).ok());
  CHECK(h.sim.GetValveOpening(valve).value() == 1);
}

TEST_CASE(
    "sim.domains: a leaf takes the links of one NIC per tray of the racks it serves, a rail those of every leaf") {
  Harness h(42, 5, 2);
  JobId job = h.sim.AddJob(Job(16)).value();
  h.sim.Start();
  CHECK(h.topo.RacksPerLeaf() == 4);  // 72 down ports / 18 trays per rack
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetComponentFailed(h.Id("rail2.leaf01"), true, kFault).ok()); });
  h.clock.RunUntil(Duration::Minutes(11));
  std::set<ComponentId> down;
  for (const auto& [at, l] : h.seen.Of<LinkStateChange>()) {
    CHECK_FALSE(l.up);
    CHECK(h.topo.at(l.component).kind == Kind::kNic);
    CHECK(h.topo.at(l.component).index == 2);
    CHECK(h.topo.at(l.component).rack < 4);
    down.insert(l.component);
  }
  CHECK(down.size() == 4 * 18);
  CHECK(h.sim.JobStateOf(job) == JobState::kHung);
  CHECK(h.JobChanges(job).back().second.cause == kFault);
  // The whole rail: the fifth rack's nic2 as well (its own leaf, rail2.leaf02).
  CHECK(h.sim.SetComponentFailed(h.Id("rail2"), true, kFault + 1).ok());
  h.clock.RunUntil(Duration::Minutes(12));
  CHECK(h.seen.Of<LinkStateChange>().size() == 5 * 18);
  CHECK(h.topo.LeafOfNic(h.Id("r05.tray03.nic2")) == h.Id("rail2.leaf02"));
}

TEST_CASE("sim.domains: only rack-level parts fail through SetComponentFailed") {
  Harness h;
  Status s = h.sim.SetComponentFailed(h.Id("r01.tray01.gpu0"), true, kFault);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() ==
        "r01.tray01.gpu0 is a gpu; a switch tray, CDU, pump, power shelf, PSU, tray valve (a leak), leaf, rail, spine "
        "or DPU can fail this way");
}

}  // namespace
}  // namespace rackchaos::cluster
