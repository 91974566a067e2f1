// Blast radius and single points of failure from the dependency rules, against sets written down by
// hand from the rack layouts (GB200/GB300 NVL72: 18 trays x 4 GPUs, 9 switch trays, 8 shelves x 6 PSUs
// of 5.5 kW; HGX B200: one 8-GPU server with one PSU bay of 6 x 3.3 kW).
#include "cluster/dependency.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

Topology Build(const std::string& model_name, int racks, void (*edit)(RackModel&) = nullptr) {
  auto model = LoadRackModel(model_name);
  REQUIRE(model.ok());
  if (edit) edit(*model);
  auto topo = Topology::Build(*model, racks, 0);
  REQUIRE(topo.ok());
  return std::move(topo).value();
}

ComponentId Id(const Topology& t, const std::string& name) {
  auto id = t.Find(name);
  REQUIRE_MESSAGE(id.has_value(), name);
  return *id;
}

std::vector<std::string> Names(const Topology& t, const std::vector<ComponentId>& ids) {
  std::vector<std::string> out;
  for (ComponentId id : ids) out.push_back(t.at(id).name);
  return out;
}

// Every GPU of rack `r` ("r02"), in order: r02.tray01.gpu0 ... r02.tray18.gpu3.
std::vector<std::string> RackGpus(const std::string& r) {
  std::vector<std::string> out;
  for (int tray = 1; tray <= 18; ++tray)
    for (int g = 0; g < 4; ++g)
      out.push_back(r + ".tray" + (tray < 10 ? "0" : "") + std::to_string(tray) + ".gpu" + std::to_string(g));
  return out;
}

TEST_CASE("dependency: GB200 parts inside a tray take out the tray's GPUs or one GPU, nothing else") {
  const Topology t = Build("gb200-nvl72", 2);
  const std::vector<std::string> tray5 = {"r01.tray05.gpu0", "r01.tray05.gpu1", "r01.tray05.gpu2", "r01.tray05.gpu3"};
  for (const char* part : {"r01.tray05", "r01.tray05.cpu1", "r01.tray05.valve"}) {
    BlastRadius b = Blast(t, Id(t, part));
    INFO(part);
    CHECK(Names(t, b.gpus_down) == tray5);
    CHECK(b.gpus_slowed.empty());
    CHECK_FALSE(b.whole_domain);
    CHECK(Names(t, TraysOfGpus(t, b.gpus_down)) == std::vector<std::string>{"r01.tray05"});
  }
  CHECK(Names(t, Blast(t, Id(t, "r01.tray05.nic2")).gpus_down) == std::vector<std::string>{"r01.tray05.gpu2"});
  CHECK(Names(t, Blast(t, Id(t, "r02.tray18.gpu3")).gpus_down) == std::vector<std::string>{"r02.tray18.gpu3"});
  // One NVLink port: the GPU keeps 17 of 18 links.
  BlastRadius port = Blast(t, Target{Id(t, "r01.tray03.gpu2"), 5});
  CHECK(port.gpus_down.empty());
  CHECK(Names(t, port.gpus_slowed) == std::vector<std::string>{"r01.tray03.gpu2"});
  CHECK(port.slowed_bandwidth == doctest::Approx(17.0 / 18));
}

TEST_CASE("dependency: GB200 switch tray in full-bandwidth mode, CDU and rack take out their whole domain only") {
  const Topology t = Build("gb200-nvl72", 2);
  for (const char* part : {"r02.switch3", "r02.cdu", "r02"}) {
    BlastRadius b = Blast(t, Id(t, part));
    INFO(part);
    CHECK(Names(t, b.gpus_down) == RackGpus("r02"));
    CHECK(b.whole_domain);
    CHECK(b.gpus_slowed.empty());
    CHECK(TraysOfGpus(t, b.gpus_down).size() == 18);
  }
  CHECK(Blast(t, Id(t, "r02.switch3")).why.front().find("UNHEALTHY") != std::string::npos);
}

TEST_CASE("dependency: GB200 power is redundant - one shelf (33 kW of 264) or one PSU leaves 86.4 kW of GPU TDP carried") {
  const Topology t = Build("gb200-nvl72", 1);
  for (const char* part : {"r01.shelf4", "r01.shelf4.psu6"}) {
    BlastRadius b = Blast(t, Id(t, part));
    INFO(part);
    CHECK(b.gpus_down.empty());
    CHECK(b.gpus_slowed.empty());
    REQUIRE(b.why.size() == 1);
    CHECK(b.why[0].find("redundant") == 0);
  }
  CHECK(Blast(t, Id(t, "r01.shelf4")).why[0] == "redundant: r01 keeps 231.0 kW of PSU capacity for 86.4 kW of GPU TDP");
}

TEST_CASE("dependency: GB300 in adaptive mode - a switch tray costs every GPU of its domain 1/9 of NVLink, no GPU") {
  const Topology t = Build("gb300-nvl72", 2, [](RackModel& m) { m.adaptive_bandwidth = true; });
  BlastRadius b = Blast(t, Id(t, "r01.switch9"));
  CHECK(b.gpus_down.empty());
  CHECK_FALSE(b.whole_domain);
  CHECK(Names(t, b.gpus_slowed) == RackGpus("r01"));
  CHECK(b.slowed_bandwidth == doctest::Approx(8.0 / 9));
  CHECK(b.why.front().find("BANDWIDTH") != std::string::npos);
  // No switch tray is a single point of failure then; the CDUs still are.
  auto spofs = FindSinglePointsOfFailure(t, 72);
  CHECK(Names(t, {spofs[0].component, spofs[1].component}) == std::vector<std::string>{"r01.cdu", "r02.cdu"});
  CHECK(spofs.size() == 2);
}

TEST_CASE("dependency: GB300 with 4 shelves - a shelf (99 kW left for 100.8 kW of GPU TDP) takes the domain, a PSU does not") {
  const Topology t = Build("gb300-nvl72", 1, [](RackModel& m) { m.power_shelves = 4; });
  BlastRadius shelf = Blast(t, Id(t, "r01.shelf2"));
  CHECK(Names(t, shelf.gpus_down) == RackGpus("r01"));
  CHECK(shelf.whole_domain);
  CHECK(shelf.why[0] == "power: r01 keeps 99.0 kW of PSU capacity, below 100.8 kW of GPU TDP: the trays it feeds lose power");
  BlastRadius psu = Blast(t, Id(t, "r01.shelf2.psu3"));  // 132 - 5.5 = 126.5 kW
  CHECK(psu.gpus_down.empty());
  auto spofs = FindSinglePointsOfFailure(t, 72);
  std::vector<std::string> names = Names(t, [&] {
    std::vector<ComponentId> ids;
    for (const auto& s : spofs) ids.push_back(s.component);
    return ids;
  }());
  // cdu, 4 shelves, 9 switch trays, in id order (all 72 GPUs): built as cdu, shelves, switch trays.
  CHECK(names == std::vector<std::string>{"r01.cdu", "r01.shelf1", "r01.shelf2", "r01.shelf3", "r01.shelf4",
                                          "r01.switch1", "r01.switch2", "r01.switch3", "r01.switch4", "r01.switch5",
                                          "r01.switch6", "r01.switch7", "r01.switch8", "r01.switch9"});
}

TEST_CASE("dependency: spof ranks by GPUs lost - GB200 with threshold 3 adds trays, their CPUs and valves, never GPUs or NICs") {
  const Topology t = Build("gb200-nvl72", 1);
  auto spofs = FindSinglePointsOfFailure(t, 3);
  // cdu + 9 switch trays; 4 rails and their 4 leaves (18 GPUs each); 18 x (tray + 2 CPUs + valve)
  REQUIRE(spofs.size() == 10 + 8 + 18 * 4);
  for (size_t k = 0; k < spofs.size(); ++k) {
    INFO(t.at(spofs[k].component).name);
    CHECK(spofs[k].gpus_down == (k < 10 ? 72u : k < 18 ? 18u : 4u));
    CHECK(spofs[k].whole_domain == (k < 10));
    if (k > 0) CHECK(spofs[k - 1].gpus_down >= spofs[k].gpus_down);
  }
  CHECK(FindSinglePointsOfFailure(t, 72).size() == 10);
}

TEST_CASE("dependency: HGX B200 - the server's one PSU bay and each of its parts are whole-domain, a PSU is not") {
  const Topology t = Build("hgx-b200", 2);
  CHECK(Blast(t, Id(t, "r01.shelf1")).whole_domain);              // 0 kW left for 8 kW
  CHECK(Blast(t, Id(t, "r01.shelf1.psu2")).gpus_down.empty());    // 16.5 kW left for 8 kW
  auto spofs = FindSinglePointsOfFailure(t, 8);
  size_t r01 = 0;
  for (const auto& s : spofs) {
    CHECK(s.gpus_down == 8u);
    CHECK(s.whole_domain);
    r01 += t.at(s.component).rack == 0;
  }
  // cdu (airflow), shelf1, 2 NVSwitch chips, the tray, 2 CPUs, the valve: 8 per server.
  CHECK(r01 == 8);
  CHECK(spofs.size() == 16);
}

// Pumps, DPUs and spines (GB200 NVL72: 2 pumps of which 1 carries the flow [guess], 2 DPUs per tray each
// fronting 2 of its 4 NICs; 4 racks per leaf group, ceil(leaves / 2) spines).

std::vector<std::string> SpofNames(const Topology& t, size_t threshold) {
  std::vector<ComponentId> ids;
  for (const auto& s : FindSinglePointsOfFailure(t, threshold)) ids.push_back(s.component);
  return Names(t, ids);
}

TEST_CASE("dependency.parts: a GB200 pump within the CDU's 1+1 redundancy takes nothing, without it the domain") {
  const Topology t = Build("gb200-nvl72", 1);
  BlastRadius b = Blast(t, Id(t, "r01.cdu.pump2"));
  CHECK(b.gpus_down.empty());
  CHECK_FALSE(b.whole_domain);
  CHECK(b.why == std::vector<std::string>{"redundant: r01.cdu keeps 1 of 2 pumps, 1 needed for full flow"});
  // cdu + 9 switch trays, no pump.
  CHECK(SpofNames(t, 72).size() == 10);
  const Topology tight = Build("gb200-nvl72", 1, [](RackModel& m) { m.cdu_pumps_needed = 2; });
  BlastRadius p = Blast(tight, Id(tight, "r01.cdu.pump1"));
  CHECK(p.whole_domain);
  CHECK(p.gpus_down.size() == 72);
  // The pumps are built last: cdu, 9 switch trays, then pump1, pump2 (all 72 GPUs, in id order).
  CHECK(SpofNames(tight, 72) == std::vector<std::string>{"r01.cdu", "r01.switch1", "r01.switch2", "r01.switch3",
                                                         "r01.switch4", "r01.switch5", "r01.switch6", "r01.switch7",
                                                         "r01.switch8", "r01.switch9", "r01.cdu.pump1",
                                                         "r01.cdu.pump2"});
}

TEST_CASE("dependency.parts: a GB200 DPU takes the two GPUs behind its two NICs") {
  const Topology t = Build("gb200-nvl72", 1);
  BlastRadius b = Blast(t, Id(t, "r01.tray05.dpu1"));
  CHECK(Names(t, b.gpus_down) == std::vector<std::string>{"r01.tray05.gpu2", "r01.tray05.gpu3"});
  CHECK_FALSE(b.whole_domain);
  CHECK(Names(t, Blast(t, Id(t, "r01.tray05.dpu0")).gpus_down) ==
        std::vector<std::string>{"r01.tray05.gpu0", "r01.tray05.gpu1"});
  // GB300 has one DPU per tray [guess]: it fronts all four NICs.
  const Topology g3 = Build("gb300-nvl72", 1);
  CHECK(Blast(g3, Id(g3, "r01.tray05.dpu0")).gpus_down.size() == 4);
  CHECK_FALSE(g3.Find("r01.tray05.dpu1").has_value());
  // Threshold 3: the GB300 DPU (4 GPUs) joins trays, CPUs and valves; a GB200 DPU (2 GPUs) never does.
  size_t dpus = 0;
  for (const auto& s : FindSinglePointsOfFailure(g3, 3)) dpus += g3.at(s.component).kind == Kind::kDpu;
  CHECK(dpus == 18);
  for (const auto& s : FindSinglePointsOfFailure(t, 2)) CHECK(t.at(s.component).kind != Kind::kDpu);
}

TEST_CASE("dependency.parts: a spine slows every GPU's cross-leaf traffic to 3/4 with 2 leaf groups, nothing with 1") {
  const Topology t = Build("gb200-nvl72", 8);
  REQUIRE(t.spines().size() == 4);
  BlastRadius b = Blast(t, Id(t, "spine03"));
  CHECK(b.gpus_down.empty());
  CHECK(b.gpus_slowed.size() == 8 * 72);
  CHECK(b.slowed_bandwidth == doctest::Approx(3.0 / 4));
  CHECK(b.cross_leaf_only);
  CHECK(std::string(b.slowed_link) == "cross-leaf scale-out");
  // No spine, pump or DPU among the single points of failure: 4 rails (144 GPUs), 8 CDUs, 72 switch
  // trays. Not the 8 leaves: 72 GPUs each, but over 4 racks, not one domain.
  auto names = SpofNames(t, 72);
  CHECK(names.size() == 4 + 8 + 72);
  for (const auto& n : names) CHECK(n.find("spine") == std::string::npos);
  const Topology one = Build("gb200-nvl72", 4);
  REQUIRE(one.spines().size() == 2);  // 4 leaves
  BlastRadius none = Blast(one, Id(one, "spine01"));
  CHECK(none.gpus_slowed.empty());
  CHECK(none.gpus_down.empty());
}


TEST_CASE("dependency.parts: three tiers - a spine slows its pod's cross-leaf traffic, a super-spine the cross-pod") {
  const Topology t = Build("gb200-nvl72", 80, [](RackModel& m) { m.fabric_tiers = 3; });
  BlastRadius spine = Blast(t, Id(t, "spine73"));  // pod 2: r73-r80, 8 spines
  CHECK(spine.gpus_slowed.size() == 8 * 72);
  CHECK(t.at(spine.gpus_slowed.front()).name == "r73.tray01.gpu0");
  CHECK(spine.slowed_bandwidth == doctest::Approx(7.0 / 8));
  BlastRadius ss = Blast(t, Id(t, "superspine07"));
  CHECK(ss.gpus_slowed.size() == 80 * 72);
  CHECK(ss.slowed_bandwidth == doctest::Approx(39.0 / 40));
  CHECK(ss.cross_pod_only);
  CHECK(ss.gpus_down.empty());
  // Neither is a single point of failure: 80 CDUs, 720 switch trays, 4 rails and 80 leaves (72 GPUs each).
  for (const auto& n : SpofNames(t, 72)) CHECK(n.find("spine") == std::string::npos);
}

// One NIC per tray: one rail, two leaf groups of 4 racks, two leaves, ceil(2 / 2) = 1 spine. Its loss
// leaves no path between the leaf groups: jobs whose DP or PP groups span them hang, but every GPU keeps
// its service (jobs inside one leaf group run on), so it ranks after every part that takes GPUs out.
TEST_CASE("dependency.parts: a lone spine cuts cross-leaf scale-out but takes no GPU out - spof ranks it last") {
  const Topology t = Build("gb200-nvl72", 8, [](RackModel& m) { m.nics_per_tray = m.dpus_per_tray = 1; });
  REQUIRE(t.spines().size() == 1);
  BlastRadius b = Blast(t, Id(t, "spine01"));
  CHECK(b.gpus_down.empty());
  CHECK(b.gpus_slowed.size() == 8 * 72);
  CHECK(b.slowed_bandwidth == 0);
  CHECK(b.cross_leaf_only);
  // rail0 (gpu0 of 144 trays), then 8 CDUs and 72 switch trays (72 GPUs each), then the spine.
  auto names = SpofNames(t, 72);
  REQUIRE(names.size() == 1 + 8 + 72 + 1);
  CHECK(names.front() == "rail0");
  CHECK(names.back() == "spine01");
  const SinglePointOfFailure spine = FindSinglePointsOfFailure(t, 72).back();
  CHECK(spine.gpus_down == 0);
  CHECK(spine.gpus_cut_off == 8 * 72);
  CHECK_FALSE(spine.whole_domain);
  CHECK(FindSinglePointsOfFailure(t, 72).front().gpus_cut_off == 0);  // the rail takes its GPUs out
  // Listed by what it cuts off: above 576 GPUs it is none of them, and a spine of several never is.
  for (const auto& n : SpofNames(t, 576)) CHECK(n.find("spine") == std::string::npos);
}

}  // namespace
}  // namespace rackchaos::cluster

namespace rackchaos::cluster {
namespace {

TEST_CASE("dependency.domains: spof calls a leaf whole only when its GPUs are one domain's, not 72 over 4 racks") {
  Topology t = Build("gb200-nvl72", 4);  // one leaf group: each leaf serves rail n of 4 racks x 18 trays
  BlastRadius leaf = Blast(t, Id(t, "rail0.leaf01"));
  REQUIRE(leaf.gpus_down.size() == 72);
  CHECK_FALSE(leaf.whole_domain);
  for (const auto& n : SpofNames(t, 72)) CHECK(n.find("leaf") == std::string::npos);
  bool listed = false;
  for (const auto& s : FindSinglePointsOfFailure(t, 71))
    if (s.component == Id(t, "rail0.leaf01")) {
      listed = true;
      CHECK_FALSE(s.whole_domain);
    }
  CHECK(listed);
}

TEST_CASE("dependency.domains: an NVL36x2 switch tray takes 72 GPUs over two racks, its CDU one rack's 36") {
  Topology t = Build("gb200-nvl36x2", 2);
  BlastRadius sw = Blast(t, Id(t, "r02.switch4"));
  CHECK(sw.gpus_down == t.GpusOfDomain(0));
  CHECK(sw.gpus_down.size() == 72);
  CHECK(TraysOfGpus(t, sw.gpus_down).size() == 18);
  CHECK(sw.whole_domain);
  CHECK(sw.why.front() == "switch_tray: NVLink domain nvl01 (2 racks) in full-bandwidth mode goes UNHEALTHY: no partition runs");
  BlastRadius cdu = Blast(t, Id(t, "r01.cdu"));
  CHECK(cdu.gpus_down.size() == 36);
  CHECK_FALSE(cdu.whole_domain);
  CHECK(Blast(t, Id(t, "nvl01")).gpus_down.size() == 72);
  // Ranked: the 18 switch trays of the pair, each a whole domain; the CDUs only under a lower threshold.
  auto spofs = FindSinglePointsOfFailure(t, 72);
  REQUIRE(spofs.size() == 18);
  for (const auto& s : spofs) {
    CHECK(t.at(s.component).kind == Kind::kSwitchTray);
    CHECK(s.gpus_down == 72);
    CHECK(s.whole_domain);
  }
  size_t cdus = 0;
  for (const auto& s : FindSinglePointsOfFailure(t, 35))
    if (t.at(s.component).kind == Kind::kCdu) {
      ++cdus;
      CHECK_FALSE(s.whole_domain);
    }
  CHECK(cdus == 2);
}

}  // namespace
}  // namespace rackchaos::cluster
