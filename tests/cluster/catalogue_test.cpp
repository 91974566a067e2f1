#include "cluster/catalogue.h"

#include "cluster/topology.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rackchaos::cluster {
namespace {

std::string ShippedText(const std::string& model) {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/cluster/catalogue/" + model + ".yaml");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shipped GB200 text with the first occurrence of `from` replaced by `to`.
std::string Gb200With(const std::string& from, const std::string& to) {
  std::string text = ShippedText("gb200-nvl72");
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("every shipped model loads and builds a topology with its GPU count") {
  CHECK(CatalogueModelNames() == std::vector<std::string>{"gb200-nvl36x2", "gb200-nvl72", "gb300-nvl72", "helios",
                                                          "hgx-b200", "vr-nvl72"});
  // GPUs per topology rack: NVL36x2 is modelled rack by rack (36), the HGX server as a 1-tray rack (8).
  const std::vector<std::pair<std::string, int>> expected = {{"gb200-nvl36x2", 36}, {"gb200-nvl72", 72},
                                                             {"gb300-nvl72", 72},   {"helios", 72},
                                                             {"hgx-b200", 8},       {"vr-nvl72", 72}};
  for (const auto& [name, gpus_per_rack] : expected) {
    CAPTURE(name);
    auto m = LoadRackModel(name);
    REQUIRE_MESSAGE(m.ok(), m.status().message());
    CHECK(m->name == name);
    CHECK(m->gpus() == gpus_per_rack);
    CHECK(static_cast<int>(m->gpu_pci_bus_ids.size()) == m->gpus_per_tray);
    CHECK(ParseRackModel(ShippedText(name), "site.yaml").ok());  // the embedded text is the file's
    auto topo = Topology::Build(*m, 2, 0);
    REQUIRE(topo.ok());
    CHECK(topo->gpus().size() == static_cast<size_t>(2 * gpus_per_rack));
    CHECK(topo->trays().size() == static_cast<size_t>(2 * m->compute_trays));
    for (ComponentId g : topo->gpus()) CHECK(topo->NicOfGpu(g) != kNoComponent);
  }
}

TEST_CASE("the new models carry their catalogue numbers") {
  auto vr = LoadRackModel("vr-nvl72");
  REQUIRE(vr.ok());
  CHECK(vr->nvlink_links_per_gpu == 36);
  CHECK(vr->nvlink_gbytes_per_s == 1800);  // 3.6 TB/s bidirectional
  CHECK(vr->nic_gbit_per_s == 1600);
  CHECK(vr->cpus_per_tray == 2);
  auto helios = LoadRackModel("helios");
  REQUIRE(helios.ok());
  CHECK(helios->cpus_per_tray == 1);
  CHECK(helios->nic_gbit_per_s == 2400);  // 3 x 800 GbE as one NIC per GPU
  auto hgx = LoadRackModel("hgx-b200");
  REQUIRE(hgx.ok());
  CHECK(hgx->compute_trays == 1);
  CHECK(hgx->gpus_per_tray == 8);
  CHECK(hgx->nics_per_tray == 8);
  CHECK(hgx->nvlink_gbytes_per_s == 900);
  auto nvl36 = LoadRackModel("gb200-nvl36x2");
  REQUIRE(nvl36.ok());
  CHECK(nvl36->compute_trays == 9);
  CHECK(nvl36->domain_racks == 2);  // one NVLink domain over two racks (RACK-FACTS)
  CHECK(nvl36->domain_gpus() == 72);
  CHECK(hgx->domain_racks == 1);
  CHECK(helios->domain_gpus() == helios->gpus());
}

TEST_CASE("the NVL72 models load with their catalogue numbers") {

  auto gb200 = LoadRackModel("gb200-nvl72");
  REQUIRE(gb200.ok());
  CHECK(gb200->name == "gb200-nvl72");
  CHECK(gb200->compute_trays == 18);
  CHECK(gb200->gpus_per_tray == 4);
  CHECK(gb200->gpus() == 72);
  CHECK(gb200->switch_trays == 9);
  CHECK(gb200->nvlink_links_per_gpu == 18);
  CHECK(gb200->nic_gbit_per_s == 400);
  CHECK(gb200->gpu_tdp_w == 1200);
  CHECK(gb200->conductance_w_per_k == 40);
  CHECK(gb200->gpu_pci_bus_ids.size() == 4);
  CHECK(gb200->gpu_reset_time == Duration::Seconds(30));
  CHECK(gb200->node_boot_time == Duration::Minutes(5));
  CHECK(gb200->diagnostic_time == Duration::Minutes(2));

  auto gb300 = LoadRackModel("gb300-nvl72");
  REQUIRE(gb300.ok());
  CHECK(gb300->name == "gb300-nvl72");
  CHECK(gb300->gpu_tdp_w == 1400);
  CHECK(gb300->nic_gbit_per_s == 800);
  CHECK(gb300->conductance_w_per_k == 47);
}

TEST_CASE("an unknown model is NotFound and lists the known ones") {
  auto m = LoadRackModel("gb400-nvl144");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kNotFound);
  CHECK(m.status().message().find("'gb400-nvl144'") != std::string::npos);
  CHECK(m.status().message().find("known models: gb200-nvl36x2, gb200-nvl72, gb300-nvl72, helios, hgx-b200, vr-nvl72") != std::string::npos);
}

TEST_CASE("the shipped text parses as a site's own file would") {
  auto m = ParseRackModel(ShippedText("gb200-nvl72"), "site.yaml");
  REQUIRE(m.ok());
  CHECK(m->gpu_shutdown_c == 92);
}

TEST_CASE("malformed catalogue YAML names the origin, line, column and the key") {
  SUBCASE("misspelt key: the valid ones and the nearest") {
    auto m = ParseRackModel(Gb200With("  tdp_w: 1200", "  tdp: 1200"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().rfind("site.yaml:20:3: unknown key 'tdp' in gpu; expected one of: tdp_w, idle_w", 0) == 0);
    CHECK(m.status().message().find("(did you mean 'tdp_w'?)") != std::string::npos);
  }
  SUBCASE("missing key") {
    auto m = ParseRackModel(Gb200With("  tdp_w: 1200", "  # tdp_w: 1200"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml:21:3: missing required key 'tdp_w' in gpu");
    m = ParseRackModel(Gb200With("nic:\n  gbit_per_s: 400", ""), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml:1:1: missing required key 'nic' in the rack model");
  }
  SUBCASE("wrong type names the key, its line and column") {
    auto m = ParseRackModel(Gb200With("compute_trays: 18", "compute_trays: eighteen"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml:7:16: compute_trays: 'eighteen' is not a number; expected an integer");
  }
  SUBCASE("bad duration names the key") {
    auto m = ParseRackModel(Gb200With("node_boot: 5m", "node_boot: 5"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().rfind("site.yaml:53:14: service.node_boot: '5' has no unit", 0) == 0);
  }
  SUBCASE("a section that is a scalar, not a map") {
    std::string text = Gb200With("nic:\n  gbit_per_s: 400", "nic: 400");
    Result<RackModel> m = Status::Internal("not parsed");
    CHECK_NOTHROW(m = ParseRackModel(text, "site.yaml"));
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml:17:6: nic is a scalar; expected a map of keys: gbit_per_s");
    CHECK_NOTHROW(m = ParseRackModel("just a sentence", "site.yaml"));
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().rfind("site.yaml:1:1: the rack model is a scalar; expected a map of keys: model, ", 0) == 0);
  }
  SUBCASE("syntax error names the line") {
    auto m = ParseRackModel("model: x\n  bad: [unclosed\n", "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().find("site.yaml:") == 0);
  }
  SUBCASE("inconsistent numbers") {
    auto m = ParseRackModel(Gb200With("slowdown_c: 87", "slowdown_c: 95"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml: need inlet_c < slowdown_c < shutdown_c");
    m = ParseRackModel(Gb200With(", \"0000:42:00\"]", "]"), "site.yaml");
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "site.yaml: gpu.pci_bus_ids needs one entry per GPU in a tray");
  }
}

}  // namespace
}  // namespace rackchaos::cluster
