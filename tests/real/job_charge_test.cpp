// What a real job's changes are charged to (runner/site/ssh_monitor.h: Suspect, JobCharge; TraysReached in
// runner/site/ssh_backend.h); the monitor that feeds them runs against the rig's real jobs (tests/rig,
// rig:charge and rig:charge_other_job).
#include "runner/site/ssh_monitor.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "cluster/catalogue.h"
#include "cluster/topology.h"

namespace rackchaos::runner {
namespace {

Time S(int s) { return Duration::Seconds(s); }

TEST_CASE("job charge: the last fault while applied, and after its revert until a full-speed window after it") {
  JobCharge charge;
  CHECK(charge.Cause(kNoFault) == kNoFault);
  charge.See(7, /*applied=*/true, S(6), S(10));  // running fine beside an applied fault
  CHECK(charge.Cause(7) == 7);                   // a slowdown now may be the fault's
  charge.See(7, /*applied=*/false, std::nullopt, S(30));  // reverted (seen at 30 s), the job still restarting
  CHECK(charge.Cause(7) == 7);                           // its restart and redone work are the fault's
  charge.See(7, /*applied=*/false, S(27), S(31));  // full speed, but over a window from before the revert
  CHECK(charge.Cause(7) == 7);                     // a stall the fault caused may not show in it yet
  charge.See(7, /*applied=*/false, S(30), S(34));  // a full-speed window wholly after the revert
  CHECK(charge.Cause(7) == kNoFault);              // a later slow step is not the fault's
  charge.See(7, /*applied=*/false, std::nullopt, S(39));
  CHECK(charge.Cause(7) == kNoFault);  // and stays so
  CHECK(charge.Cause(8) == 8);         // a fault that landed since is charged again
  charge.See(8, /*applied=*/true, S(40), S(44));
  CHECK(charge.Cause(8) == 8);
  charge.See(8, /*applied=*/false, S(41), S(45));  // its revert seen at 45 s: the window began before
  CHECK(charge.Cause(8) == 8);
  charge.See(8, /*applied=*/false, S(46), S(50));
  CHECK(charge.Cause(8) == kNoFault);
}

TEST_CASE("job charge: nothing landed, nothing to clear") {
  JobCharge charge;
  charge.See(kNoFault, /*applied=*/false, S(1), S(5));
  CHECK(charge.Cause(kNoFault) == kNoFault);
  CHECK(charge.Cause(3) == 3);
}

// Three GB200 racks in two regions (a region has its stores; the fabric has leaves and spines).
cluster::Topology ThreeRacks() {
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, 3, 0, {{"east", 2}, {"west", 1}});
  REQUIRE(topo.ok());
  return std::move(*topo);
}
ComponentId Id(const cluster::Topology& topo, std::string_view name) {
  auto id = topo.Find(name);
  REQUIRE_MESSAGE(id.has_value(), name);
  return *id;
}
ComponentId FirstOf(const cluster::Topology& topo, cluster::Kind kind) {
  for (const cluster::Component& c : topo.components())
    if (c.kind == kind) return c.id;
  FAIL("no component of kind ", cluster::KindName(kind));
  return kNoComponent;
}
std::vector<ComponentId> Reached(const cluster::Topology& topo, ComponentId part) {
  auto trays = TraysReached(topo, part);
  REQUIRE(trays.has_value());
  return {trays->begin(), trays->end()};
}

TEST_CASE("trays reached: a tray and its parts, a rack, a rack's shared parts, a region, and any tray from the fabric or a store") {
  const cluster::Topology topo = ThreeRacks();
  const ComponentId tray = Id(topo, "r02.tray04");
  const std::vector<ComponentId> just_tray{tray};
  CHECK(Reached(topo, tray) == just_tray);
  CHECK(Reached(topo, Id(topo, "r02.tray04.gpu1")) == just_tray);
  CHECK(Reached(topo, Id(topo, "r02.tray04.nic0")) == just_tray);
  const std::vector<ComponentId> rack2(topo.TraysUnder(Id(topo, "r02")).begin(), topo.TraysUnder(Id(topo, "r02")).end());
  CHECK(rack2.size() == 18);
  CHECK(std::find(rack2.begin(), rack2.end(), tray) != rack2.end());
  CHECK(Reached(topo, Id(topo, "r02")) == rack2);
  // One rack per NVLink domain on GB200: a rack's CDU, its pumps, a switch tray, a shelf reach its rack.
  CHECK(Reached(topo, Id(topo, "r02.cdu")) == rack2);
  CHECK(Reached(topo, Id(topo, "r02.switch1")) == rack2);
  CHECK(Reached(topo, Id(topo, "r02.shelf1")) == rack2);
  CHECK(Reached(topo, Id(topo, "r02.cdu.pump1")) == rack2);
  CHECK(Reached(topo, Id(topo, "east")).size() == 36);
  CHECK(Reached(topo, Id(topo, "west")).size() == 18);
  for (cluster::Kind k : {cluster::Kind::kLeaf, cluster::Kind::kSpine, cluster::Kind::kObjectStore, cluster::Kind::kCheckpointStore}) {
    CAPTURE(cluster::KindName(k));
    CHECK_FALSE(TraysReached(topo, FirstOf(topo, k)).has_value());
  }
}

TEST_CASE("suspect: the last landed fault that reaches a tray the job held at its landing or since") {
  const cluster::Topology topo = ThreeRacks();
  auto landing = [&](FaultId f, int at_s, std::string_view part) {
    SshBackend::Landing l{f, S(at_s), std::nullopt, false, {}};
    if (auto trays = TraysReached(topo, Id(topo, part))) l.trays.assign(trays->begin(), trays->end());
    else l.everywhere = true;
    return l;
  };
  auto on = [&](int since_s, std::initializer_list<std::string_view> trays) {
    JobPlacement p{S(since_s), {}};
    for (std::string_view t : trays) p.trays.push_back(Id(topo, t));
    std::sort(p.trays.begin(), p.trays.end());
    return p;
  };
  // Job A on r01 trays 1-2, job B on r01 trays 3-4 and job C on r02, all placed at 1 s.
  const std::vector<JobPlacement> a{on(1, {"r01.tray01", "r01.tray02"})};
  const std::vector<JobPlacement> b{on(1, {"r01.tray03", "r01.tray04"})};
  const std::vector<JobPlacement> c{on(1, {"r02.tray01"})};
  std::vector<SshBackend::Landing> landed{landing(1, 5, "r01.tray02")};  // tray2 pulled at 5 s
  CHECK(Suspect(landed, a) == 1);
  CHECK(Suspect(landed, b) == kNoFault);  // another tray of the same rack
  CHECK(Suspect(landed, c) == kNoFault);  // another rack
  CHECK(Suspect({}, a) == kNoFault);
  // Job A requeued at 7 s onto tray5: its restart is still the pull's (it held tray2 when it landed).
  std::vector<JobPlacement> a2 = a;
  a2.push_back(on(7, {"r01.tray01", "r01.tray05"}));
  CHECK(Suspect(landed, a2) == 1);
  // Then a GPU of r02 fails (fault 2, later): A is still the pull's, C is the GPU's, B nobody's.
  landed.push_back(landing(2, 9, "r02.tray01.gpu0"));
  CHECK(Suspect(landed, a2) == 1);
  CHECK(Suspect(landed, c) == 2);
  CHECK(Suspect(landed, b) == kNoFault);
  // r01's CDU fails (fault 3): every job of r01 may be its; C's stays the GPU's.
  landed.push_back(landing(3, 11, "r01.cdu"));
  CHECK(Suspect(landed, a2) == 3);
  CHECK(Suspect(landed, b) == 3);
  CHECK(Suspect(landed, c) == 2);
  // A job that left r01 before the CDU failed is not its: it held r01 only before the landing.
  std::vector<JobPlacement> moved{on(1, {"r01.tray06"}), on(10, {"r03.tray01"})};
  CHECK(Suspect(landed, moved) == kNoFault);
  // One placed on a tray after a fault landed there is the fault's (a degraded link it now uses).
  std::vector<JobPlacement> later{on(1, {"r03.tray02"}), on(20, {"r02.tray01"})};
  CHECK(Suspect(landed, later) == 2);
  // Once the GPU fault is over (reverted at 25 s), a job placed on its tray afterwards is not its.
  landed[1].ended = S(25);
  CHECK(Suspect(landed, later) == 2);  // placed at 20 s, while it held
  std::vector<JobPlacement> after_it{on(1, {"r03.tray02"}), on(26, {"r02.tray01"})};
  CHECK(Suspect(landed, after_it) == kNoFault);
  CHECK(Suspect(landed, c) == 2);  // C held the tray when it landed: its restart stays the GPU's
  // A spine fails (fault 4): it can trouble any job.
  landed.push_back(landing(4, 30, topo.at(FirstOf(topo, cluster::Kind::kSpine)).name));
  CHECK(landed.back().everywhere);
  CHECK(Suspect(landed, b) == 4);
  CHECK(Suspect(landed, moved) == 4);
}

// The monitor's speed window (StepWindow) with answers lagging their ticks by up to nine tenths of a
// period, as on a loaded machine: once it spans its 3 periods the rate is always measured, so a slowed job
// reads slowed at every tick (no flip-flop to "unknown", i.e. 1) and a recovered one gets a full-speed
// window that began after its recovery (JobCharge clears the fault with it).
TEST_CASE("step window: with jittered answers the rate is measured at every tick, slowed and recovered") {
  const Duration period = Duration::Seconds(2), nominal = Duration::Millis(200);
  StepWindow window(period * 3);
  // The job's newest step at `t`: nominal pace until 40 s, half pace until 80 s, nominal again after.
  const double slow_from = 40, fast_from = 80;
  auto step_at = [&](double t) {
    const double done = std::min(t, slow_from) / 0.2 + std::clamp(t - slow_from, 0.0, fast_from - slow_from) / 0.4 +
                        std::max(t - fast_from, 0.0) / 0.2;
    return static_cast<long>(done);
  };
  uint32_t lcg = 12345;  // a fixed sequence of lags: the test means the same on every run
  auto lag_s = [&] {
    lcg = lcg * 1664525u + 1013904223u;
    return 1.8 * static_cast<double>(lcg >> 8) / static_cast<double>(1u << 24);  // 0 to 0.9 of a period
  };
  int slowed_ticks = 0, recovered_ticks = 0;
  for (int tick = 0; tick < 60; ++tick) {
    const double answered = 2.0 * tick + lag_s();
    window.Add(Duration::Millis(static_cast<int64_t>(answered * 1000)), step_at(answered));
    const StepWindow::Rate r = window.Measure(nominal);
    CAPTURE(tick);
    CAPTURE(answered);
    if (answered < 8) continue;  // 3 periods of answers first
    REQUIRE(r.measured);
    // The window is no longer than its span plus the widest gap between two answers (two periods).
    CHECK(answered - r.from.Seconds() < 6 + 4);
    const double from = r.from.Seconds();
    if (answered < slow_from) CHECK(r.speed > 0.95);
    if (from >= slow_from && answered < fast_from) {  // wholly inside the slow spell
      ++slowed_ticks;
      CHECK(r.speed > 0.45);
      CHECK(r.speed < 0.55);
      CHECK(r.step_s == doctest::Approx(0.4).epsilon(0.1));
    }
    if (from >= fast_from) {  // wholly after it: full speed, from a window that began after the recovery
      ++recovered_ticks;
      CHECK(r.speed > 0.95);
      CHECK(r.step_s == doctest::Approx(0.2).epsilon(0.05));
    }
  }
  CHECK(slowed_ticks >= 12);
  CHECK(recovered_ticks >= 12);
  // An answer no newer than the last adds nothing; Clear starts over (a new placement), unmeasured.
  const StepWindow::Rate before = window.Measure(nominal);
  window.Add(before.from, 0);
  CHECK(window.Measure(nominal).from == before.from);
  window.Clear();
  CHECK_FALSE(window.Measure(nominal).measured);
  window.Add(Duration::Seconds(200), 10);
  window.Add(Duration::Seconds(203), 25);
  CHECK_FALSE(window.Measure(nominal).measured);  // 3 s: short of the span
  CHECK_FALSE(window.Measure(Duration{}).measured);  // no nominal step: no speed
  StepWindow unset;  // a zero span: one answer, or two at once, measure nothing (no division by zero)
  unset.Add(Duration::Seconds(5), 3);
  CHECK_FALSE(unset.Measure(nominal).measured);
  unset.Add(Duration::Seconds(6), 8);
  CHECK(unset.Measure(nominal).measured);
  CHECK(unset.Measure(nominal).step_s == doctest::Approx(0.2));
}

}  // namespace
}  // namespace rackchaos::runner
