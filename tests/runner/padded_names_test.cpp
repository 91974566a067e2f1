// Rack names change from r01 to r001 at 100 racks (trays, leaves, spines and NVLink domains pad the
// same way): plan targets, site inventories and replay maps written for one padding keep working.
#include <doctest/doctest.h>

#include "cluster/catalogue.h"
#include "runner/site/padded_names.h"
#include "runner/plan/plan_loader.h"
#include "runner/plan/selector.h"
#include "runner/spec/validate.h"

namespace rr = rackchaos::runner;
namespace cl = rackchaos::cluster;

namespace {

std::string PaddedPlan(int racks, const std::string& target) {
  return "name: padding\nduration: 1h\ncluster: {model: gb200-nvl72, racks: " + std::to_string(racks) +
         "}\nworkload:\n  jobs:\n    - {name: j, gpus: 64}\nfaults:\n  - {at: 10m, kind: gpu_fail, target: \"" + target +
         "\", pick: all, for: 5m}\n";
}

std::vector<std::string> Targets(int racks, const std::string& target) {
  auto plan = rr::ParsePlan(PaddedPlan(racks, target), "padding.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  auto spec = rr::ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  std::vector<std::string> out;
  for (const auto& f : spec->faults) out.push_back(spec->topology->TargetName(f.target));
  return out;
}

}  // namespace

TEST_CASE("a plan's targets name racks in any padding once the cluster has 100 racks or more") {
  // 120 racks: the model's names are r001..r120.
  CHECK(Targets(120, "r001.tray03.gpu2") == std::vector<std::string>{"r001.tray03.gpu2"});
  CHECK(Targets(120, "r01.tray03.gpu2") == std::vector<std::string>{"r001.tray03.gpu2"});
  CHECK(Targets(120, "r1.tray3.gpu2") == std::vector<std::string>{"r001.tray03.gpu2"});
  CHECK(Targets(120, "r[01-02].tray01.gpu0") == std::vector<std::string>{"r001.tray01.gpu0", "r002.tray01.gpu0"});
  CHECK(Targets(120, "r120.tray18.gpu3") == std::vector<std::string>{"r120.tray18.gpu3"});
  // And the other way: r001 on a 2-rack cluster (r01, r02).
  CHECK(Targets(2, "r002.tray01.gpu0") == std::vector<std::string>{"r02.tray01.gpu0"});
  // A name that is nothing under any padding still fails, naming the nearest.
  auto plan = rr::ParsePlan(PaddedPlan(120, "r121.tray01.gpu0"), "padding.yaml");
  REQUIRE(plan.ok());
  auto spec = rr::ValidatePlan(*plan, {});
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().message().find("matches no component") != std::string::npos);
}

TEST_CASE("padding-insensitive selectors: UnpaddedName and ParseSelectorIgnoringPadding") {
  CHECK(rr::UnpaddedName("r001.tray03.gpu0") == "r1.tray3.gpu0");
  CHECK(rr::UnpaddedName("rail0.leaf010") == "rail0.leaf10");
  auto sel = rr::ParseSelectorIgnoringPadding("r[001-004].tray[01-18]");
  REQUIRE(sel.ok());
  CHECK(sel->Matches(rr::UnpaddedName("r03.tray07")));
  CHECK(sel->Matches(rr::UnpaddedName("r0004.tray18")));
  CHECK_FALSE(sel->Matches(rr::UnpaddedName("r005.tray01")));
  auto attr = rr::ParseSelectorIgnoringPadding("kind=gpu");
  REQUIRE(attr.ok());
  CHECK(attr->is_attribute());
}

TEST_CASE("FindIgnoringPadding and an inventory's trays named in another padding") {
  auto model = cl::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cl::Topology::Build(*model, 120, 0);
  REQUIRE(topo.ok());
  auto id = rr::FindIgnoringPadding(*topo, "r1.tray3.gpu2");
  REQUIRE(id);
  CHECK(topo->at(*id).name == "r001.tray03.gpu2");
  CHECK_FALSE(rr::FindIgnoringPadding(*topo, "r121.tray01"));
  rr::Inventory inv;
  inv.model = "gb200-nvl72";
  inv.racks = 120;
  inv.trays["r01.tray03"].host = "h1";
  inv.trays["r119.tray1"].host = "h2";
  REQUIRE(rr::CanonicalTrayNames(inv, *topo).ok());
  CHECK(inv.trays.count("r001.tray03") == 1);
  CHECK(inv.trays.at("r001.tray03").tray == "r001.tray03");
  CHECK(inv.trays.count("r119.tray01") == 1);
  inv.trays["r130.tray01"].host = "h3";
  auto bad = rr::CanonicalTrayNames(inv, *topo);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("padded to the widest rack number") != std::string::npos);
}
