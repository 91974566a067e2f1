// Localization with regions: a failing health probe of a region's store isolates that store; a region's
// own probe isolates the region and explains every symptom from inside it (its trays' lost heartbeats),
// so none of its racks is isolated on its own.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "healer/localizer.h"

namespace rackchaos::healer {
namespace {

const cluster::Topology& TwoRegions() {
  static const cluster::Topology kTopo = [] {
    auto model = cluster::LoadRackModel("gb200-nvl72");
    REQUIRE(model.ok());
    return std::move(cluster::Topology::Build(*model, 4, 0, {{"east", 2}, {"west", 2}})).value();
  }();
  return kTopo;
}

Symptom RegionSymptom(SymptomClass cls, const std::string& component) {
  Symptom s;
  s.cls = cls;
  s.detector = SymptomClassName(cls);
  s.component = *TwoRegions().Find(component);
  return s;
}

TEST_CASE("healer.localize: a region's failing probe isolates the region with its trays' lost heartbeats") {
  std::vector<Symptom> symptoms;
  for (const char* rack : {"r01", "r02"})
    for (int t = 1; t <= 18; ++t)
      symptoms.push_back(RegionSymptom(SymptomClass::kHeartbeatLost, std::string(rack) + ".tray" + (t < 10 ? "0" : "") + std::to_string(t)));
  symptoms.push_back(RegionSymptom(SymptomClass::kPartFailed, "east"));
  symptoms.push_back(RegionSymptom(SymptomClass::kHeartbeatLost, "r03.tray01"));  // west: not the region's
  auto out = Localize(symptoms, TwoRegions(), 3);
  REQUIRE(out.size() == 2);
  CHECK(TwoRegions().at(out[0].domain).name == "east");
  CHECK(out[0].symptoms.size() == 37);
  CHECK_FALSE(out[0].out_of_service);
  CHECK(TwoRegions().at(out[1].domain).name == "r03.tray01");
}

TEST_CASE("healer.localize: a store's failing probe isolates the store and drains nothing") {
  auto out = Localize({RegionSymptom(SymptomClass::kPartFailed, "west.objstore"), RegionSymptom(SymptomClass::kPartFailed, "east.ckptstore")},
                      TwoRegions(), 3);
  REQUIRE(out.size() == 2);
  CHECK(TwoRegions().at(out[0].domain).name == "west.objstore");
  CHECK(TwoRegions().at(out[1].domain).name == "east.ckptstore");
  CHECK_FALSE(out[0].out_of_service);
  CHECK_FALSE(out[1].out_of_service);
}

}  // namespace
}  // namespace rackchaos::healer
