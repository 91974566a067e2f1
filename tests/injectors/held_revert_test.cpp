// A value fault at 100% (or at the baseline) holds its state like any other fault, and only its own
// revert ends that hold (Backend::Release): nothing is inferred from the value. Each case applies and
// reverts through the injectors, in either order, and reads the simulator's ground truth.
#include <doctest/doctest.h>

#include <string>

#include "injectors/injector.h"
#include "tests/cluster/regions_harness.h"

namespace rackchaos::injectors {
namespace {

using cluster::Target;
using cluster::testing::Harness;

// Applies `kind` with `params` as the run does; its Applied value for the revert.
Applied Apply(Harness& h, const char* kind, const Target& t, const Params& params, FaultId fault) {
  auto a = FindInjector(kind)->Apply(h.sim, h.topo, t, params, fault);
  REQUIRE_MESSAGE(a.ok(), a.status().ToString());
  return *a;
}

void Revert(Harness& h, const char* kind, const Target& t, const Applied& a, FaultId fault) {
  const Status s = FindInjector(kind)->Revert(h.sim, h.topo, t, a, fault);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
}

// The last ground-truth event `what` of the component: its value and fault.
PhysicsChanged Last(const Harness& h, std::string_view what, ComponentId c) {
  auto all = h.Physics(what, c);
  REQUIRE_FALSE(all.empty());
  return all.back().second;
}

TEST_CASE("held: link_degrade at 100% and at 25% on one link - each revert ends only its own hold") {
  for (const char* link : {"r01.tray02.nic1", "r01.tray02.gpu1.nvlink3"}) {
    for (bool full_reverted_first : {true, false}) {
      CAPTURE(link);
      CAPTURE(full_reverted_first);
      Harness h;
      h.sim.Start();
      const Target t = *h.topo.ResolveTarget(link);
      constexpr FaultId kFull = 10, kQuarter = 11;
      const Applied full = Apply(h, "link_degrade", t, {{"bandwidth", 1.0}}, kFull);
      CHECK(Last(h, "link_bandwidth", t.component).cause == kFull);  // in force, at 100%
      const Applied quarter = Apply(h, "link_degrade", t, {{"bandwidth", 0.25}}, kQuarter);
      CHECK(Last(h, "link_bandwidth", t.component).value == doctest::Approx(0.25));
      if (full_reverted_first) {
        Revert(h, "link_degrade", t, full, kFull);
        CHECK(Last(h, "link_bandwidth", t.component).value == doctest::Approx(0.25));
        CHECK(Last(h, "link_bandwidth", t.component).cause == kQuarter);
        Revert(h, "link_degrade", t, quarter, kQuarter);
      } else {
        Revert(h, "link_degrade", t, quarter, kQuarter);
        // The 100% fault still holds the link (inferred from the value, its apply had released it).
        CHECK(Last(h, "link_bandwidth", t.component).value == 1);
        CHECK(Last(h, "link_bandwidth", t.component).cause == kFull);
        Revert(h, "link_degrade", t, full, kFull);
      }
      CHECK(Last(h, "link_bandwidth", t.component).value == 1);
      CHECK(h.Physics("link_bandwidth", t.component).size() == 4);
    }
  }
}

// The path comes back up once, at the last revert (inferred from the value, the 100% fault's apply and
// its revert each reported it back up).
TEST_CASE("held: storage_degrade at 100% and cache_fail on one tray - the path is up once, at the last revert") {
  for (bool full_reverted_first : {true, false}) {
    CAPTURE(full_reverted_first);
    Harness h;
    h.sim.Start();
    const Target tray = *h.topo.ResolveTarget("r01.tray02");
    constexpr FaultId kFull = 7, kLost = 8;
    const Applied full = Apply(h, "storage_degrade", tray, {{"bandwidth", 1.0}}, kFull);
    const Applied lost = Apply(h, "cache_fail", tray, {}, kLost);
    CHECK(Last(h, "storage_read", tray.component).value == 0);
    if (full_reverted_first) {
      Revert(h, "storage_degrade", tray, full, kFull);
      CHECK(Last(h, "storage_read", tray.component).value == 0);  // still lost
      CHECK(h.Physics("storage_read_up", tray.component).empty());
      Revert(h, "cache_fail", tray, lost, kLost);
    } else {
      Revert(h, "cache_fail", tray, lost, kLost);
      CHECK(Last(h, "storage_read", tray.component).value == 1);  // the 100% fault still holds it
      CHECK(Last(h, "storage_read", tray.component).cause == kFull);
      CHECK(h.Physics("storage_read_up", tray.component).empty());
      Revert(h, "storage_degrade", tray, full, kFull);
    }
    REQUIRE(h.Physics("storage_read_up", tray.component).size() == 1);
    CHECK(Last(h, "storage_read_up", tray.component).cause == (full_reverted_first ? kLost : kFull));
  }
}

TEST_CASE("held: object_store_degrade at 100% and object_store_fail on one store - up once, at the last revert") {
  for (bool full_reverted_first : {true, false}) {
    CAPTURE(full_reverted_first);
    cluster::testing::Regions h;
    h.sim.Start();
    const Target store = *h.topo.ResolveTarget("east.objstore");
    constexpr FaultId kFull = 21, kFailed = 22;
    const Applied full = Apply(h, "object_store_degrade", store, {{"bandwidth", 1.0}}, kFull);
    const Applied failed = Apply(h, "object_store_fail", store, {}, kFailed);
    CHECK(Last(h, "object_store_read", store.component).value == 0);
    Revert(h, full_reverted_first ? "object_store_degrade" : "object_store_fail", store,
           full_reverted_first ? full : failed, full_reverted_first ? kFull : kFailed);
    CHECK(Last(h, "object_store_read", store.component).value == (full_reverted_first ? 0 : 1));
    CHECK(h.PhysicsCount("object_store_up") == 0);
    Revert(h, full_reverted_first ? "object_store_fail" : "object_store_degrade", store,
           full_reverted_first ? failed : full, full_reverted_first ? kFailed : kFull);
    CHECK(h.PhysicsCount("object_store_up") == 1);
  }
}

}  // namespace
}  // namespace rackchaos::injectors
