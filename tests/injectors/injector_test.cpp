#include "injectors/injector.h"

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::injectors {
namespace {

using cluster::Target;
using cluster::testing::Harness;
using cluster::testing::Job;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Target Resolve(const Harness& h, const char* name) {
  auto t = h.topo.ResolveTarget(name);
  REQUIRE_MESSAGE(t.ok(), name);
  return *t;
}

const Injector& Find(const char* name) {
  const Injector* i = FindInjector(name);
  REQUIRE_MESSAGE(i != nullptr, name);
  return *i;
}

// --------------------------------------------------------------------------- the table

TEST_CASE("the table lists the injectors in a fixed order") {
  const auto& all = AllInjectors();
  REQUIRE(all.size() == 21);
  CHECK(all[0]->name() == "link_down");
  CHECK(all[1]->name() == "link_degrade");
  CHECK(all[2]->name() == "gpu_throttle");
  CHECK(all[3]->name() == "valve_fail");
  CHECK(all[4]->name() == "tray_pull");
  CHECK(all[5]->name() == "gpu_fail");
  CHECK(all[6]->name() == "process_crash");
  CHECK(all[7]->name() == "switch_fail");
  CHECK(all[8]->name() == "cdu_fail");
  CHECK(all[9]->name() == "power_fail");
  CHECK(all[10]->name() == "leak");
  CHECK(all[11]->name() == "leaf_fail");
  CHECK(all[12]->name() == "storage_degrade");
  CHECK(all[13]->name() == "cache_fail");
  CHECK(all[14]->name() == "pump_fail");
  CHECK(all[15]->name() == "spine_fail");
  CHECK(all[16]->name() == "dpu_fail");
  CHECK(all[17]->name() == "object_store_degrade");
  CHECK(all[20]->name() == "region_outage");
  CHECK(InjectorNames() ==
        "link_down, link_degrade, gpu_throttle, valve_fail, tray_pull, gpu_fail, process_crash, switch_fail, cdu_fail, power_fail, leak, leaf_fail, storage_degrade, cache_fail, pump_fail, spine_fail, dpu_fail, object_store_degrade, object_store_fail, checkpoint_store_fail, region_outage");
  for (const Injector* i : all) {
    CHECK(FindInjector(i->name()) == i);
    CHECK_FALSE(i->summary().empty());
    CHECK_FALSE(i->verbs().empty());
  }
  CHECK(FindInjector("disk_fill") == nullptr);
  CHECK(FindInjector("") == nullptr);
  CHECK(FindInjector("Link_Down") == nullptr);
}

TEST_CASE("each injector needs the backend verbs it calls") {
  using cluster::Verb;
  CHECK(Find("link_down").verbs() == std::vector<Verb>{Verb::kNvlinkPort, Verb::kNicLink});
  CHECK(Find("link_degrade").verbs() == std::vector<Verb>{Verb::kLinkBandwidth});
  CHECK(Find("gpu_throttle").verbs() == std::vector<Verb>{Verb::kPowerCap});
  CHECK(Find("valve_fail").verbs() == std::vector<Verb>{Verb::kValve});
  CHECK(Find("tray_pull").verbs() == std::vector<Verb>{Verb::kTrayPresence});
  CHECK(Find("storage_degrade").verbs() == std::vector<Verb>{Verb::kStorageRead});
  CHECK(Find("cache_fail").verbs() == std::vector<Verb>{Verb::kStorageRead});
  CHECK(Find("object_store_degrade").verbs() == std::vector<Verb>{Verb::kStoreRate});
  CHECK(Find("object_store_fail").verbs() == std::vector<Verb>{Verb::kStoreRate});
  CHECK(Find("checkpoint_store_fail").verbs() == std::vector<Verb>{Verb::kStoreRate});
  CHECK(Find("region_outage").verbs() == std::vector<Verb>{Verb::kRegionOutage});
}

// --------------------------------------------------------------------------- parameters

TEST_CASE("ParseParams fills defaults and parses units") {
  auto valve = ParseParams(Find("valve_fail"), {});
  REQUIRE(valve.ok());
  CHECK(*valve == Params{{"opening", 0.0}});

  auto half = ParseParams(Find("valve_fail"), {{"opening", "15%"}});
  REQUIRE(half.ok());
  CHECK(half->at("opening") == doctest::Approx(0.15));

  auto cap = ParseParams(Find("gpu_throttle"), {{"power_cap", "1.2kW"}});
  REQUIRE(cap.ok());
  CHECK(*cap == Params{{"power_cap", 1200.0}});

  auto none = ParseParams(Find("gpu_throttle"), {});
  REQUIRE(none.ok());
  CHECK(none->empty());  // no defaults: Apply falls back to 50% of TDP
  auto link = ParseParams(Find("link_down"), {});
  REQUIRE(link.ok());
  CHECK(link->empty());
}

TEST_CASE("ParseParams refuses unknown names and bad values, saying what is valid") {
  auto unknown = ParseParams(Find("valve_fail"), {{"open", "10%"}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() == "unknown parameter 'open' for valve_fail; known: opening");

  auto takes_none = ParseParams(Find("tray_pull"), {{"force", "1"}});
  REQUIRE_FALSE(takes_none.ok());
  CHECK(takes_none.status().message() == "unknown parameter 'force' for tray_pull; it takes none");

  auto two = ParseParams(Find("gpu_throttle"), {{"watts", "600W"}});
  REQUIRE_FALSE(two.ok());
  CHECK(Contains(two.status().message(), "known: power_cap, share"));

  auto bare = ParseParams(Find("gpu_throttle"), {{"power_cap", "600"}});
  REQUIRE_FALSE(bare.ok());
  CHECK(Contains(bare.status().message(), "parameter 'power_cap'"));
  CHECK(Contains(bare.status().message(), "W or kW"));

  auto too_open = ParseParams(Find("valve_fail"), {{"opening", "150%"}});
  REQUIRE_FALSE(too_open.ok());
  CHECK(Contains(too_open.status().message(), "parameter 'opening'"));
  CHECK(Contains(too_open.status().message(), "outside [0%, 100%]"));

  auto wrong_unit = ParseParams(Find("valve_fail"), {{"opening", "15W"}});
  REQUIRE_FALSE(wrong_unit.ok());
  CHECK(Contains(wrong_unit.status().message(), "percentage"));
}

TEST_CASE("ParseParamValue by type") {
  ParamInfo d{"for", ParamType::kDuration, "", ""};
  CHECK(ParseParamValue(d, "90s").value() == 90);
  CHECK(ParseParamValue(d, "1h30m").value() == 5400);
  CHECK_FALSE(ParseParamValue(d, "90").ok());
  ParamInfo w{"cap", ParamType::kWatts, "", ""};
  CHECK(ParseParamValue(w, "600W").value() == 600);
  ParamInfo f{"opening", ParamType::kFraction, "", ""};
  CHECK(ParseParamValue(f, "0.25").value() == 0.25);
  CHECK(std::string(ParamTypeName(ParamType::kWatts)) == "power from 1W to 100kW (e.g. 600W, 1.2kW)");
  // Bounded (issue 26): a power no GPU could be set to, and a fault longer than any plan, are refused.
  CHECK(ParseParamValue(w, "100kW").value() == 100000);
  CHECK(ParseParamValue(w, "99999999W").status().message() ==
        "'99999999W' is out of range; expected a power from 1W to 100kW (e.g. 600W, 1.2kW)");
  CHECK_FALSE(ParseParamValue(w, "0W").ok());
  CHECK_FALSE(ParseParamValue(w, "-5W").ok());
  CHECK_FALSE(ParseParamValue(d, "5000d").ok());
}

// --------------------------------------------------------------------------- targets

TEST_CASE("CheckTarget accepts the kinds each fault applies to and names the others") {
  Harness h;
  auto ok = [&](const char* injector, const char* target) {
    return Find(injector).CheckTarget(h.topo, Resolve(h, target));
  };
  CHECK(ok("link_down", "r01.tray03.gpu2.nvlink5").ok());
  CHECK(ok("link_down", "r01.tray03.nic2").ok());
  CHECK(ok("link_degrade", "r01.tray03.gpu2.nvlink5").ok());
  CHECK(ok("link_degrade", "r01.tray03.nic2").ok());
  CHECK(ok("link_degrade", "r01.tray03.gpu2").message() ==
        "link_degrade needs a NIC (e.g. r01.tray03.nic2) or an NVLink port (e.g. r01.tray03.gpu2.nvlink5); "
        "r01.tray03.gpu2 is a gpu");
  CHECK(ok("gpu_throttle", "r01.tray05.gpu1").ok());
  CHECK(ok("valve_fail", "r01.tray08.valve").ok());
  CHECK(ok("valve_fail", "r01.tray08").ok());
  CHECK(ok("valve_fail", "r01.switch3").ok());  // a switch tray stands for its valve (switch-tray thermals)
  {
    Harness hgx(cluster::testing::BuildTopology(1, 0, false, "hgx-b200"), 1);  // no switch_tray numbers
    const Status s = Find("valve_fail").CheckTarget(hgx.topo, Resolve(hgx, "r01.switch1"));
    CHECK(s.message() ==
          "valve_fail on a switch tray needs switch-tray thermals (the catalogue's switch_tray section); hgx-b200 "
          "has none: target a compute tray's valve");
  }
  CHECK(ok("tray_pull", "r01.tray11").ok());

  Status s = ok("link_down", "r01.tray03.gpu2");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s.message(), "link_down needs an NVLink port"));
  CHECK(Contains(s.message(), "r01.tray03.gpu2 is a gpu"));
  CHECK(Contains(ok("link_down", "r01.switch2").message(), "r01.switch2 is a switch_tray"));

  s = ok("gpu_throttle", "r01.tray05");
  CHECK(s.message() == "gpu_throttle needs a GPU (e.g. r01.tray05.gpu1); r01.tray05 is a compute_tray");
  s = ok("gpu_throttle", "r01.tray05.gpu1.nvlink3");
  CHECK_FALSE(s.ok());
  CHECK(Contains(s.message(), "r01.tray05.gpu1.nvlink3 is an NVLink port"));

  s = ok("valve_fail", "r01.cdu");
  CHECK(s.message() ==
        "valve_fail needs a valve, a compute tray or an NVLink switch tray (e.g. r01.tray08.valve); r01.cdu is a cdu");
  CHECK_FALSE(ok("valve_fail", "r01.tray08.gpu0").ok());

  s = ok("tray_pull", "r01.tray11.gpu0");
  CHECK(s.message() == "tray_pull needs a compute tray (e.g. r01.tray11); r01.tray11.gpu0 is a gpu");
  CHECK_FALSE(ok("tray_pull", "r01").ok());
}

TEST_CASE("injectors: every refused target names the fault, the kinds it takes with an example and what the target is") {
  Harness h;
  int refused = 0;
  for (const Injector* inj : AllInjectors()) {
    for (const char* target : {"r01.tray05.gpu1.nvlink3", "r01", "r01.tray05.gpu1"}) {
      CAPTURE(inj->name());
      CAPTURE(std::string(target));
      Status s = inj->CheckTarget(h.topo, Resolve(h, target));
      if (s.ok()) continue;
      ++refused;
      const std::string& m = s.message();
      CHECK(s.code() == StatusCode::kInvalidArgument);
      CHECK(m.rfind(std::string(inj->name()) + " needs ", 0) == 0);
      CHECK(Contains(m, " (e.g. "));
      const std::string kind = std::string(target).find("nvlink") != std::string::npos ? "an NVLink port"
                               : std::string(target) == "r01"                          ? "a rack"
                                                                                       : "a gpu";
      CHECK(Contains(m, "); " + std::string(target) + " is " + kind));
      CHECK(m.size() == m.find(" is " + kind) + 4 + kind.size());  // nothing after the kind
    }
  }
  CHECK(refused > static_cast<int>(AllInjectors().size()));  // most refuse two of the three
}

// --------------------------------------------------------------------------- apply and revert

TEST_CASE("gpu_throttle caps to power_cap or a share of TDP and reverts to the recorded baseline") {
  Harness h;
  h.sim.Start();
  const Injector& inj = Find("gpu_throttle");
  Target gpu = Resolve(h, "r01.tray05.gpu1");
  // A site limit below TDP is the baseline to come back to, not TDP.
  CHECK(h.sim.SetPowerCap(gpu.component, 900, kNoFault).ok());

  auto applied = inj.Apply(h.sim, h.topo, gpu, {{"power_cap", 600}}, 3);
  REQUIRE(applied.ok());
  CHECK(applied->baseline == 900);
  CHECK(applied->detail == "power_cap=600W baseline=900W");
  CHECK(h.sim.GetPowerCap(gpu.component).value() == 600);
  auto caps = h.Physics("power_cap", gpu.component);
  REQUIRE(caps.size() == 2);
  CHECK(caps[1].second.cause == 3);
  CHECK(inj.Revert(h.sim, h.topo, gpu, *applied, 3).ok());
  CHECK(h.sim.GetPowerCap(gpu.component).value() == 900);

  auto shared = inj.Apply(h.sim, h.topo, gpu, {{"share", 0.25}}, 4);
  REQUIRE(shared.ok());
  CHECK(shared->detail == "power_cap=300W baseline=900W");
  CHECK(h.sim.GetPowerCap(gpu.component).value() == 300);
  CHECK(inj.Revert(h.sim, h.topo, gpu, *shared, 4).ok());

  auto half = inj.Apply(h.sim, h.topo, gpu, {}, 5);  // neither given: 50% of TDP
  REQUIRE(half.ok());
  CHECK(h.sim.GetPowerCap(gpu.component).value() == 600);
  CHECK(inj.Revert(h.sim, h.topo, gpu, *half, 5).ok());
  CHECK(h.sim.GetPowerCap(gpu.component).value() == 900);
}

TEST_CASE("valve_fail closes a tray's valve and reopens it to its baseline") {
  Harness h;
  h.sim.Start();
  const Injector& inj = Find("valve_fail");
  ComponentId valve = h.Id("r01.tray08.valve");
  CHECK(h.sim.SetValveOpening(valve, 0.8, kNoFault).ok());

  Target tray = Resolve(h, "r01.tray08");  // a tray stands for its valve
  auto params = ParseParams(inj, {});
  REQUIRE(params.ok());
  auto applied = inj.Apply(h.sim, h.topo, tray, *params, 6);
  REQUIRE(applied.ok());
  CHECK(applied->baseline == doctest::Approx(0.8));
  CHECK(applied->detail == "opening=0% baseline=80%");
  CHECK(h.sim.GetValveOpening(valve).value() == 0);
  auto openings = h.Physics("valve_opening", valve);
  REQUIRE(openings.size() == 2);
  CHECK(openings[1].second.cause == 6);
  CHECK(inj.Revert(h.sim, h.topo, tray, *applied, 6).ok());
  CHECK(h.sim.GetValveOpening(valve).value() == doctest::Approx(0.8));

  auto partial = inj.Apply(h.sim, h.topo, Resolve(h, "r01.tray08.valve"), {{"opening", 0.15}}, 7);
  REQUIRE(partial.ok());
  CHECK(partial->detail == "opening=15% baseline=80%");
  CHECK(h.sim.GetValveOpening(valve).value() == doctest::Approx(0.15));
}

// A revert releases its own fault's hold whatever value it would set back: one fault on a tray and on
// its valve (two targets, one valve) reopens it however its targets are reverted (cluster/holds.h).
TEST_CASE("injectors: valve_fail on a tray and its valve in one fault - reverted in apply order, the valve reopens") {
  Harness h;
  h.sim.Start();
  const Injector& inj = Find("valve_fail");
  ComponentId valve = h.Id("r01.tray08.valve");
  Target tray = Resolve(h, "r01.tray08"), same = Resolve(h, "r01.tray08.valve");
  auto first = inj.Apply(h.sim, h.topo, tray, {{"opening", 0.5}}, 6);
  auto second = inj.Apply(h.sim, h.topo, same, {{"opening", 0.5}}, 6);  // reads 50% as its baseline
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(inj.Revert(h.sim, h.topo, tray, *first, 6).ok());
  CHECK(inj.Revert(h.sim, h.topo, same, *second, 6).ok());
  CHECK(h.sim.GetValveOpening(valve).value() == 1);
}

TEST_CASE("link_down takes an NVLink port down and back up, the job's step time follows") {
  Harness h;
  cluster::JobConfig cfg = Job(4);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  const Injector& inj = Find("link_down");
  Target port = Resolve(h, "r01.tray01.gpu2.nvlink5");
  auto applied = inj.Apply(h.sim, h.topo, port, {}, 8);
  REQUIRE(applied.ok());
  CHECK(applied->detail == "state=down baseline=up");
  auto down = h.Physics("nvlink_down", port.component);
  REQUIRE(down.size() == 1);
  CHECK(down[0].second.value == 5);
  CHECK(down[0].second.cause == 8);
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(cluster::testing::StepTime(cfg, 1, 17)));

  CHECK(inj.Revert(h.sim, h.topo, port, *applied, 8).ok());
  CHECK(h.Physics("nvlink_up", port.component).size() == 1);
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(10));
}

TEST_CASE("link_down on a NIC hangs the job until it is reverted") {
  Harness h;
  JobId job = h.sim.AddJob(Job(4)).value();
  h.sim.Start();
  const Injector& inj = Find("link_down");
  Target nic = Resolve(h, "r01.tray01.nic3");
  auto applied = inj.Apply(h.sim, h.topo, nic, {}, 9);
  REQUIRE(applied.ok());
  CHECK(h.Physics("link_down", nic.component).size() == 1);
  CHECK(h.sim.JobStateOf(job) == JobState::kHung);
  CHECK(inj.Revert(h.sim, h.topo, nic, *applied, 9).ok());
  CHECK(h.Physics("link_up", nic.component).size() == 1);
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
}

TEST_CASE("tray_pull removes a tray, the revert reinserts it and it boots") {
  Harness h;
  h.sim.Start();
  const Injector& inj = Find("tray_pull");
  Target tray = Resolve(h, "r01.tray11");
  ComponentId gpu = h.Id("r01.tray11.gpu0");
  auto applied = inj.Apply(h.sim, h.topo, tray, {}, 10);
  REQUIRE(applied.ok());
  CHECK(applied->detail == "removed");
  CHECK_FALSE(h.sim.GpuAlive(gpu));
  CHECK(h.Physics("removed", tray.component).size() == 1);
  CHECK(inj.Revert(h.sim, h.topo, tray, *applied, 10).ok());
  CHECK(h.Physics("inserted", tray.component).size() == 1);
  CHECK_FALSE(h.sim.GpuAlive(gpu));  // booting
  h.clock.RunUntil(h.model().node_boot_time);
  CHECK(h.sim.GpuAlive(gpu));
}

TEST_CASE("Apply passes backend errors through") {
  Harness h;
  h.sim.Start();
  // A target CheckTarget would refuse: the backend's own check still holds.
  auto r = Find("gpu_throttle").Apply(h.sim, h.topo, Resolve(h, "r01.tray01"), {{"power_cap", 600}}, 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "r01.tray01 is not a GPU");
}

TEST_CASE("link_degrade slows a NIC to its bandwidth (default 10%, at least 0.1%) and restores it") {
  Harness h;
  cluster::JobConfig cfg = Job(4);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  const Injector& inj = Find("link_degrade");
  Target nic = Resolve(h, "r01.tray01.nic0");
  auto params = ParseParams(inj, {});
  REQUIRE(params.ok());
  CHECK(*params == Params{{"bandwidth", 0.1}});
  auto applied = inj.Apply(h.sim, h.topo, nic, *params, 8);
  REQUIRE(applied.ok());
  CHECK(applied->detail == "bandwidth=10% baseline=100%");
  auto set = h.Physics("link_bandwidth", nic.component);
  REQUIRE(set.size() == 1);
  CHECK(set[0].second.value == doctest::Approx(0.1));
  CHECK(set[0].second.cause == 8);
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(8.5 + 1 + 0.5 / 0.1));
  CHECK(inj.Revert(h.sim, h.topo, nic, *applied, 8).ok());
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(10));

  auto floor = inj.Apply(h.sim, h.topo, nic, {{"bandwidth", 0}}, 9);  // 0 would be link_down
  REQUIRE(floor.ok());
  CHECK(floor->detail == "bandwidth=0.1% baseline=100%");
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(8.5 + 1 + 0.5 / 0.001));
}

}  // namespace
}  // namespace rackchaos::injectors
