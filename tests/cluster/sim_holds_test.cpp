// Overlapping faults on one shared state (cluster/holds.h): the worst value held wins, and reverting one
// of two faults leaves the other's value in force, whichever is reverted first. Each fault is applied and
// reverted as its injector does (a value fault releases its own hold, by its id).
#include <doctest/doctest.h>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

double LastStep(const Harness& h, JobId job) {
  auto changes = h.JobChanges(job);
  REQUIRE_FALSE(changes.empty());
  return changes.back().second.step_time_s;
}

// A job reading 2 GB/s per GPU over 10 s steps (sim_storage_test.cpp): a degraded cache at 20% reads
// 1.4 GB/s (14.3 s steps), a lost one reads the object store's 1 GB/s (20 s steps).
TEST_CASE("sim.holds: storage_degrade and cache_fail on one tray - the worst holds until both are reverted") {
  for (bool cache_first_reverted : {true, false}) {
    CAPTURE(cache_first_reverted);
    Harness h;
    JobConfig cfg = Job(8);
    cfg.input_gbytes_per_s = 2;
    JobId job = h.sim.AddJob(cfg).value();
    h.sim.Start();
    ComponentId tray = h.Id("r01.tray02");
    constexpr FaultId kDegrade = 7, kCache = 8;
    CHECK(h.sim.SetStorageRead(tray, 0.2, kDegrade).ok());
    CHECK(LastStep(h, job) == doctest::Approx(20 / 1.4));
    CHECK(h.sim.SetStorageRead(tray, 0, kCache).ok());
    CHECK(LastStep(h, job) == doctest::Approx(20));
    if (cache_first_reverted) {
      CHECK(h.sim.Release(Held::kStorageRead, {tray, -1}, kCache).ok());
      CHECK(LastStep(h, job) == doctest::Approx(20 / 1.4));  // the degraded cache still holds
    } else {
      CHECK(h.sim.Release(Held::kStorageRead, {tray, -1}, kDegrade).ok());
      CHECK(LastStep(h, job) == doctest::Approx(20));  // the lost cache still holds
    }
    CHECK(h.sim.Release(Held::kStorageRead, {tray, -1}, cache_first_reverted ? kDegrade : kCache).ok());
    CHECK(LastStep(h, job) == doctest::Approx(10));
    CHECK(h.Physics("storage_read_up", tray).size() == 1);
  }
}

TEST_CASE("sim.holds: two gpu_throttle caps on one GPU - the lower holds, the baseline comes back last") {
  for (bool first_reverted_first : {true, false}) {
    CAPTURE(first_reverted_first);
    Harness h;
    h.sim.Start();
    ComponentId gpu = h.Id("r01.tray05.gpu1");
    CHECK(h.sim.SetPowerCap(gpu, 900, kNoFault).ok());  // the site's own limit
    // As gpu_throttle does: cap; revert by releasing its own cap.
    CHECK(h.sim.SetPowerCap(gpu, 400, 3).ok());
    CHECK(h.sim.SetPowerCap(gpu, 700, 4).ok());  // a milder cap does not lift the first
    CHECK(h.sim.GetPowerCap(gpu).value() == 400);
    if (first_reverted_first) {
      CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 3).ok());
      CHECK(h.sim.GetPowerCap(gpu).value() == 700);
      CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 4).ok());
    } else {
      CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 4).ok());
      CHECK(h.sim.GetPowerCap(gpu).value() == 400);
      CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 3).ok());
    }
    CHECK(h.sim.GetPowerCap(gpu).value() == 900);
    CHECK(h.Physics("power_cap", gpu).back().second.value == 900);
  }
}

// A revert names its fault (Backend::Release): two caps at one value, and a cap at the baseline value,
// each end only their own hold. (Inferred from the value, the cap at the baseline was never released
// and the first fault's revert to 1200 W was taken for a new cap at 600 W.)
TEST_CASE("sim.holds: two caps at one value and one at the baseline - each release ends only its own hold") {
  Harness h;
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray05.gpu1");
  CHECK(h.sim.SetPowerCap(gpu, 600, 3).ok());
  CHECK(h.sim.SetPowerCap(gpu, 600, 4).ok());
  CHECK(h.sim.SetPowerCap(gpu, 1200, 5).ok());  // TDP, the baseline: a hold like any other
  CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 5).ok());
  CHECK(h.sim.GetPowerCap(gpu).value() == 600);
  CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 3).ok());
  CHECK(h.sim.GetPowerCap(gpu).value() == 600);  // fault 4 still holds it
  CHECK(h.Physics("power_cap", gpu).back().second.cause == 4);
  CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 4).ok());
  CHECK(h.sim.GetPowerCap(gpu).value() == 1200);
  CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 4).ok());  // released twice: nothing changes
  CHECK(h.sim.GetPowerCap(gpu).value() == 1200);
  // A release names a state of the part it acts on, like the verb that placed the hold.
  CHECK(h.sim.Release(Held::kPowerCap, {h.Id("r01.tray05"), -1}, 4).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.Release(Held::kLinkBandwidth, {gpu, 18}, 4).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.Release(Held::kStoreRate, {gpu, -1}, 4).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("sim.holds: valve_fail and a leak on one valve - shut until both end, then the baseline opening") {
  for (bool leak_first : {true, false}) {
    CAPTURE(leak_first);
    Harness h;
    h.sim.Start();
    ComponentId valve = h.Id("r01.tray08.valve");
    constexpr FaultId kValve = 5, kLeak = 6;
    auto valve_fail = [&] {
      CHECK(h.sim.GetValveOpening(valve).ok());  // as valve_fail reads its baseline
      CHECK(h.sim.SetValveOpening(valve, 0.5, kValve).ok());
    };
    if (leak_first) {
      CHECK(h.sim.SetComponentFailed(valve, true, kLeak).ok());
      valve_fail();  // reads the leak's 0% as its baseline
      CHECK(h.sim.GetValveOpening(valve).value() == 0);
      CHECK(h.sim.SetComponentFailed(valve, false, kLeak).ok());
      CHECK(h.sim.GetValveOpening(valve).value() == doctest::Approx(0.5));  // valve_fail still holds
      CHECK(h.sim.Release(Held::kValveOpening, {valve, -1}, kValve).ok());
    } else {
      valve_fail();
      CHECK(h.sim.SetComponentFailed(valve, true, kLeak).ok());
      CHECK(h.sim.GetValveOpening(valve).value() == 0);
      CHECK(h.sim.Release(Held::kValveOpening, {valve, -1}, kValve).ok());
      CHECK(h.sim.GetValveOpening(valve).value() == 0);  // the leak still holds it shut
      CHECK(h.sim.SetComponentFailed(valve, false, kLeak).ok());
    }
    CHECK(h.sim.GetValveOpening(valve).value() == 1);
  }
}

// Six failed shelves leave the GB200 rack below its load (sim_domains_test.cpp): every tray goes dark;
// one shelf back powers it again.
TEST_CASE("sim.holds: a pulled tray in a rack that loses power - back only when both are over") {
  for (bool power_back_first : {true, false}) {
    CAPTURE(power_back_first);
    Harness h;
    h.sim.Start();
    ComponentId tray = h.Id("r01.tray03"), other = h.Id("r01.tray04");
    constexpr FaultId kPull = 9;
    auto power = [&](bool failed) {
      for (int s = 1; s <= 6; ++s)
        CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf" + std::to_string(s)), failed, 10 + s).ok());
    };
    // Pull then power loss, or power loss then pull: the same two holds either way.
    if (power_back_first) {
      CHECK(h.sim.SetTrayPresent(tray, false, kPull).ok());
      power(true);
    } else {
      power(true);
      CHECK(h.sim.SetTrayPresent(tray, false, kPull).ok());
    }
    CHECK(h.Physics("unpowered", other).size() == 1);
    if (power_back_first) {
      power(false);
      CHECK(h.Physics("inserted", other).size() == 1);
      CHECK(h.Physics("inserted", tray).empty());  // still pulled
      CHECK(h.sim.SetTrayPresent(tray, true, kPull).ok());
    } else {
      CHECK(h.sim.SetTrayPresent(tray, true, kPull).ok());
      CHECK(h.Physics("inserted", tray).empty());  // the rack is still dark
      power(false);
    }
    CHECK(h.Physics("inserted", tray).size() == 1);
    h.clock.RunUntil(Duration::Minutes(10));
    CHECK(h.Physics("booted", h.topo.GpusOfTray(tray).front()).size() == 1);
  }
}

// A pulled tray's NIC links go down with it (the switch ports lose carrier) and come back when it is
// inserted; a link_down of one of them, placed before or during the pull, keeps that link down.
TEST_CASE("sim.holds: a pulled tray takes its NIC links down - a NIC's own link_down outlasts the pull") {
  Harness h;
  h.sim.Start();
  ComponentId tray = h.Id("r01.tray05"), nic1 = h.Id("r01.tray05.nic1"), nic2 = h.Id("r01.tray05.nic2");
  constexpr FaultId kPull = 4, kLink = 5;
  CHECK(h.sim.SetNicLink(nic1, false, kLink).ok());
  CHECK(h.Physics("link_down", nic1).size() == 1);
  CHECK(h.sim.SetTrayPresent(tray, false, kPull).ok());
  const int nics = h.topo.model().nics_per_tray;
  REQUIRE(nics >= 3);
  for (int n = 0; n < nics; ++n) {
    CAPTURE(n);
    CHECK(h.Physics("link_down", h.Id("r01.tray05.nic" + std::to_string(n))).size() == 1);  // nic1 once: already down
  }
  CHECK(h.Physics("link_down", h.Id("r01.tray06.nic0")).empty());  // only the pulled tray's
  CHECK(h.sim.SetTrayPresent(tray, true, kPull).ok());
  CHECK(h.Physics("link_up", nic2).size() == 1);
  CHECK(h.Physics("link_up", nic1).empty());  // its own link_down still holds
  CHECK(h.sim.SetNicLink(nic1, true, kLink).ok());
  CHECK(h.Physics("link_up", nic1).size() == 1);
}

TEST_CASE("sim.holds: two link_degrade on one NIC - the lower rate holds until both are reverted") {
  for (bool lower_reverted_first : {true, false}) {
    CAPTURE(lower_reverted_first);
    Harness h;
    h.sim.Start();
    ComponentId nic = h.Id("r01.tray02.nic1");
    auto rate = [&] { return h.Physics("link_bandwidth", nic).back().second.value; };
    CHECK(h.sim.SetLinkBandwidth(nic, -1, 0.25, 10).ok());
    CHECK(h.sim.SetLinkBandwidth(nic, -1, 0.5, 11).ok());
    CHECK(rate() == doctest::Approx(0.25));
    CHECK(h.sim.Release(Held::kLinkBandwidth, {nic, -1}, lower_reverted_first ? 10 : 11).ok());
    CHECK(rate() == doctest::Approx(lower_reverted_first ? 0.5 : 0.25));
    CHECK(h.sim.Release(Held::kLinkBandwidth, {nic, -1}, lower_reverted_first ? 11 : 10).ok());
    CHECK(rate() == 1);
  }
}

}  // namespace
}  // namespace rackchaos::cluster
