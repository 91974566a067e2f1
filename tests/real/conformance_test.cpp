// One injector conformance suite, two backends: the same apply / read / revert sequence through the
// injectors against SimBackend and against SshBackend on the loopback lab must show the same baseline
// and restore semantics. Each backend is asked about its own state the way it can answer: the
// simulator through its ground-truth events, the lab through the hosts' real links and GPU limits.
#include <doctest/doctest.h>

#include <functional>

#include "cluster/catalogue.h"
#include "cluster/sim_backend.h"
#include "core/rng.h"
#include "injectors/injector.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/wall_clock.h"
#include "tests/real/gb200.h"
#include "tests/real/lab.h"
#include "tests/real/lab_site.h"

namespace rackchaos::runner {
namespace {

struct Subject {
  cluster::Backend& backend;
  std::function<bool(const std::string& nic)> link_up;  // the NIC's link as the backend's world has it
};

using testing::Gb200;

// The suite: gpu_throttle reads the baseline, caps, and restores exactly the baseline; link_down takes
// the link down and brings it back; a second fault on the same target waits for the first.
void RunSuite(Subject s, const cluster::Topology& topo) {
  const injectors::Injector& throttle = *injectors::FindInjector("gpu_throttle");
  const injectors::Injector& link = *injectors::FindInjector("link_down");
  const cluster::Target gpu = *topo.ResolveTarget("r01.tray02.gpu1");
  const cluster::Target nic = *topo.ResolveTarget("r01.tray01.nic0");

  auto baseline = s.backend.GetPowerCap(gpu.component);
  REQUIRE_MESSAGE(baseline.ok(), baseline.status().ToString());
  auto applied = throttle.Apply(s.backend, topo, gpu, {{"power_cap", 600}}, 1);
  REQUIRE_MESSAGE(applied.ok(), applied.status().ToString());
  CHECK(applied->baseline == doctest::Approx(*baseline));
  CHECK(*s.backend.GetPowerCap(gpu.component) == doctest::Approx(600));
  REQUIRE(throttle.Revert(s.backend, topo, gpu, *applied, 1).ok());
  CHECK(*s.backend.GetPowerCap(gpu.component) == doctest::Approx(*baseline));

  REQUIRE(s.link_up("r01.tray01.nic0"));
  auto down = link.Apply(s.backend, topo, nic, {}, 2);
  REQUIRE_MESSAGE(down.ok(), down.status().ToString());
  CHECK_FALSE(s.link_up("r01.tray01.nic0"));
  CHECK(s.link_up("r01.tray01.nic1"));
  REQUIRE(link.Revert(s.backend, topo, nic, *down, 2).ok());
  CHECK(s.link_up("r01.tray01.nic0"));

  // Apply, revert, apply again: the baseline is read afresh and restored again.
  auto again = throttle.Apply(s.backend, topo, gpu, {{"power_cap", 700}}, 3);
  REQUIRE(again.ok());
  CHECK(again->baseline == doctest::Approx(*baseline));
  REQUIRE(throttle.Revert(s.backend, topo, gpu, *again, 3).ok());
  CHECK(*s.backend.GetPowerCap(gpu.component) == doctest::Approx(*baseline));
}

// Two gpu_throttle faults on one GPU, reverted in either order: the lower cap is in force while both
// hold, the other's cap stays after the first revert, the baseline comes back after the second. A cap
// at the baseline value holds like any other. (Inferred from the value, the second apply on a real
// host reverted the first, and a cap at the baseline released nothing.)
void RunTwoCaps(Subject s, const cluster::Topology& topo) {
  const injectors::Injector& throttle = *injectors::FindInjector("gpu_throttle");
  const cluster::Target gpu = *topo.ResolveTarget("r01.tray02.gpu1");
  auto cap = [&] { return s.backend.GetPowerCap(gpu.component).value(); };
  const double baseline = cap();
  auto apply = [&](double watts, FaultId fault) {
    auto a = throttle.Apply(s.backend, topo, gpu, {{"power_cap", watts}}, fault);
    REQUIRE_MESSAGE(a.ok(), a.status().ToString());
    return *a;
  };
  auto revert = [&](const injectors::Applied& a, FaultId fault) {
    const Status st = throttle.Revert(s.backend, topo, gpu, a, fault);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
  };
  for (bool lower_first : {true, false}) {
    CAPTURE(lower_first);
    const injectors::Applied low = apply(500, 10), high = apply(800, 11);
    CHECK(cap() == doctest::Approx(500));
    revert(lower_first ? low : high, lower_first ? 10 : 11);
    CHECK(cap() == doctest::Approx(lower_first ? 800 : 500));
    revert(lower_first ? high : low, lower_first ? 11 : 10);
    CHECK(cap() == doctest::Approx(baseline));
  }
  const injectors::Applied same = apply(baseline, 12), low = apply(600, 13);
  revert(same, 12);
  CHECK(cap() == doctest::Approx(600));  // fault 13 still holds its cap
  revert(low, 13);
  CHECK(cap() == doctest::Approx(baseline));
}

TEST_CASE("conformance: SimBackend") {
  cluster::Topology topo = Gb200();
  VirtualClock clock;
  EventLog events;
  cluster::SimBackend sim(topo, clock, Rng(1), events);
  sim.Start();
  auto link_up = [&](const std::string& name) {
    bool up = true;
    for (const Event& e : events.events())
      if (auto* p = std::get_if<PhysicsChanged>(&e.body); p && topo.at(p->component).name == name)
        up = p->what == "link_up" ? true : p->what == "link_down" ? false : up;
    return up;
  };
  RunSuite({sim, link_up}, topo);
  RunTwoCaps({sim, link_up}, topo);
}

TEST_CASE("conformance: SshBackend on the loopback lab") {
  auto lab = testing::Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  testing::LabSite site((*lab)->WriteInventory("lab.yaml"));
  cluster::Topology topo = Gb200();
  SshBackend ssh(site.inv, topo, site.pool, site.clock, site.events);
  auto link_up = [&](const std::string& name) {
    const char tray = name.find("tray01") != std::string::npos ? 'a' : 'b';
    return (*lab)->LinkUp((*lab)->Iface(tray, name.back() - '0'));
  };
  RunSuite({ssh, link_up}, topo);
  CHECK((*lab)->PowerLimit(1, 1) == "1200.00");
  RunTwoCaps({ssh, link_up}, topo);
  CHECK((*lab)->PowerLimit(1, 1) == "1200.00");
  // Two caps staged to land at one instant (a plan's faults sharing an `at`): both commands set the
  // lower cap, whichever runs last on the host.
  const ComponentId gpu = *topo.Find("r01.tray02.gpu1");
  ssh.BeginStaging(Duration::Seconds(1));
  REQUIRE(ssh.SetPowerCap(gpu, 700, 20).ok());
  REQUIRE(ssh.SetPowerCap(gpu, 500, 21).ok());
  REQUIRE(ssh.ArmStaged().empty());
  CHECK(ssh.FireArmed(site.clock.UnixMicrosAt(site.clock.Now() + Duration::Millis(300))).empty());
  CHECK((*lab)->PowerLimit(1, 1) == "500.00");
  REQUIRE(ssh.Release(cluster::Held::kPowerCap, {gpu, -1}, 21).ok());
  CHECK((*lab)->PowerLimit(1, 1) == "700.00");
  REQUIRE(ssh.Release(cluster::Held::kPowerCap, {gpu, -1}, 20).ok());
  CHECK((*lab)->PowerLimit(1, 1) == "1200.00");
  CHECK(ssh.applied() == 0);
  // Every remote command is an ActionTaken event, and all of them succeeded.
  int actions = 0;
  for (const Event& e : site.events.events())
    if (auto* a = std::get_if<ActionTaken>(&e.body)) {
      ++actions;
      CHECK_MESSAGE(a->ok, a->detail);
    }
  CHECK(actions >= 12);
  // Verbs the site does not define answer NotSupported.
  CHECK_FALSE(ssh.Supports(cluster::Verb::kValve));
  CHECK(ssh.SetTrayPresent(*topo.Find("r01.tray01"), false, 9).code() == StatusCode::kNotSupported);
}

}  // namespace
}  // namespace rackchaos::runner
