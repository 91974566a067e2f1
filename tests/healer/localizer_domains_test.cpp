// Localization to rack-level failure domains: NVLink switch trays from port patterns, power shelves
// and PSUs from their status, the CDU from trays overheating together.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "healer/localizer.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Id;
using testing::Topo;

Symptom On(SymptomClass cls, const cluster::Topology& topo, const std::string& component, int port = -1) {
  Symptom s;
  s.cls = cls;
  s.detector = SymptomClassName(cls);
  s.component = Id(component, topo);
  s.port = port;
  return s;
}

// The NVLink ports `ports` down on every GPU of trays 1..`trays` of r01.
std::vector<Symptom> PortsDown(const cluster::Topology& topo, int trays, std::vector<int> ports) {
  std::vector<Symptom> out;
  for (int t = 1; t <= trays; ++t)
    for (int g = 0; g < 4; ++g)
      for (int p : ports) {
        std::string tray = std::string("r01.tray") + (t < 10 ? "0" : "") + std::to_string(t);
        out.push_back(On(SymptomClass::kLinkDown, topo, tray + ".gpu" + std::to_string(g), p));
      }
  return out;
}

const cluster::Topology& Adaptive() {
  static const cluster::Topology kTopo = [] {
    auto model = cluster::LoadRackModel("gb200-nvl72");
    REQUIRE(model.ok());
    model->adaptive_bandwidth = true;
    return std::move(cluster::Topology::Build(*model, 2, 2)).value();
  }();
  return kTopo;
}

TEST_CASE("healer.localize: NVLink ports 4 and 5 down on every GPU of a rack are switch tray 3") {
  // GB200: 18 ports per GPU over 9 switch trays, port p wired to switch tray p * 9 / 18 (0-based).
  auto full = Localize(PortsDown(Topo(), 18, {4, 5}), Topo(), 3);
  REQUIRE(full.size() == 1);
  CHECK(Topo().at(full[0].domain).name == "r01.switch3");
  CHECK(full[0].symptoms.size() == 18 * 4 * 2);
  CHECK(full[0].out_of_service);  // full-bandwidth mode: the domain is UNHEALTHY, its trays are drained
  CHECK(full[0].reason.find("UNHEALTHY") != std::string::npos);

  auto adaptive = Localize(PortsDown(Adaptive(), 18, {4, 5}), Adaptive(), 3);
  REQUIRE(adaptive.size() == 1);
  CHECK(Adaptive().at(adaptive[0].domain).name == "r01.switch3");
  CHECK_FALSE(adaptive[0].out_of_service);  // BANDWIDTH: jobs keep running, no tray is drained
}

TEST_CASE(
    "healer.localize: ports of one switch tray on two trays, or of different switch trays, are not a switch tray") {
  // Two trays are below shared_min_trays (3): every GPU of each tray failing is that tray.
  auto two = Localize(PortsDown(Topo(), 2, {4, 5}), Topo(), 3);
  REQUIRE(two.size() == 2);
  CHECK(Topo().at(two[0].domain).name == "r01.tray01");
  CHECK(Topo().at(two[1].domain).name == "r01.tray02");
  // One port each on three trays' GPUs, wired to three different switch trays: three GPUs.
  std::vector<Symptom> spread = {On(SymptomClass::kLinkDown, Topo(), "r01.tray01.gpu0", 0),
                                 On(SymptomClass::kLinkDown, Topo(), "r01.tray02.gpu0", 4),
                                 On(SymptomClass::kLinkDown, Topo(), "r01.tray03.gpu0", 8)};
  auto d = Localize(spread, Topo(), 3);
  REQUIRE(d.size() == 3);
  for (const auto& x : d) CHECK(Topo().at(x.domain).kind == cluster::Kind::kGpu);
}

TEST_CASE("healer.localize: a failed PSU is that PSU, a shelf with every PSU failed is the shelf, neither drains") {
  auto one = Localize({On(SymptomClass::kPsuFailed, Topo(), "r01.shelf2.psu3")}, Topo(), 3);
  REQUIRE(one.size() == 1);
  CHECK(one[0].domain == Id("r01.shelf2.psu3"));
  CHECK_FALSE(one[0].out_of_service);

  std::vector<Symptom> shelf;
  for (int p = 1; p <= 6; ++p)
    shelf.push_back(On(SymptomClass::kPsuFailed, Topo(), "r01.shelf4.psu" + std::to_string(p)));
  shelf.push_back(On(SymptomClass::kPsuFailed, Topo(), "r02.shelf1.psu1"));
  auto d = Localize(shelf, Topo(), 3);
  REQUIRE(d.size() == 2);
  CHECK(d[0].domain == Id("r01.shelf4"));
  CHECK(d[0].symptoms.size() == 6);
  CHECK_FALSE(d[0].out_of_service);
  CHECK(d[1].domain == Id("r02.shelf1.psu1"));
}

TEST_CASE("healer.localize: trays going dark with failed PSUs are the power, not each tray") {
  std::vector<Symptom> s;
  for (int p = 1; p <= 6; ++p) s.push_back(On(SymptomClass::kPsuFailed, Topo(), "r01.shelf1.psu" + std::to_string(p)));
  for (const char* t : {"r01.tray01", "r01.tray02", "r01.tray09", "r01.tray16"})
    s.push_back(On(SymptomClass::kHeartbeatLost, Topo(), t));
  auto shelf = Localize(s, Topo(), 3);
  REQUIRE(shelf.size() == 1);
  CHECK(shelf[0].domain == Id("r01.shelf1"));
  CHECK(shelf[0].symptoms.size() == 10);
  CHECK(shelf[0].out_of_service);
  // Failed PSUs in two shelves: each is marked for replacement (no drain), the dark trays are the
  // rack's power as a whole (drained).
  s.push_back(On(SymptomClass::kPsuFailed, Topo(), "r01.shelf2.psu1"));
  auto rack = Localize(s, Topo(), 3);
  REQUIRE(rack.size() == 3);
  CHECK(rack[0].domain == Id("r01.shelf1"));
  CHECK_FALSE(rack[0].out_of_service);
  CHECK(rack[1].domain == Id("r01.shelf2.psu1"));
  CHECK(rack[2].domain == Id("r01"));
  CHECK(rack[2].symptoms == std::vector<size_t>{6, 7, 8, 9});
  CHECK(rack[2].out_of_service);
  // Heartbeats lost in another rack are not explained by r01's PSUs.
  s.push_back(On(SymptomClass::kHeartbeatLost, Topo(), "r02.tray05"));
  auto both = Localize(s, Topo(), 3);
  REQUIRE(both.size() == 4);
  CHECK(both[3].domain == Id("r02.tray05"));
}

TEST_CASE("healer.localize: NIC links down behind one leaf are the leaf, behind two leaves of a rail the rail") {
  static const cluster::Topology kFive = testing::BuildTopology(5, 2);  // leaves serve 4 racks
  std::vector<Symptom> s;
  for (int t = 1; t <= 18; ++t)
    s.push_back(On(SymptomClass::kLinkDown, kFive,
                   std::string("r02.tray") + (t < 10 ? "0" : "") + std::to_string(t) + ".nic1"));
  auto leaf = Localize(s, kFive, 3);
  REQUIRE(leaf.size() == 1);
  CHECK(leaf[0].domain == Id("rail1.leaf01", kFive));
  CHECK(leaf[0].symptoms.size() == 18);
  CHECK(leaf[0].out_of_service);
  // Two trays only: each NIC is its own.
  auto two = Localize({s[0], s[1]}, kFive, 3);
  REQUIRE(two.size() == 2);
  CHECK(kFive.at(two[0].domain).kind == cluster::Kind::kNic);
  // The fifth rack's rail-1 NICs too: a second leaf of the same rail, so the rail.
  for (const char* n : {"r05.tray01.nic1", "r05.tray02.nic1", "r05.tray07.nic1"})
    s.push_back(On(SymptomClass::kLinkDown, kFive, n));
  auto rail = Localize(s, kFive, 3);
  REQUIRE(rail.size() == 1);
  CHECK(rail[0].domain == Id("rail1", kFive));
  CHECK(rail[0].symptoms.size() == 21);
  // NICs of another rail behind the same leaf group are another leaf.
  s.push_back(On(SymptomClass::kLinkDown, kFive, "r01.tray01.nic3"));
  CHECK(Localize(s, kFive, 3).size() == 2);
}

// A pulled tray's NIC links all go down at once (cluster/sim_nodes.cpp, the rig's tray_pull).
std::vector<Symptom> AllNicsDown(const cluster::Topology& topo, const std::string& tray) {
  std::vector<Symptom> s;
  for (int n = 0; n < topo.model().nics_per_tray; ++n)
    s.push_back(On(SymptomClass::kLinkDown, topo, tray + ".nic" + std::to_string(n)));
  return s;
}

TEST_CASE("healer.localize: every NIC link of a tray down is the tray; of three trays of a rack, the rack; never their leaves") {
  static const cluster::Topology kFive = testing::BuildTopology(5, 2);  // leaves serve 4 racks
  REQUIRE(kFive.model().nics_per_tray >= 2);
  auto one = Localize(AllNicsDown(kFive, "r02.tray04"), kFive, 3);
  REQUIRE(one.size() == 1);
  CHECK(one[0].domain == Id("r02.tray04", kFive));
  CHECK(one[0].reason == std::to_string(kFive.model().nics_per_tray) + " NIC links of one tray down together");
  CHECK(one[0].symptoms.size() == static_cast<size_t>(kFive.model().nics_per_tray));
  // Two NICs of one tray (not all): each its own NIC, as before (localizer_test.cpp, the DPU case).
  auto two_nics = Localize({On(SymptomClass::kLinkDown, kFive, "r02.tray04.nic0"),
                            On(SymptomClass::kLinkDown, kFive, "r02.tray04.nic2")}, kFive, 3);
  REQUIRE(two_nics.size() == 2);
  CHECK(kFive.at(two_nics[0].domain).kind == cluster::Kind::kNic);
  CHECK(kFive.at(two_nics[1].domain).kind == cluster::Kind::kNic);

  // Trays pulled in three racks behind the same leaves, two per rack: every rail's leaf sees 6 trays, but
  // each tray has all its links down, so it is each tray, not 4 leaves.
  std::vector<Symptom> s;
  for (const char* t : {"r01.tray02", "r01.tray09", "r02.tray05", "r02.tray11", "r03.tray01", "r03.tray17"}) {
    auto a = AllNicsDown(kFive, t);
    s.insert(s.end(), a.begin(), a.end());
  }
  auto trays = Localize(s, kFive, 3);
  REQUIRE(trays.size() == 6);
  for (const auto& d : trays) CHECK(kFive.at(d.domain).kind == cluster::Kind::kComputeTray);

  // A third tray of r02 dark the same way: r02 as a whole (rack power or network), the others each.
  auto a = AllNicsDown(kFive, "r02.tray16");
  s.insert(s.end(), a.begin(), a.end());
  auto rack = Localize(s, kFive, 3);
  REQUIRE(rack.size() == 5);
  CHECK(std::count_if(rack.begin(), rack.end(), [&](const IsolationDecision& d) { return d.domain == Id("r02", kFive); }) == 1);
  for (const auto& d : rack) {
    if (d.domain == Id("r02", kFive)) CHECK(d.reason == "3 trays lost together: shared rack power or network");
    else CHECK(kFive.at(d.domain).kind == cluster::Kind::kComputeTray);
  }

  // One NIC per tray on 18 trays is still the leaf, beside a pulled tray behind it.
  std::vector<Symptom> leaf;
  for (int t = 1; t <= 18; ++t)
    if (t != 4) leaf.push_back(On(SymptomClass::kLinkDown, kFive, std::string("r02.tray") + (t < 10 ? "0" : "") + std::to_string(t) + ".nic1"));
  auto pulled = AllNicsDown(kFive, "r02.tray04");
  leaf.insert(leaf.end(), pulled.begin(), pulled.end());
  auto d = Localize(leaf, kFive, 3);
  REQUIRE(d.size() == 2);
  CHECK(d[0].domain == Id("rail1.leaf01", kFive));
  CHECK(d[0].symptoms.size() == 17);
  CHECK(d[1].domain == Id("r02.tray04", kFive));
}

TEST_CASE("healer.localize: flow low on every tray of a rack is its CDU, not 18 valves") {
  std::vector<Symptom> s;
  for (int t = 1; t <= 18; ++t)
    s.push_back(On(SymptomClass::kFlowLow, Topo(),
                   std::string("r02.tray") + (t < 10 ? "0" : "") + std::to_string(t) + ".valve"));
  auto d = Localize(s, Topo(), 3);
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r02.cdu"));
  CHECK(d[0].symptoms.size() == 18);
}

TEST_CASE("healer.localize: a switch tray running hot is that switch tray, taken out before it shuts down") {
  auto full = Localize({On(SymptomClass::kThermal, Topo(), "r01.switch3")}, Topo(), 3);
  REQUIRE(full.size() == 1);
  CHECK(full[0].domain == Id("r01.switch3"));
  CHECK(full[0].out_of_service);  // full-bandwidth mode: taking it out stops the partition, drain its trays
  CHECK(full[0].reason.find("switch tray overheating") != std::string::npos);
  auto adaptive = Localize({On(SymptomClass::kThermal, Adaptive(), "r01.switch3")}, Adaptive(), 3);
  REQUIRE(adaptive.size() == 1);
  CHECK(adaptive[0].domain == Id("r01.switch3", Adaptive()));
  CHECK_FALSE(adaptive[0].out_of_service);  // adaptive: the domain runs on the other 8
}

TEST_CASE("healer.localize: switch trays running hot with their rack's trays losing flow are the CDU") {
  std::vector<Symptom> s;
  for (int t = 1; t <= 3; ++t)
    s.push_back(On(SymptomClass::kFlowLow, Topo(), "r02.tray0" + std::to_string(t) + ".valve"));
  s.push_back(On(SymptomClass::kThermal, Topo(), "r02.switch1"));
  s.push_back(On(SymptomClass::kThermal, Topo(), "r01.switch1"));  // another rack's: its own problem
  auto d = Localize(s, Topo(), 3);
  REQUIRE(d.size() == 2);
  CHECK(d[0].domain == Id("r02.cdu"));
  CHECK(d[0].symptoms == std::vector<size_t>{0, 1, 2, 3});
  CHECK(d[1].domain == Id("r01.switch1"));
  CHECK(d[1].symptoms == std::vector<size_t>{4});
}

}  // namespace
}  // namespace rackchaos::healer
