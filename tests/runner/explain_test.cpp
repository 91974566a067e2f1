// `rackchaos explain` and `rackchaos init` read the code's own tables; these tests hold the tables to
// being complete (every injector and detector explained) and the texts to being usable as written.
#include <doctest/doctest.h>

#include <string>

#include "cluster/catalogue.h"
#include "healer/detector.h"
#include "healer/policy.h"
#include "injectors/injector.h"
#include "runner/spec/expect.h"
#include "runner/cli/explain_cmd.h"
#include "runner/cli/init_cmd.h"
#include "runner/site/inventory.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

Result<runner::RunSpec> ValidateText(const std::string& text) {
  auto plan = runner::ParsePlan(text, "example.yaml");
  if (!plan.ok()) return plan.status();
  return runner::ValidatePlan(*plan, {});
}

}  // namespace

TEST_CASE("explain: every injector and detector carries its explanation") {
  for (const injectors::Injector* i : injectors::AllInjectors()) {
    CAPTURE(i->name());
    CHECK(!i->targets().empty());
    CHECK(!i->simulation().empty());
    CHECK(!i->real_mode().empty());
    for (const injectors::ParamInfo& p : i->params()) CHECK(!p.description.empty());
  }
  for (const healer::DetectorInfo& d : healer::DetectorTable()) {
    CAPTURE(d.name);
    CHECK(!d.summary.empty());
    CHECK(!d.reads.empty());
  }
}

// The rack is a region of its own (east), so that region faults' examples have their target too.
TEST_CASE("explain: the example fault of every injector validates on a GB200 NVL72 rack") {
  for (const injectors::Injector* i : injectors::AllInjectors()) {
    auto text = runner::Explain(std::string(i->name()));
    REQUIRE(text.ok());
    size_t at = text->find("  - {at: ");
    REQUIRE_MESSAGE(at != std::string::npos, *text);
    std::string plan =
        "name: t\ncluster: {model: gb200-nvl72, regions: [{name: east, racks: 1}], spare_trays: 2}\n"
        "workload: {jobs: [{name: j, gpus: 64}]}\nfaults:\n" +
        text->substr(at);
    auto spec = ValidateText(plan);
    CHECK_MESSAGE(spec.ok(), i->name(), ": ", spec.status().message());
  }
}

TEST_CASE("explain: every listed name explains, policy and model texts are the embedded YAML") {
  for (const std::string& name : runner::ExplainableNames()) {
    CAPTURE(name);
    CHECK(runner::Explain(name).ok());
  }
  auto model = runner::Explain("gb300-nvl72");
  REQUIRE(model.ok());
  CHECK(model->find(cluster::ShippedModelText("gb300-nvl72")) != std::string::npos);
  auto policy = runner::Explain("conservative");
  REQUIRE(policy.ok());
  CHECK(policy->find(healer::ShippedPolicyText("conservative")) != std::string::npos);
  auto metric = runner::Explain("ttr");
  REQUIRE(metric.ok());
  CHECK(metric->find("ttr.p95: time to recover, per fault: the 95th percentile (a duration)") != std::string::npos);
  // The gate example of every metric name parses as a gate.
  for (const auto& [name, description] : runner::ExpectationMetrics()) {
    std::string base = name.substr(0, name.rfind('.'));
    for (const std::string& n : {name, base}) {
      auto text = runner::Explain(n);
      REQUIRE(text.ok());
      size_t at = text->find("e.g. \""), end = text->find('"', at + 6);
      REQUIRE(at != std::string::npos);
      auto gate = runner::ParseGate(text->substr(at + 6, end - at - 6));
      CHECK_MESSAGE(gate.ok(), n, ": ", gate.status().message());
    }
  }
  auto gpu_throttle = runner::Explain("gpu_throttle");
  REQUIRE(gpu_throttle.ok());
  CHECK(gpu_throttle->find("power_cap: power") != std::string::npos);
  CHECK(gpu_throttle->find("inventory `injectors.gpu_throttle`: placeholders {gpu} {watts} {baseline}") !=
        std::string::npos);
}

TEST_CASE("explain: an unknown name is refused with the nearest names") {
  auto r = runner::Explain("lnk_down");
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("unknown name 'lnk_down'; nearest: link_down") != std::string::npos);
  CHECK(r.status().message().find("rackchaos list") != std::string::npos);
}

TEST_CASE("init: the scaffold of every model validates, and so does its inventory") {
  for (const std::string& model : cluster::CatalogueModelNames()) {
    CAPTURE(model);
    auto files = runner::ScaffoldFiles(model, 2);
    REQUIRE(files.ok());
    auto spec = ValidateText(files->plan);
    REQUIRE_MESSAGE(spec.ok(), spec.status().message());
    CHECK(spec->faults.size() >= 2);
    auto inv = runner::ParseInventory(files->site, "site.yaml");
    REQUIRE_MESSAGE(inv.ok(), inv.status().message());
    CHECK(inv->model == model);
    CHECK(inv->racks == 2);
    CHECK(inv->trays.size() == 2u * cluster::LoadRackModel(model)->compute_trays);
  }
  CHECK(!runner::ScaffoldFiles("nvl999", 1).ok());
  CHECK(!runner::ScaffoldFiles("gb200-nvl72", 0).ok());
}
