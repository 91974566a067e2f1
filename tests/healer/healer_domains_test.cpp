// The healer against the simulated cluster on rack-level failure domains: a lost NVLink switch tray in
// adaptive mode (taken out of the fabric, nothing drained, returned after repair) and in full-bandwidth
// mode (taken out, the rack drained, the job restarted on another rack). Assertions are on the events.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster/sim_backend.h"
#include "healer/healer.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

cluster::JobConfig Job64() {
  cluster::JobConfig cfg;
  cfg.name = "train";
  cfg.gpus = 64;
  return cfg;
}

struct Loop {
  explicit Loop(bool adaptive, int racks, const char* model = "gb200-nvl72", int spares = 2)
      : topo(Build(adaptive, racks, model, spares)), sim(topo, clock, Rng(3), log) {
    sim.Subscribe(&healer);
  }
  static cluster::Topology Build(bool adaptive, int racks, const char* name, int spares) {
    auto model = cluster::LoadRackModel(name);
    REQUIRE(model.ok());
    model->adaptive_bandwidth = adaptive;
    return std::move(cluster::Topology::Build(*model, racks, spares)).value();
  }
  ComponentId Id(const std::string& name) const { return testing::Id(name, topo); }
  template <typename T>
  std::vector<std::pair<Time, T>> Of() const {
    std::vector<std::pair<Time, T>> out;
    for (const Event& e : log.events())
      if (const auto* b = std::get_if<T>(&e.body)) out.emplace_back(e.at, *b);
    return out;
  }
  std::vector<std::string> Actions(const std::string& action) const {
    std::vector<std::string> out;
    for (const auto& [at, a] : Of<ActionTaken>())
      if (a.action == action)
        out.push_back(FormatDuration(at) + " " + topo.at(a.component).name + (a.ok ? "" : " FAILED"));
    return out;
  }

  cluster::Topology topo;
  VirtualClock clock;
  EventLog log;
  cluster::SimBackend sim;
  Healer healer{topo, clock, sim, log, testing::Shipped("default")};
};

TEST_CASE(
    "healer.domains: adaptive mode - the lost switch tray is taken out, no tray drained, and returned once repaired") {
  Loop l(/*adaptive=*/true, 1);
  JobId job = l.sim.AddJob(Job64()).value();
  l.sim.Start();
  const ComponentId sw = l.Id("r01.switch3");
  l.clock.CallAt(Duration::Minutes(10), [&] { CHECK(l.sim.SetComponentFailed(sw, true, 1).ok()); });
  l.clock.CallAt(Duration::Minutes(40), [&] { CHECK(l.sim.SetComponentFailed(sw, false, 1).ok()); });
  l.clock.RunUntil(Duration::Hours(2));

  auto iso = l.Of<Isolated>();
  REQUIRE(iso.size() == 1);
  CHECK(iso[0].second.component == sw);
  CHECK(iso[0].second.domain == "switch_tray");
  CHECK(iso[0].second.because.size() == 72 * 2);  // ports 4 and 5 of every GPU of the rack
  CHECK(l.Actions("drain").empty());
  CHECK(l.Actions("requeue_job").empty());
  REQUIRE(l.Actions("take_out").size() == 1);
  // Self-test every 10 min while the tray is broken; the first after the repair passes and returns it.
  auto resumed = l.Actions("resume");
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].find("r01.switch3") != std::string::npos);
  CHECK(l.sim.DomainHealthOf(l.Id("r01")) == cluster::SimBackend::DomainHealth::kHealthy);
  for (const auto& [at, c] : l.Of<JobChanged>()) CHECK(c.state == JobState::kRunning);  // slowed, never stopped
  CHECK(l.sim.JobStateOf(job) == JobState::kRunning);
}

TEST_CASE(
    "healer.domains: full-bandwidth mode - the switch tray is taken out and the rack drained, the job moves to r02") {
  Loop l(/*adaptive=*/false, 5);
  JobId job = l.sim.AddJob(Job64()).value();
  l.sim.Start();
  const ComponentId sw = l.Id("r01.switch7");
  l.clock.CallAt(Duration::Minutes(10), [&] { CHECK(l.sim.SetComponentFailed(sw, true, 1).ok()); });
  l.clock.RunUntil(Duration::Minutes(30));

  auto iso = l.Of<Isolated>();
  REQUIRE(iso.size() == 1);
  CHECK(iso[0].second.component == sw);
  CHECK(l.Actions("take_out").size() == 1);
  CHECK(l.Actions("drain").size() == 18);  // every tray of r01, within the breaker (72 of 360 GPUs)
  for (const auto& [at, a] : l.Of<ActionTaken>())
    if (a.action == "drain") CHECK(l.topo.at(l.topo.RackOf(a.component)).name == "r01");
  CHECK(l.sim.JobStateOf(job) == JobState::kRunning);
  for (ComponentId t : l.sim.JobTrays(job)) CHECK(l.topo.at(l.topo.RackOf(t)).name == "r02");
}

// GB200 NVL36x2: r01 + r02 are one NVLink domain. A switch tray of r01 stops the job on r02 as well, so
// the healer drains both racks of the pair (72 of 432 GPUs, within the breaker) and both jobs move.
TEST_CASE("healer.domains: NVL36x2 - a switch tray of r01 drains both racks of its pair and both jobs move") {
  Loop l(/*adaptive=*/false, 12, "gb200-nvl36x2", 0);
  cluster::JobConfig cfg = Job64();
  cfg.gpus = 36;
  const JobId left = l.sim.AddJob(cfg).value(), right = l.sim.AddJob(cfg).value();  // r01, r02
  l.sim.Start();
  l.clock.CallAt(Duration::Minutes(10), [&] { CHECK(l.sim.SetComponentFailed(l.Id("r01.switch3"), true, 1).ok()); });
  l.clock.RunUntil(Duration::Minutes(30));
  CHECK(l.Actions("take_out").size() == 1);
  std::vector<std::string> drained_racks;
  for (const auto& [at, a] : l.Of<ActionTaken>())
    if (a.action == "drain") drained_racks.push_back(l.topo.at(l.topo.RackOf(a.component)).name);
  CHECK(drained_racks.size() == 18);
  CHECK(std::count(drained_racks.begin(), drained_racks.end(), "r02") == 9);
  for (JobId job : {left, right}) {
    CAPTURE(job);
    CHECK(l.sim.JobStateOf(job) == JobState::kRunning);
    for (ComponentId t : l.sim.JobTrays(job)) CHECK(l.topo.DomainOfRack(l.topo.at(t).rack) != 0);
  }
}

// A region failover drains nothing and uses none of the circuit breaker's budget (docs/policies.md, "The
// circuit breaker"): with room for one tray's 4 GPUs in the window, east fails over, and a GPU failing
// under the job in west afterwards still gets its tray drained.
TEST_CASE("healer.domains: a region failover leaves the circuit breaker's budget to the isolations after it") {
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto built = cluster::Topology::Build(*model, 4, 0, {{"east", 2}, {"west", 2}});
  REQUIRE(built.ok());
  const cluster::Topology topo = std::move(built).value();
  VirtualClock clock;
  EventLog log;
  cluster::SimBackend sim(topo, clock, Rng(3), log);
  Policy policy = testing::Shipped("default");
  policy.breaker_max_share = 4.0 / 288;
  Healer healer(topo, clock, sim, log, policy);
  sim.Subscribe(&healer);
  JobId job = sim.AddJob(Job64()).value();
  sim.Start();
  clock.CallAt(Duration::Minutes(10), [&] { CHECK(sim.SetRegionDown(*topo.Find("east"), true, 1).ok()); });
  clock.RunUntil(Duration::Minutes(40));
  REQUIRE(sim.JobStateOf(job) == JobState::kRunning);
  const ComponentId tray = sim.JobTrays(job).front();
  REQUIRE(topo.RegionOf(tray) == 1);
  CHECK(sim.SetGpuFailed(topo.GpusOfTray(tray).front(), true, 79, 2).ok());
  clock.RunUntil(Duration::Minutes(50));
  std::vector<std::string> failovers, drains, alerts;
  for (const Event& e : log.events())
    if (const auto* a = std::get_if<ActionTaken>(&e.body)) {
      if (a->action == "failover") failovers.push_back(topo.at(a->component).name);
      if (a->action == "drain") drains.push_back(topo.at(a->component).name);
      if (a->action == "alert" && a->detail.find("circuit breaker") != std::string::npos) alerts.push_back(a->detail);
    }
  CHECK(failovers == std::vector<std::string>{"east"});
  CHECK(drains == std::vector<std::string>{topo.at(tray).name});
  CHECK(alerts.empty());
}

}  // namespace
}  // namespace rackchaos::healer
