#include "cluster/thermal.h"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

// A GB200 GPU under TDP at 15% valve opening: G = 2 + 40 * 0.15 = 8 W/K, T_ss = 35 + 1200 / 8 = 185 C,
// tau = 400 / 8 = 50 s, starting at the full-flow steady state 35 + 1200 / 42 C at t = 100 s.
ThermalState Heating() {
  ThermalState s;
  s.t0_c = 35 + 1200.0 / 42;
  s.since = Duration::Seconds(100);
  s.steady_c = 185;
  s.tau_s = 50;
  return s;
}

TEST_CASE("TemperatureAt: the start value, one time constant, and the steady state") {
  ThermalState s = Heating();
  CHECK(TemperatureAt(s, s.since) == s.t0_c);
  CHECK(TemperatureAt(s, Duration::Seconds(0)) == s.t0_c);  // before `since`: still the start
  double after_tau = TemperatureAt(s, s.since + Duration::Seconds(50));
  CHECK(after_tau == doctest::Approx(185 + (s.t0_c - 185) * std::exp(-1.0)).epsilon(1e-12));
  CHECK(TemperatureAt(s, s.since + Duration::Hours(1)) == doctest::Approx(185).epsilon(1e-12));
}

TEST_CASE("TimeToReach lands on the level TemperatureAt computes") {
  ThermalState s = Heating();
  auto at = TimeToReach(s, 87);
  REQUIRE(at);
  // 50 ln((185 - 63.571...) / (185 - 87)) = 10.7180... s after `since`.
  CHECK(std::fabs((*at - s.since).Seconds() - 50 * std::log((185 - s.t0_c) / 98)) <= 1e-6);  // rounded up to 1 us
  CHECK((*at - s.since).Seconds() == doctest::Approx(10.718).epsilon(1e-4));
  // Rounded up to the microsecond: reached at the returned time, not one microsecond before.
  CHECK(TemperatureAt(s, *at) >= 87);
  CHECK(TemperatureAt(s, *at - Duration::Micros(1)) < 87);
  CHECK(std::fabs(TemperatureAt(s, *at) - 87) < 1e-5);  // slope ~2 K/s: at most 2e-6 K past it

  // A slow trajectory (tau = 1000 s) is within 1e-6 C of the level at the returned time.
  ThermalState slow = s;
  slow.tau_s = 1000;
  auto slow_at = TimeToReach(slow, 87);
  REQUIRE(slow_at);
  CHECK(std::fabs(TemperatureAt(slow, *slow_at) - 87) < 1e-6);
}

TEST_CASE("TimeToReach while cooling") {
  ThermalState s;
  s.t0_c = 92;
  s.steady_c = 35 + 180.0 / 42;  // idle at full flow
  s.tau_s = 400.0 / 42;
  auto at = TimeToReach(s, 87);
  REQUIRE(at);
  CHECK(std::fabs(at->Seconds() - s.tau_s * std::log((92 - s.steady_c) / (87 - s.steady_c))) <= 1e-6);
  CHECK(TemperatureAt(s, *at) <= 87);
  CHECK(TemperatureAt(s, *at - Duration::Micros(1)) > 87);
}

TEST_CASE("levels it never reaches return nullopt") {
  ThermalState s = Heating();
  CHECK_FALSE(TimeToReach(s, 185));   // the steady state itself: only approached
  CHECK_FALSE(TimeToReach(s, 200));   // beyond the steady state
  CHECK_FALSE(TimeToReach(s, 50));    // behind: it is already warmer and heating
  // Equal to the current temperature: nothing to wait for (returning `since` re-fired the crossing
  // forever, which once hung the simulator).
  CHECK_FALSE(TimeToReach(s, s.t0_c));
  ThermalState flat = s;
  flat.steady_c = flat.t0_c;  // at its steady state: goes nowhere
  CHECK_FALSE(TimeToReach(flat, 87));
}

TEST_CASE("Retarget starts the new trajectory from where the old one is") {
  ThermalState s = Heating();
  Time now = s.since + Duration::Seconds(20);
  ThermalState n = Retarget(s, now, 300, 2, 400, 35);
  CHECK(n.since == now);
  CHECK(n.t0_c == TemperatureAt(s, now));
  CHECK(n.steady_c == 35 + 300.0 / 2);
  CHECK(n.tau_s == 200);
}

TEST_CASE("SpeedAtPower is the cube root of the power share, capped at 1") {
  CHECK(SpeedAtPower(1200, 1200) == 1);
  CHECK(SpeedAtPower(600, 1200) == doctest::Approx(std::cbrt(0.5)));
  CHECK(SpeedAtPower(150, 1200) == doctest::Approx(0.5));
  CHECK(SpeedAtPower(2000, 1200) == 1);
  CHECK(SpeedAtPower(0, 1200) == 0);
  CHECK(SpeedAtPower(-5, 1200) == 0);
}

}  // namespace
}  // namespace rackchaos::cluster
