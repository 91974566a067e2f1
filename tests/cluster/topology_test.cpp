#include "cluster/topology.h"

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using testing::BuildTopology;

std::string NameOf(const Topology& t, ComponentId id) { return t.at(id).name; }

TEST_CASE("one GB200 rack: 18 trays, 72 GPUs, the last two trays spare") {
  Topology t = BuildTopology(1, 2);
  REQUIRE(t.racks().size() == 1);
  REQUIRE(t.trays().size() == 18);
  CHECK(t.gpus().size() == 72);
  for (size_t k = 0; k < 18; ++k) CHECK_MESSAGE(t.at(t.trays()[k]).spare == (k >= 16), "tray index ", k);
  CHECK(NameOf(t, t.trays().front()) == "r01.tray01");
  CHECK(NameOf(t, t.trays().back()) == "r01.tray18");
  // rack + cdu + 8 shelves x (1 + 6 PSUs) + 9 switch trays + 18 x (tray + valve + 2 CPUs + 4 GPUs + 4 NICs)
  // + 4 rails, each with one leaf; then 2 CDU pumps, 18 x 2 DPUs, 2 spines (4 leaves x 72 up ports / 144)
  CHECK(t.size() == 1 + 1 + 8 * 7 + 9 + 18 * 12 + 4 + 4 + 2 + 18 * 2 + 2);

  int gpus = 0, nics = 0, psus = 0, switches = 0;
  for (const Component& c : t.components()) {
    gpus += c.kind == Kind::kGpu;
    nics += c.kind == Kind::kNic;
    psus += c.kind == Kind::kPsu;
    switches += c.kind == Kind::kSwitchTray;
  }
  CHECK(gpus == 72);
  CHECK(nics == 72);
  CHECK(psus == 48);
  CHECK(switches == 9);
}

TEST_CASE("names follow the physical hierarchy") {
  Topology t = BuildTopology(1, 2);
  auto gpu = t.Find("r01.tray03.gpu2");
  REQUIRE(gpu);
  CHECK(t.at(*gpu).kind == Kind::kGpu);
  CHECK(t.at(*gpu).index == 2);
  CHECK(t.PciOf(*gpu) == "0000:41:00");
  CHECK(NameOf(t, t.TrayOf(*gpu)) == "r01.tray03");
  CHECK(t.at(t.TrayOf(*gpu)).index == 2);
  CHECK(NameOf(t, t.RackOf(*gpu)) == "r01");

  auto valve = t.Find("r01.tray03.valve");
  REQUIRE(valve);
  CHECK(t.at(*valve).kind == Kind::kValve);
  CHECK(t.ValveOfTray(t.TrayOf(*gpu)) == *valve);

  auto nic = t.Find("r01.tray03.nic2");
  REQUIRE(nic);
  CHECK(t.at(*nic).kind == Kind::kNic);
  CHECK(t.NicOfGpu(*gpu) == *nic);

  auto sw = t.Find("r01.switch9");
  REQUIRE(sw);
  CHECK(t.at(*sw).kind == Kind::kSwitchTray);
  CHECK_FALSE(t.Find("r01.switch10"));

  auto psu = t.Find("r01.shelf8.psu6");
  REQUIRE(psu);
  CHECK(t.at(*psu).kind == Kind::kPsu);
  CHECK(NameOf(t, t.at(*psu).parent) == "r01.shelf8");
  CHECK_FALSE(t.Find("r01.shelf9"));
  CHECK_FALSE(t.Find("r01.shelf8.psu7"));

  auto cdu = t.Find("r01.cdu");
  REQUIRE(cdu);
  CHECK(t.CduOfRack(t.racks()[0]) == *cdu);
  CHECK(t.Ancestors(*gpu) == std::vector<ComponentId>{t.TrayOf(*gpu), t.racks()[0]});
  CHECK(t.TrayOf(*sw) == kNoComponent);
}

TEST_CASE("ResolveTarget: components and NVLink ports") {
  Topology t = BuildTopology(1, 2);
  ComponentId gpu = *t.Find("r01.tray03.gpu2");

  auto whole = t.ResolveTarget("r01.tray03.gpu2");
  REQUIRE(whole.ok());
  CHECK(whole->component == gpu);
  CHECK(whole->port == -1);

  auto port = t.ResolveTarget("r01.tray03.gpu2.nvlink5");
  REQUIRE(port.ok());
  CHECK(port->component == gpu);
  CHECK(port->port == 5);
  CHECK(t.TargetName(*port) == "r01.tray03.gpu2.nvlink5");

  auto last = t.ResolveTarget("r01.tray03.gpu2.nvlink17");
  REQUIRE(last.ok());
  CHECK(last->port == 17);

  auto past = t.ResolveTarget("r01.tray03.gpu2.nvlink18");
  REQUIRE_FALSE(past.ok());
  CHECK(past.status().code() == StatusCode::kNotFound);
  CHECK(past.status().message() == "r01.tray03.gpu2.nvlink18: a gb200-nvl72 GPU has NVLink ports 0-17");

  for (const char* bad : {"r01.tray03.gpu2.nvlink", "r01.tray03.gpu2.nvlinkx", "r01.tray03.nvlink1",
                          "r01.tray03.nic2.nvlink1", "r01.tray19", "r02.tray01"}) {
    auto r = t.ResolveTarget(bad);
    CHECK_MESSAGE(!r.ok(), bad);
  }
  CHECK(t.ResolveTarget("r01.tray19").status().message() == "no component named 'r01.tray19'");
}

TEST_CASE("GpusServedBy follows containment and shared dependencies") {
  Topology t = BuildTopology(1, 2);
  ComponentId tray = *t.Find("r01.tray03");
  std::vector<ComponentId> tray_gpus(t.GpusOfTray(tray).begin(), t.GpusOfTray(tray).end());
  REQUIRE(tray_gpus.size() == 4);
  CHECK(NameOf(t, tray_gpus[0]) == "r01.tray03.gpu0");
  CHECK(NameOf(t, tray_gpus[3]) == "r01.tray03.gpu3");

  CHECK(t.GpusServedBy(*t.Find("r01.tray03.valve")) == tray_gpus);
  CHECK(t.GpusServedBy(tray) == tray_gpus);
  CHECK(t.GpusServedBy(*t.Find("r01.tray03.cpu1")) == tray_gpus);
  CHECK(t.GpusServedBy(*t.Find("r01.tray03.nic2")) == std::vector<ComponentId>{*t.Find("r01.tray03.gpu2")});
  CHECK(t.GpusServedBy(*t.Find("r01.tray03.gpu1")) == std::vector<ComponentId>{*t.Find("r01.tray03.gpu1")});
  CHECK(t.GpusServedBy(*t.Find("r01.cdu")) == t.gpus());
  CHECK(t.GpusServedBy(*t.Find("r01.switch4")) == t.gpus());
  CHECK(t.GpusServedBy(*t.Find("r01.shelf8")).empty());
  CHECK(t.GpusServedBy(*t.Find("r01.shelf8.psu6")).empty());
}

TEST_CASE("topology: GpusOnTrays counts the GPUs of the compute trays in a list - any other id none") {
  Topology t = BuildTopology(2, 2);
  const ComponentId a = *t.Find("r01.tray03"), b = *t.Find("r02.tray18");  // b: a spare tray, GPUs all the same
  CHECK(t.GpusOnTrays({}) == 0);
  CHECK(t.GpusOnTrays(std::vector<ComponentId>{a}) == 4);
  CHECK(t.GpusOnTrays(std::vector<ComponentId>{a, b}) == 8);
  // A switch tray, a GPU, a valve, a rack, an id past the table and kNoComponent: not compute trays.
  const std::vector<ComponentId> others{*t.Find("r01.switch4"), *t.Find("r01.tray03.gpu1"), *t.Find("r01.tray03.valve"),
                                        *t.Find("r02"), static_cast<ComponentId>(t.size()), kNoComponent};
  CHECK(t.GpusOnTrays(others) == 0);
  std::vector<ComponentId> mixed = others;
  mixed.insert(mixed.begin() + 2, {a, b});
  CHECK(t.GpusOnTrays(mixed) == 8);
  size_t every = 0;
  for (ComponentId tray : t.trays()) every += t.GpusOfTray(tray).size();
  CHECK(t.GpusOnTrays(t.trays()) == every);
  CHECK(every == t.gpus().size());
}

TEST_CASE("a rack's CDU serves only that rack's GPUs") {
  Topology t = BuildTopology(2, 2);
  auto served = t.GpusServedBy(*t.Find("r02.cdu"));
  REQUIRE(served.size() == 72);
  CHECK(NameOf(t, served.front()) == "r02.tray01.gpu0");
  CHECK(NameOf(t, served.back()) == "r02.tray18.gpu3");
}

TEST_CASE("GpuByPci finds a GPU of a tray by the bus id the driver prints") {
  Topology t = BuildTopology(1, 2);
  ComponentId tray = *t.Find("r01.tray05");
  CHECK(t.GpuByPci(tray, "0000:41:00") == t.Find("r01.tray05.gpu2"));
  CHECK(t.GpuByPci(tray, "0000:01:00") == t.Find("r01.tray05.gpu0"));
  CHECK_FALSE(t.GpuByPci(tray, "0000:3b:00"));
  CHECK_FALSE(t.GpuByPci(*t.Find("r01.switch1"), "0000:01:00"));
}

TEST_CASE("topology: a GPU's PCI bus id is its model's for its index - other kinds have none") {
  Topology t = BuildTopology(2, 2);
  CHECK(t.PciOf(*t.Find("r02.tray07.gpu3")) == "0000:42:00");
  CHECK(t.PciOf(*t.Find("r01.tray01.gpu0")) == "0000:01:00");
  CHECK(t.PciOf(*t.Find("r01.tray01")).empty());
  CHECK(t.PciOf(*t.Find("r01.tray01.nic0")).empty());
  CHECK(t.PciOf(kNoComponent).empty());
}

TEST_CASE("topology: the component table is sized once - the fabric, spines and regions past the racks included") {
  // The parts outside racks come last; with no room reserved for them the table moved every component to
  // one twice its size (at 1,778 racks 70 MB copied and 573k names moved, in every validate).
  auto model = LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto t = Topology::Build(*model, 36, 2, {{"east", 12}, {"central", 12}, {"west", 12}});
  REQUIRE(t.ok());
  REQUIRE(t->regions().size() == 3);
  REQUIRE_FALSE(t->spines().empty());
  CHECK(t->components().capacity() >= t->size());
  CHECK(t->components().capacity() < t->size() + t->size() / 20);
}

TEST_CASE("rack names widen with the rack count") {
  Topology twelve = BuildTopology(12, 2);
  REQUIRE(twelve.racks().size() == 12);
  CHECK(NameOf(twelve, twelve.racks().front()) == "r01");
  CHECK(NameOf(twelve, twelve.racks().back()) == "r12");
  CHECK(twelve.Find("r12.tray18.gpu3"));
  CHECK(twelve.gpus().size() == 12 * 72);

  Topology hundred = BuildTopology(100, 2);
  REQUIRE(hundred.racks().size() == 100);
  CHECK(NameOf(hundred, hundred.racks().front()) == "r001");
  CHECK(NameOf(hundred, hundred.racks()[9]) == "r010");
  CHECK(NameOf(hundred, hundred.racks().back()) == "r100");
  CHECK(hundred.Find("r100.tray18.valve"));
  CHECK_FALSE(hundred.Find("r01.tray01"));
}

TEST_CASE("the same build twice gives the same ids") {
  Topology a = BuildTopology(3, 2), b = BuildTopology(3, 2);
  REQUIRE(a.size() == b.size());
  for (ComponentId id = 0; id < a.size(); ++id) {
    CHECK(a.at(id).id == id);
    CHECK(a.at(id).name == b.at(id).name);
    CHECK(a.at(id).kind == b.at(id).kind);
    CHECK(a.at(id).parent == b.at(id).parent);
    CHECK(b.Find(a.at(id).name) == id);
  }
}

TEST_CASE("bad build arguments are refused") {
  auto model = LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  CHECK_FALSE(Topology::Build(*model, 0, 2).ok());
  CHECK_FALSE(Topology::Build(*model, 1, -1).ok());
  auto all_spare = Topology::Build(*model, 1, 18);
  REQUIRE_FALSE(all_spare.ok());
  CHECK(all_spare.status().message() == "spare_trays must be between 0 and 17 for gb200-nvl72");
  CHECK(Topology::Build(*model, 1, 0).ok());
}

// The compute trays under a component, against a walk down ChildrenOf: an NVL36x2 cluster of 8 racks in
// two regions (east r01-r04, west r05-r08), one spare tray per rack.
TEST_CASE("topology: TraysUnder - a region's, a rack's or an NVLink domain's trays, a part's own tray, none else") {
  auto model = LoadRackModel("gb200-nvl36x2");
  REQUIRE(model.ok());
  auto built = Topology::Build(*model, 8, 1, {{"east", 4}, {"west", 4}});
  REQUIRE(built.ok());
  const Topology& t = *built;
  auto under = [&](std::string_view name) {
    auto id = t.Find(name);
    REQUIRE_MESSAGE(id.has_value(), std::string(name));
    auto trays = t.TraysUnder(*id);
    return std::vector<ComponentId>(trays.begin(), trays.end());
  };
  auto walk = [&](ComponentId c, auto&& self) -> std::vector<ComponentId> {
    if (t.at(c).kind == Kind::kComputeTray) return {c};
    std::vector<ComponentId> out;
    for (ComponentId child : t.ChildrenOf(c))
      for (ComponentId tray : self(child, self)) out.push_back(tray);
    return out;
  };
  auto walked = [&](std::initializer_list<const char*> names) {
    std::vector<ComponentId> out;
    for (const char* n : names)
      for (ComponentId tray : walk(*t.Find(n), walk)) out.push_back(tray);
    return out;
  };
  CHECK(under("r03") == walked({"r03"}));
  CHECK(under("r03").size() == 9);
  CHECK(under("nvl02") == walked({"r03", "r04"}));
  CHECK(under("west") == walked({"r05", "r06", "r07", "r08"}));
  CHECK(under("east").size() == 36);
  CHECK(under("r03.tray04") == walked({"r03.tray04"}));
  for (const char* part : {"r03.tray04.gpu1", "r03.tray04.nic2", "r03.tray04.valve", "r03.tray04.dpu0"})
    CHECK(under(part) == walked({"r03.tray04"}));
  for (const char* none : {"r03.cdu", "r03.switch2", "r03.shelf1", "r03.cdu.pump1", "rail1", "rail1.leaf01",
                           "spine01", "west.objstore", "west.ckptstore"})
    CHECK_MESSAGE(under(none).empty(), none);
  // The GPUs under a component are its trays' GPUs: a rack's, a domain's.
  CHECK(t.GpusOfRack(2) == t.GpusUnder(*t.Find("r03")));
  CHECK(t.GpusOfDomain(1).size() == 72);
  CHECK(t.GpusOfDomain(1) == t.GpusServedBy(*t.Find("nvl02")));
}

}  // namespace
}  // namespace rackchaos::cluster
