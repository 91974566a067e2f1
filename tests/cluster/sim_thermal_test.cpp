// Valve failures on the simulated cluster: when GPUs throttle and shut down, against the closed form
// worked out here from the catalogue (GB200: TDP 1200 W, C = 400 J/K, G = 2 + 40 * opening W/K,
// inlet 35 C, slowdown 87 C, shutdown 92 C, lowest throttled power 300 W).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kValveFault = 7;

// A 32-GPU job on trays 01-08 whose GPUs sit at their full-flow steady state under TDP by 10 min.
struct ValveScenario {
  ValveScenario() {
    auto id = h.sim.AddJob(cfg);
    REQUIRE(id.ok());
    job = *id;
    h.sim.Start();
    REQUIRE(h.sim.JobTrays(job).size() == 8);
    REQUIRE(h.sim.JobTrays(job).back() == tray);
    for (ComponentId g : h.topo.GpusOfTray(tray)) gpus.push_back(g);
  }

  Harness h;
  JobConfig cfg = Job(32);
  JobId job = kNoJob;
  ComponentId tray = h.Id("r01.tray08");
  ComponentId valve = h.Id("r01.tray08.valve");
  std::vector<ComponentId> gpus;
  const Time closed_at = Duration::Minutes(10);
  const double loaded_c = Steady(h.model(), 1200, 1.0);  // 35 + 1200 / 42 = 63.57 C
};

TEST_CASE("valve at 15%: the tray's GPUs throttle when the closed form says, hold, and the job slows") {
  ValveScenario s;
  const RackModel& m = s.h.model();
  s.h.At(s.closed_at, [&] { CHECK(s.h.sim.SetValveOpening(s.valve, 0.15, kValveFault).ok()); });
  s.h.clock.RunUntil(Duration::Minutes(20));

  CHECK(s.h.sim.GetValveOpening(s.valve).value() == 0.15);
  CHECK(s.h.sim.GpuTemperature(s.gpus[0]) == doctest::Approx(87).epsilon(1e-9));  // held; read before the restore
  // G = 8 W/K: T_ss = 185 C, tau = 50 s; from 63.57 C to 87 C takes 50 ln(121.43 / 98) = 10.718 s.
  const Time slowdown = s.closed_at + Duration::FromSecondsF(SecondsToReach(m, 1200, 0.15, s.loaded_c, 87));
  CHECK((slowdown - s.closed_at).Seconds() == doctest::Approx(10.718).epsilon(1e-4));
  for (ComponentId g : s.gpus) {
    auto slow = s.h.Physics("thermal_slowdown", g);
    REQUIRE(slow.size() == 1);
    CHECK(Near(slow[0].first, slowdown));
    CHECK(slow[0].second.value == doctest::Approx(87).epsilon(1e-6));
    CHECK(slow[0].second.cause == kValveFault);
    CHECK(s.h.sim.GpuAlive(g));
  }
  CHECK(s.h.Physics("thermal_slowdown").size() == 4);  // only tray08's GPUs
  CHECK(s.h.Physics("thermal_shutdown").empty());

  // Throttled, a GPU holds 87 C at G (87 - 35) = 416 W, above the 300 W floor: it never shuts down,
  // and computes at (416 / 1200)^(1/3) of full speed.
  const double hold = Conductance(m, 0.15) * (m.gpu_slowdown_c - m.inlet_c);
  CHECK(hold == doctest::Approx(416));
  CHECK(hold > m.gpu_min_power_w);
  CHECK(s.h.sim.GpuSpeed(s.gpus[0]) == doctest::Approx(std::cbrt(hold / 1200)));

  auto changes = s.h.JobChanges(s.job);
  REQUIRE(changes.size() == 2);  // running at t=0, slower at the slowdown
  CHECK(changes[1].second.detail == "speed changed");
  CHECK(Near(changes[1].first, slowdown));
  CHECK(changes[1].second.step_time_s == doctest::Approx(StepTime(s.cfg, std::cbrt(hold / 1200))));
  CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 / std::cbrt(416.0 / 1200) + 1.5));
  CHECK(changes[1].second.speed == doctest::Approx(10 / changes[1].second.step_time_s));
  CHECK(changes[1].second.cause == kValveFault);
  CHECK(changes[1].second.state == JobState::kRunning);

  // Telemetry shows the throttle bit, the held temperature and the reduced flow (8 L/min x 15%).
  bool throttle_seen = false, flow_seen = false;
  for (const auto& [at, sample] : s.h.seen.Of<TelemetrySample>()) {
    if (sample.component == s.gpus[2] && sample.metric == Metric::kThermalThrottle && sample.value == 1) {
      throttle_seen = true;
      CHECK(at >= slowdown);
    }
    if (sample.component == s.valve && sample.metric == Metric::kCoolantFlow && at > s.closed_at) {
      flow_seen = true;
      CHECK(sample.value == doctest::Approx(1.2));
    }
  }
  CHECK(throttle_seen);
  CHECK(flow_seen);

  SUBCASE("restoring the valve ends the throttle and the job's slowdown") {
    const Time restored = s.h.clock.Now();
    CHECK(s.h.sim.Release(Held::kValveOpening, {s.valve, -1}, kValveFault).ok());
    s.h.clock.RunUntil(restored + Duration::Minutes(10));  // 63 time constants at full flow
    for (ComponentId g : s.gpus) {
      auto rec = s.h.Physics("thermal_recovered", g);
      REQUIRE(rec.size() == 1);
      CHECK(rec[0].first == restored);
      CHECK(s.h.sim.GpuTemperature(g) == doctest::Approx(s.loaded_c).epsilon(1e-6));
    }
    auto after = s.h.JobChanges(s.job);
    REQUIRE(after.size() == 3);
    CHECK(after[2].first == restored);
    CHECK(after[2].second.step_time_s == doctest::Approx(10));
    CHECK(after[2].second.speed == doctest::Approx(1));
    CHECK(after[2].second.cause == kNoFault);
  }
}

TEST_CASE("valve at 0%: the GPUs throttle, then shut down at the predicted time, and the job hangs") {
  ValveScenario s;
  const RackModel& m = s.h.model();
  s.h.At(s.closed_at, [&] { CHECK(s.h.sim.SetValveOpening(s.valve, 0.0, kValveFault).ok()); });
  s.h.clock.RunUntil(Duration::Minutes(11));

  // Shut: G = 2 W/K, T_ss = 635 C, tau = 200 s; 63.57 C -> 87 C in 200 ln(571.43 / 548) = 8.373 s.
  const Time slowdown = s.closed_at + Duration::FromSecondsF(SecondsToReach(m, 1200, 0.0, s.loaded_c, 87));
  CHECK((slowdown - s.closed_at).Seconds() == doctest::Approx(8.373).epsilon(1e-3));
  // Holding 87 C would need 2 x 52 = 104 W, below the 300 W floor: at 300 W, T_ss = 185 C, and
  // 87 C -> 92 C takes 200 ln(98 / 93) = 10.474 s.
  CHECK(Conductance(m, 0.0) * (m.gpu_slowdown_c - m.inlet_c) < m.gpu_min_power_w);
  const Time shutdown = slowdown + Duration::FromSecondsF(SecondsToReach(m, 300, 0.0, 87, 92));
  CHECK((shutdown - slowdown).Seconds() == doctest::Approx(10.474).epsilon(1e-3));

  for (ComponentId g : s.gpus) {
    CAPTURE(s.h.topo.at(g).name);
    auto slow = s.h.Physics("thermal_slowdown", g);
    REQUIRE(slow.size() == 1);
    CHECK(Near(slow[0].first, slowdown));
    auto shut = s.h.Physics("thermal_shutdown", g);
    REQUIRE(shut.size() == 1);
    CHECK(Near(shut[0].first, shutdown, 20));
    CHECK(shut[0].second.value >= 92 - 1e-6);
    CHECK(shut[0].second.cause == kValveFault);
    CHECK_FALSE(s.h.sim.GpuAlive(g));
    CHECK(s.h.sim.GpuSpeed(g) == 0);
    CHECK(s.h.sim.GpuTemperature(g) < 92);  // off the bus it draws nothing and cools
  }

  // Xid 79 for each GPU, from tray08's kernel log, after the log shipping delay.
  auto lines = s.h.seen.Of<KernelLogLine>();
  REQUIRE(lines.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    CHECK(lines[k].second.node == s.tray);
    CHECK(Near(lines[k].first, shutdown + Duration::Seconds(2), 20));
    const std::string want = "NVRM: Xid (PCI:" + s.h.topo.PciOf(s.gpus[k]) + "): 79, GPU has fallen off the bus.";
    CHECK_MESSAGE(lines[k].second.line.find(want) != std::string::npos, lines[k].second.line);
  }

  auto changes = s.h.JobChanges(s.job);
  REQUIRE(changes.size() >= 2);
  const auto& hung = changes.back();
  CHECK(hung.second.state == JobState::kHung);
  CHECK(Near(hung.first, shutdown, 20));
  CHECK(hung.second.cause == kValveFault);
  CHECK(hung.second.detail == "r01.tray08.gpu0 fell off the bus");
  CHECK(s.h.sim.JobStateOf(s.job) == JobState::kHung);
  bool hung_status = false;
  for (const auto& [at, st] : s.h.seen.Of<JobStatus>()) hung_status |= st.state == JobState::kHung && st.job == s.job;
  CHECK(hung_status);

  // No progress while hung.
  const double steps = s.h.sim.JobSteps(s.job);
  s.h.clock.RunUntil(Duration::Minutes(12));
  CHECK(s.h.sim.JobSteps(s.job) == steps);

  SUBCASE("restoring the valve lets the dead GPUs cool to the inlet") {
    const double before = s.h.sim.GpuTemperature(s.gpus[0]);
    CHECK(s.h.sim.Release(Held::kValveOpening, {s.valve, -1}, kValveFault).ok());
    s.h.clock.RunUntil(Duration::Minutes(22));  // 63 time constants at full flow
    CHECK(s.h.sim.GpuTemperature(s.gpus[0]) < before);
    CHECK(s.h.sim.GpuTemperature(s.gpus[0]) == doctest::Approx(m.inlet_c).epsilon(1e-6));
    CHECK(s.h.Physics("thermal_shutdown").size() == 4);
  }
}

TEST_CASE("flow back while a GPU is above its slowdown temperature: it cools from there, no jump") {
  ValveScenario s;
  const RackModel& m = s.h.model();
  s.h.At(s.closed_at, [&] { CHECK(s.h.sim.SetValveOpening(s.valve, 0.0, kValveFault).ok()); });
  // 5 s after the slowdown it heats at 300 W toward 185 C: 185 - 98 e^(-5/200) = 89.42 C.
  const Time reopen = s.closed_at + Duration::FromSecondsF(SecondsToReach(m, 1200, 0.0, s.loaded_c, 87)) +
                      Duration::Seconds(5);
  s.h.clock.RunUntil(reopen);
  const ComponentId gpu = s.gpus[0];
  const double before = s.h.sim.GpuTemperature(gpu);
  CHECK(before == doctest::Approx(185 - 98 * std::exp(-5.0 / 200)).epsilon(1e-5));
  // At 15% it throttles to the 416 W that holds 87 C, and decays there with tau = 50 s.
  CHECK(s.h.sim.SetValveOpening(s.valve, 0.15, kValveFault).ok());
  CHECK(s.h.sim.GpuTemperature(gpu) == doctest::Approx(before).epsilon(1e-12));
  s.h.clock.RunUntil(reopen + Duration::Seconds(50));
  CHECK(s.h.sim.GpuTemperature(gpu) == doctest::Approx(87 + (before - 87) * std::exp(-1.0)).epsilon(1e-9));
  s.h.clock.RunUntil(reopen + Duration::Minutes(30));
  CHECK(s.h.Physics("thermal_shutdown").empty());
  CHECK(s.h.sim.GpuTemperature(gpu) == doctest::Approx(87).epsilon(1e-9));
  CHECK(s.h.sim.GpuSpeed(gpu) == doctest::Approx(std::cbrt(416.0 / 1200)));
}

TEST_CASE("a shut valve on an idle tray: GPUs at 180 W still overheat, slowly") {
  Harness h;
  h.sim.Start();
  const RackModel& m = h.model();
  ComponentId gpu = h.Id("r01.tray12.gpu1");
  const double idle_c = Steady(m, m.gpu_idle_w, 1.0);  // 35 + 180 / 42
  CHECK(h.sim.GpuTemperature(gpu) == doctest::Approx(idle_c));
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetValveOpening(h.Id("r01.tray12.valve"), 0, 3).ok()); });
  h.clock.RunUntil(Duration::Minutes(20));
  // 180 W > 104 W hold: throttled at its own 180 W, T_ss = 125 C; 39.3 -> 87 C in 162.7 s, then 87 ->
  // 92 C in 200 ln(38 / 33) = 28.2 s.
  const Time slowdown = Duration::Minutes(1) + Duration::FromSecondsF(SecondsToReach(m, 180, 0, idle_c, 87));
  const Time shutdown = slowdown + Duration::FromSecondsF(SecondsToReach(m, 180, 0, 87, 92));
  auto slow = h.Physics("thermal_slowdown", gpu);
  auto shut = h.Physics("thermal_shutdown", gpu);
  REQUIRE(slow.size() == 1);
  REQUIRE(shut.size() == 1);
  CHECK(Near(slow[0].first, slowdown));
  CHECK(Near(shut[0].first, shutdown, 20));
}

TEST_CASE("a GPU capped below the hold power stays under its slowdown temperature at 15% flow") {
  Harness h;
  auto job = h.sim.AddJob(Job(4));
  REQUIRE(job.ok());
  h.sim.Start();
  const RackModel& m = h.model();
  ComponentId gpu = h.Id("r01.tray01.gpu0");
  // At 15% the hold power is 416 W; capped to 400 W the GPU settles at 35 + 400 / 8 = 85 C, below slowdown.
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.SetPowerCap(gpu, 400, 2).ok()); });
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetValveOpening(h.Id("r01.tray01.valve"), 0.15, 3).ok()); });
  h.clock.RunUntil(Duration::Minutes(30));
  CHECK(h.Physics("thermal_slowdown", gpu).empty());
  CHECK(h.sim.GpuTemperature(gpu) == doctest::Approx(Steady(m, 400, 0.15)).epsilon(1e-6));
  CHECK(h.sim.GpuSpeed(gpu) == doctest::Approx(std::cbrt(400.0 / 1200)));
  // The uncapped GPUs of the tray do throttle.
  CHECK(h.Physics("thermal_slowdown", h.Id("r01.tray01.gpu1")).size() == 1);
}

}  // namespace
}  // namespace rackchaos::cluster

namespace rackchaos::cluster {
namespace {

using namespace testing;

// The clock detector's signals (healer/detectors.cpp): a cap that holds a running GPU back shows in its
// telemetry as the power-cap clock event and an SM clock at SpeedAtPower of the cap, polled for as long
// as the cap lasts (not only while the temperature settles), and the uncapped GPUs show neither.
TEST_CASE("a power cap on a running GPU is polled while it lasts: power-cap event and the clock it leaves") {
  Harness h;
  auto job = h.sim.AddJob(Job(4));
  REQUIRE(job.ok());
  h.sim.Start();
  const ComponentId gpu = h.Id("r01.tray01.gpu0"), other = h.Id("r01.tray01.gpu1");
  const Time capped = Duration::Minutes(30), lifted = Duration::Minutes(90);
  h.At(capped, [&] { CHECK(h.sim.SetPowerCap(gpu, 300, 2).ok()); });
  h.At(lifted, [&] { CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 2).ok()); });
  h.clock.RunUntil(Duration::Hours(3));
  std::vector<Time> capped_polls;
  bool after_lift = false;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>()) {
    if (s.component == other && s.metric == Metric::kPowerCapped) CHECK(s.value == 0);
    if (s.component == other && s.metric == Metric::kGpuClockFraction) CHECK(s.value == 1);
    if (s.component != gpu) continue;
    if (s.metric == Metric::kPowerCapped && s.value == 1) capped_polls.push_back(at);
    if (s.metric == Metric::kGpuClockFraction && at > capped && at < lifted)
      CHECK(s.value == doctest::Approx(std::cbrt(300.0 / 1200)).epsilon(1e-3));
    if (s.metric == Metric::kPowerCapped && at > lifted) {
      CHECK(s.value == 0);
      after_lift = true;
    }
  }
  // Every 10 s poll of the hour under the cap, long after the GPU's temperature settled (tau ~10 s).
  REQUIRE(capped_polls.size() >= 359);  // 360, or 359 when a poll falls on the instant the cap is lifted
  CHECK(capped_polls.size() <= 360);
  CHECK(capped_polls.front() > capped);
  CHECK(capped_polls.front() <= capped + Duration::Seconds(10));
  CHECK(capped_polls.back() < lifted);
  CHECK(after_lift);
}

// IsGpuMetric, which detectors' default GPU temperature lines rely on, says which samples a GPU's poll
// makes: every sample of a GPU has a GPU metric, and no sample of anything else does.
TEST_CASE("telemetry: the samples of a GPU are exactly those of GPU metrics") {
  Harness h;
  REQUIRE(h.sim.AddJob(Job(4)).ok());
  h.sim.Start();
  h.clock.RunUntil(Duration::Minutes(2));
  std::set<Metric> gpu, other;
  for (const auto& [at, s] : h.seen.Of<TelemetrySample>()) {
    const bool of_gpu = h.topo.at(s.component).kind == Kind::kGpu;
    CHECK(IsGpuMetric(s.metric) == of_gpu);
    (of_gpu ? gpu : other).insert(s.metric);
  }
  CHECK(gpu.size() == 5);  // temperature, throttle, power, clock, power cap
  CHECK(other.count(Metric::kCoolantFlow) == 1);
}

// One rack running a 4-GPU job (tray 1), its telemetry's line at `interest_c`.
std::unique_ptr<Harness> OneJobWithLine(double interest_c) {
  SimOptions opt;
  opt.telemetry_interest_c = interest_c;
  auto h = std::make_unique<Harness>(42, 1, 2, false, opt);
  REQUIRE(h->sim.AddJob(Job(4)).ok());
  h->sim.Start();
  return h;
}

// SimOptions::telemetry_interest_c: a tray whose GPUs only warm toward a steady state below the line
// (a job starting: idle 35.7 C to 63.57 C under TDP at full flow) is polled once, not until it settles;
// the same warm-up with the line below its steady state is polled until it settles, as by default; and a
// valve failing later re-arms the polls, its GPUs heating past the line and throttling as before.
TEST_CASE("telemetry below every reader's line: a warming tray is polled once, a failing valve as before") {
  auto temperature_polls = [](Harness& h, ComponentId gpu, Time from, Time to) {
    int n = 0;
    for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
      n += s.component == gpu && s.metric == Metric::kGpuTemperature && at >= from && at < to;
    return n;
  };
  auto run = [&](double interest_c, std::vector<double>* temps) {
    auto started = OneJobWithLine(interest_c);
    Harness& h = *started;
    const ComponentId gpu = h.Id("r01.tray01.gpu0"), valve = h.Id("r01.tray01.valve");
    h.At(Duration::Hours(1), [&] { CHECK(h.sim.SetValveOpening(valve, 0.15, kValveFault).ok()); });
    h.clock.RunUntil(Duration::Hours(1) + Duration::Minutes(5));
    for (const auto& [at, s] : h.seen.Of<TelemetrySample>())
      if (s.component == gpu && s.metric == Metric::kGpuTemperature && at >= Duration::Hours(1)) temps->push_back(s.value);
    CHECK(h.Physics("thermal_slowdown", gpu).size() == 1);
    return std::make_pair(temperature_polls(h, gpu, Time{}, Duration::Hours(1)), temperature_polls(h, gpu, Duration::Hours(1), Duration::Hours(2)));
  };
  std::vector<double> all_temps, low_temps, high_temps;
  const auto all = run(-std::numeric_limits<double>::infinity(), &all_temps);  // the default: every change
  const auto below = run(85, &low_temps);  // the healer's default alert: the warm-up stays below it
  const auto above = run(50, &high_temps);  // a line the warm-up crosses
  CHECK(all.first >= 4);  // the warm-up, tau = 400 / 42 = 9.5 s, polled every 10 s until within 0.5 C
  CHECK(below.first == 1);
  CHECK(above.first == all.first);
  // After the valve fails, the same polls with the same values whatever the line.
  CHECK(below.second == all.second);
  CHECK(above.second == all.second);
  CHECK(low_temps == all_temps);
  CHECK(high_temps == all_temps);
  CHECK(all.second >= 20);
}

// The other way: a valve fails, its GPUs heat past the line and throttle, the valve is restored and they
// cool back. With the line at the healer's alert, the polls are those of the default, value for value,
// until the GPUs are back below the line (a reader sees them cool), then stop while the default keeps
// polling until they settle; none of the polls not made reads at or above the line.
TEST_CASE("telemetry below every reader's line: a tray cooling back after its valve is restored is polled until below it") {
  struct Seen {
    std::vector<std::pair<Time, double>> temps;  // the GPU's temperature polls from a minute before the restore
    bool throttled = false;
  };
  const Time failed = Duration::Hours(1), restored = Duration::Hours(1) + Duration::Minutes(10);
  auto run = [&](double interest_c) {
    auto started = OneJobWithLine(interest_c);
    Harness& h = *started;
    const ComponentId gpu = h.Id("r01.tray01.gpu0"), valve = h.Id("r01.tray01.valve");
    h.At(failed, [&] { CHECK(h.sim.SetValveOpening(valve, 0.15, kValveFault).ok()); });
    h.At(restored, [&] { CHECK(h.sim.SetValveOpening(valve, 1.0, kValveFault).ok()); });
    h.clock.RunUntil(Duration::Hours(3));
    Seen seen;
    for (const auto& [at, s] : h.seen.Of<TelemetrySample>()) {
      if (s.component != gpu || at < restored - Duration::Seconds(60)) continue;
      if (s.metric == Metric::kGpuTemperature) seen.temps.push_back({at, s.value});
      if (s.metric == Metric::kThermalThrottle && s.value > 0) seen.throttled = true;
    }
    return seen;
  };
  const double line = 85;
  const Seen all = run(-std::numeric_limits<double>::infinity()), below = run(line);
  REQUIRE(!all.temps.empty());
  CHECK(all.throttled);                  // it was hot when the valve came back: held at slowdown, 87 C
  CHECK(all.temps.front().second >= line);
  CHECK(all.temps.back().second < 70);   // and settled near its steady state by the end
  // The same polls, value for value, as long as they go...
  REQUIRE(!below.temps.empty());
  REQUIRE(below.temps.size() < all.temps.size());
  CHECK(std::equal(below.temps.begin(), below.temps.end(), all.temps.begin()));
  // ...until one below the line, the last; every poll not made reads below the line.
  CHECK(below.temps.back().second < line);
  for (size_t k = below.temps.size(); k < all.temps.size(); ++k) CHECK(all.temps[k].second < line);
  CHECK(all.temps.size() - below.temps.size() >= 3);  // the default polls on until within 0.5 C of steady
}

}  // namespace
}  // namespace rackchaos::cluster
