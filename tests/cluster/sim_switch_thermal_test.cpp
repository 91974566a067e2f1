// NVLink switch trays' temperature (cluster/sim_switch_thermal.cpp): the first-order model with the
// catalogue's switch_tray numbers, checked against the closed form written out here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

// The switch tray's conductance, steady state and time from one temperature to another (thermal.h).
double SwitchG(const RackModel& m, double flow) {
  return m.switch_residual_conductance_w_per_k + m.switch_conductance_w_per_k * flow;
}
double SwitchSeconds(const RackModel& m, double power, double flow, double from_c, double to_c) {
  const double g = SwitchG(m, flow), ss = m.inlet_c + power / g;
  return m.switch_heat_capacity_j_per_k / g * std::log((ss - from_c) / (ss - to_c));
}
double AtFullFlow(const RackModel& m) { return m.inlet_c + m.switch_power_w / SwitchG(m, 1); }

Time Us(double seconds) { return Time{static_cast<int64_t>(std::llround(seconds * 1e6))}; }

TEST_CASE("sim.switch_thermal: a switch tray valve at 20% slows, shuts the tray down and the domain goes UNHEALTHY") {
  for (bool adaptive : {false, true}) {
    CAPTURE(adaptive);
    Harness h(BuildTopology(1, 2, adaptive, "gb300-nvl72"), 42);
    const RackModel& m = h.model();
    REQUIRE(m.switch_power_w > 0);
    JobId job = h.sim.AddJob(Job(64)).value();
    h.sim.Start();
    const ComponentId sw = h.Id("r01.switch1"), rack = h.Id("r01");
    const Time closed = Duration::Minutes(10);
    h.At(closed, [&] { CHECK(h.sim.SetValveOpening(sw, 0.2, 7).ok()); });
    const double t_slow = SwitchSeconds(m, m.switch_power_w, 0.2, AtFullFlow(m), m.switch_slowdown_c);
    const double t_shut = SwitchSeconds(m, m.switch_power_w, 0.2, AtFullFlow(m), m.switch_shutdown_c);
    h.clock.RunUntil(closed + Us(t_shut) + Duration::Seconds(1));
    auto slow = h.Physics("thermal_slowdown", sw), shut = h.Physics("thermal_shutdown", sw);
    REQUIRE(slow.size() == 1);
    REQUIRE(shut.size() == 1);
    CHECK(Near(slow[0].first, closed + Us(t_slow), 3));
    CHECK(Near(shut[0].first, closed + Us(t_shut), 3));
    CHECK(shut[0].second.cause == 7);
    CHECK(h.sim.DomainHealthOf(rack) ==
          (adaptive ? SimBackend::DomainHealth::kBandwidth : SimBackend::DomainHealth::kUnhealthy));
    CHECK(h.sim.JobStateOf(job) == (adaptive ? JobState::kRunning : JobState::kHung));
    // Its ports went down on every GPU of the rack, as for a pulled switch tray.
    int down = 0;
    for (const auto& [at, c] : h.seen.Of<LinkStateChange>()) down += !c.up && at >= shut[0].first;
    CHECK(down == 72 * m.nvlink_links_per_gpu / m.switch_trays);

    // The valve reopens: off and at full flow it cools to slowdown, then comes back.
    const Time reopened = h.clock.Now();
    const double hot_c = h.sim.SwitchTemperature(sw);
    CHECK(hot_c < m.switch_shutdown_c);  // cooling since it stopped drawing power
    CHECK(h.sim.Release(Held::kValveOpening, {sw, -1}, 7).ok());
    const double t_back = SwitchSeconds(m, 0, 1, hot_c, m.switch_slowdown_c);
    h.clock.RunUntil(reopened + Us(t_back) + Duration::Seconds(1));
    auto back = h.Physics("thermal_recovered", sw);
    REQUIRE(back.size() == 1);
    CHECK(Near(back[0].first, reopened + Us(t_back), 3));
    CHECK(h.sim.DomainHealthOf(rack) == SimBackend::DomainHealth::kHealthy);
  }
}

TEST_CASE("sim.switch_thermal: a CDU failure heats every switch tray of the rack, not those of the next rack") {
  Harness h(BuildTopology(2, 0, false, "gb200-nvl72"), 42);
  const RackModel& m = h.model();
  h.sim.Start();
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, 4).ok()); });
  const double t_shut = SwitchSeconds(m, m.switch_power_w, 0, AtFullFlow(m), m.switch_shutdown_c);
  h.clock.RunUntil(Duration::Minutes(1) + Us(t_shut) + Duration::Seconds(1));
  auto shut = h.Physics("thermal_shutdown");
  int r01 = 0;
  for (const auto& [at, p] : shut)
    if (h.topo.at(p.component).kind == Kind::kSwitchTray) {
      CHECK(h.topo.at(p.component).rack == 0);
      CHECK(Near(at, Duration::Minutes(1) + Us(t_shut), 3));
      CHECK(p.cause == 4);
      ++r01;
    }
  CHECK(r01 == m.switch_trays);
  CHECK(h.sim.DomainHealthOf(h.Id("r01")) == SimBackend::DomainHealth::kUnhealthy);
  CHECK(h.sim.DomainHealthOf(h.Id("r02")) == SimBackend::DomainHealth::kHealthy);
}

JobConfig Grouped(int tp, int dp) {
  JobConfig cfg = Job(tp * dp);
  cfg.grouped = true;
  cfg.tp = tp;
  cfg.dp = dp;
  return cfg;
}

TEST_CASE("sim.switch_thermal: a switch tray in slowdown throttles its share of NVLink and its domain's jobs slow down") {
  Harness h(BuildTopology(2, 0, false, "gb300-nvl72"), 42);
  const RackModel& m = h.model();
  REQUIRE(m.switch_throttle_bandwidth < 1);
  const JobId hot = h.sim.AddJob(Grouped(4, 18)).value();  // tp 4 x dp 18: all of r01
  const JobId cool = h.sim.AddJob(Grouped(4, 16)).value();  // r02
  h.sim.Start();
  REQUIRE(h.RacksOf(hot) == std::vector<std::string>{"r01"});
  REQUIRE(h.RacksOf(cool) == std::vector<std::string>{"r02"});
  const ComponentId sw = h.Id("r01.switch3"), rack = h.Id("r01");
  const Time closed = Duration::Minutes(10);
  h.At(closed, [&] { CHECK(h.sim.SetValveOpening(sw, 0.2, 7).ok()); });
  const double t_slow = SwitchSeconds(m, m.switch_power_w, 0.2, AtFullFlow(m), m.switch_slowdown_c);
  const double t_shut = SwitchSeconds(m, m.switch_power_w, 0.2, AtFullFlow(m), m.switch_shutdown_c);
  h.clock.RunUntil(closed + Us(t_slow) - Duration::Seconds(1));
  CHECK(h.sim.DomainBandwidth(rack) == 1);
  h.clock.RunUntil(closed + Us((t_slow + t_shut) / 2));  // in slowdown, not yet shut down
  REQUIRE(h.Physics("thermal_slowdown", sw).size() == 1);
  REQUIRE(h.Physics("thermal_shutdown", sw).empty());
  // One of 9 positions at throttle_bandwidth of its share; NMX still says HEALTHY (every port is up).
  const double bw = (8 + m.switch_throttle_bandwidth) / 9;
  CHECK(h.sim.DomainBandwidth(rack) == doctest::Approx(bw));
  CHECK(h.sim.DomainHealthOf(rack) == SimBackend::DomainHealth::kHealthy);
  CHECK(h.sim.DomainBandwidth(h.Id("r02")) == 1);
  CHECK(h.seen.Of<LinkStateChange>().empty());
  // TP (10%) and the in-domain DP (5%) at the domain's bandwidth: 8.5 + 1.5 / bw, caused by the valve.
  auto changes = h.JobChanges(hot);
  CHECK(changes.back().first == h.Physics("thermal_slowdown", sw)[0].first);
  CHECK(changes.back().second.step_time_s == doctest::Approx(8.5 + 1.5 / bw));
  CHECK(changes.back().second.cause == 7);
  CHECK(h.JobChanges(cool).back().second.step_time_s == doctest::Approx(10));
  // The valve reopens: it cools below slowdown and the job is back at 10 s.
  CHECK(h.sim.Release(Held::kValveOpening, {sw, -1}, 7).ok());
  h.clock.RunUntil(h.clock.Now() + Duration::Minutes(5));
  REQUIRE(h.Physics("thermal_recovered", sw).size() == 1);
  CHECK(h.sim.DomainBandwidth(rack) == 1);
  CHECK(h.JobChanges(hot).back().second.step_time_s == doctest::Approx(10));
  CHECK(h.JobChanges(hot).back().first == h.Physics("thermal_recovered", sw)[0].first);
}

TEST_CASE("sim.switch_thermal: a switch tray reports its temperature each poll while it changes, nothing once shut down") {
  Harness h(BuildTopology(1, 0, false, "gb300-nvl72"), 42);
  const RackModel& m = h.model();
  h.sim.Start();
  const ComponentId sw = h.Id("r01.switch3");
  const Time closed = Duration::Minutes(10);
  h.At(closed, [&] { CHECK(h.sim.SetValveOpening(sw, 0.2, 7).ok()); });
  const double t_shut = SwitchSeconds(m, m.switch_power_w, 0.2, AtFullFlow(m), m.switch_shutdown_c);
  h.clock.RunUntil(closed + Duration::Minutes(5));
  const Time shut = h.Physics("thermal_shutdown", sw).at(0).first;
  CHECK(Near(shut, closed + Us(t_shut), 3));
  std::vector<std::pair<Time, double>> temps;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
    if (s.metric == Metric::kSwitchTemperature) {
      CHECK(s.component == sw);  // the other switch trays keep their steady state: quiet
      temps.emplace_back(at, s.value);
    }
  REQUIRE(temps.size() >= 9);
  CHECK(temps.front().first > closed);
  CHECK(temps.front().first <= closed + Duration::Seconds(10));
  for (size_t i = 1; i < temps.size(); ++i) {
    CHECK(temps[i].first - temps[i - 1].first == Duration::Seconds(10));
    CHECK(temps[i].second > temps[i - 1].second);  // heating all the way
  }
  CHECK(temps.back().first < shut);  // shut down: it reports nothing
  CHECK(temps.back().second < m.switch_shutdown_c);
  CHECK(temps.back().first + Duration::Seconds(10) > shut);
}

TEST_CASE("sim.switch_thermal: GPUs already shut down report no ports down when their switch tray is lost") {
  Harness h(BuildTopology(1, 0, false, "gb300-nvl72"), 42);
  h.sim.AddJob(Job(64)).value();
  h.sim.Start();
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, 4).ok()); });
  h.clock.RunUntil(Duration::Minutes(10));
  Time first_switch{Duration::Hours(1).us};
  for (const auto& [at, p] : h.Physics("thermal_shutdown"))
    if (h.topo.at(p.component).kind == Kind::kSwitchTray) first_switch = std::min(first_switch, at);
  std::set<ComponentId> off;  // GPUs shut down before any switch tray
  for (const auto& [at, p] : h.Physics("thermal_shutdown"))
    if (h.topo.at(p.component).kind == Kind::kGpu && at < first_switch) off.insert(p.component);
  REQUIRE(!off.empty());     // the job's GPUs overheat first
  REQUIRE(off.size() < 72);  // and some GPU is still on to report
  int down = 0;
  for (const auto& [at, c] : h.seen.Of<LinkStateChange>()) {
    CHECK(off.count(c.component) == 0);
    down += !c.up;
  }
  CHECK(down == static_cast<int>(72 - off.size()) * h.model().nvlink_links_per_gpu);  // every switch tray lost
}

TEST_CASE("sim.switch_thermal: models without switch tray numbers keep their switch trays at any flow") {
  auto model = LoadRackModel("hgx-b200");
  REQUIRE(model.ok());
  CHECK(model->switch_power_w == 0);
  std::string text = ShippedModelText("gb300-nvl72");
  const auto at = text.find("  shutdown_c: 105");
  REQUIRE(at != std::string::npos);
  text.replace(at, 17, "  shutdown_c: 90");  // below its slowdown temperature
  auto refused = ParseRackModel(text, "x.yaml");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("switch_tray") != std::string::npos);
}

}  // namespace
}  // namespace rackchaos::cluster
