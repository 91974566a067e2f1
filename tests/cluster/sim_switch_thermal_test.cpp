// NVLink switch trays' temperature (cluster/sim_switch_thermal.cpp): the first-order model with the
// catalogue's switch_tray numbers, checked against the closed form written out here.
#include <doctest/doctest.h>

#include <cmath>
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
    CHECK(h.sim.ReleaseValveOpening(sw, 1.0, 7).ok());
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
