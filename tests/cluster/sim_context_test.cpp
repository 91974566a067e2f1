// What the simulator's parts share (cluster/sim_context.h): poll slots, controllers' phases, and the
// order observations and ground truth go out in.
#include <doctest/doctest.h>

#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

Time AtSecond(int64_t seconds) { return Time{} + Duration::Seconds(seconds); }

TEST_CASE("sim.context: NextSlot is the first phase + k x period strictly after, the phase reduced first") {
  const Duration ten = Duration::Seconds(10), three = Duration::Seconds(3);
  CHECK(SimContext::NextSlot(three, ten, AtSecond(0)) == AtSecond(3));
  CHECK(SimContext::NextSlot(three, ten, AtSecond(3)) == AtSecond(13));  // strictly after
  CHECK(SimContext::NextSlot(three, ten, AtSecond(4)) == AtSecond(13));
  CHECK(SimContext::NextSlot(three, ten, AtSecond(25)) == AtSecond(33));
  // A 7 s telemetry phase on a 1 s link poll: the next whole second, not 7 s away.
  CHECK(SimContext::NextSlot(Duration::Seconds(7), Duration::Seconds(1), AtSecond(2)) == AtSecond(3));
}

TEST_CASE("sim.context: a controller's poll phase depends on the seed and the controller only") {
  const Topology topo = BuildTopology(1, 0);
  VirtualClock clock;
  EventLog events;
  SimContext a(topo, clock, events, {}, Rng(5).Fork("part-poll-phase"));
  SimContext b(topo, clock, events, {}, Rng(5).Fork("part-poll-phase"));
  SimContext other_seed(topo, clock, events, {}, Rng(6).Fork("part-poll-phase"));
  const ComponentId cdu = topo.CduOfRack(topo.racks()[0]), shelf = topo.Find("r01.shelf1").value();
  CHECK(a.PartPollPhase(cdu) == b.PartPollPhase(cdu));
  (void)b.PartPollPhase(shelf);  // asking for another controller first changes nothing
  CHECK(a.PartPollPhase(cdu) == b.PartPollPhase(cdu));
  CHECK(a.PartPollPhase(cdu) != a.PartPollPhase(shelf));
  CHECK(a.PartPollPhase(cdu) != other_seed.PartPollPhase(cdu));
  CHECK(a.PartPollPhase(cdu) < Duration::Seconds(10));  // within the telemetry period
}

TEST_CASE("sim.context: a pump's health is reported at its CDU controller's poll, ground truth at once") {
  const Topology topo = BuildTopology(1, 0);
  VirtualClock clock;
  EventLog events;
  Recorder seen;
  SimContext ctx(topo, clock, events, {}, Rng(5).Fork("part-poll-phase"));
  ctx.Subscribe(&seen);
  const ComponentId pump = topo.Find("r01.cdu.pump1").value(), cdu = topo.CduOfRack(topo.racks()[0]);
  clock.CallAt(AtSecond(100), [&] {
    ctx.PartHealth(pump, false);
    ctx.Physics(pump, "pump_failed", 0, 3);
  });
  clock.RunUntil(AtSecond(200));
  const auto samples = seen.Of<TelemetrySample>();
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].first == SimContext::NextSlot(ctx.PartPollPhase(cdu), Duration::Seconds(10), AtSecond(100)));
  CHECK(samples[0].second.value == 0);
  REQUIRE(events.events().size() == 1);
  CHECK(events.events()[0].at == AtSecond(100));
}

}  // namespace
}  // namespace rackchaos::cluster
