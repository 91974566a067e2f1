// Failure catalogues as user data (issue 22 item 1): chaos.rates overrides a class or a cause, per day or
// as an MTBF; docs/catalogue.md's key table is generated from the loader's table (FailureCatalogueKeys()).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cluster/failure_catalogue.h"
#include "reports/escape.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"
#include "runner/spec/validate_chaos.h"
#include "tests/runner/catalogue_fixture.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
using namespace rackchaos::runner::testing;

TEST_CASE("catalogue: chaos.rates sets a cause's rate or a class's total, decimals or MTBF") {
  TempDir dir("catalogue-rates");
  WriteFile(dir.path / "site.yaml", kSiteCatalogue);
  // The NIC cause off (per_day 0), the GPU class at 10x: only GPU failures, about ten times as many.
  auto base = ValidateAt(dir.path / "a.yaml", ChaosPlan("{catalogue: site.yaml}"));
  auto over = ValidateAt(dir.path / "b.yaml",
                         ChaosPlan("{catalogue: site.yaml, rates: {link: {per_day: 0}, gpu: {mtbf: 1d}}}"));
  REQUIRE(base.ok());
  REQUIRE_MESSAGE(over.ok(), over.status().ToString());
  auto b = CountByCause(*base), o = CountByCause(*over);
  CHECK(o.count("chaos site: link") == 0);
  CHECK(o["chaos site: fell off the bus"] > 5 * b["chaos site: fell off the bus"]);

  auto plan = runner::ParsePlan(ChaosPlan("{catalogue: llama3, rates: {\"faulty GPU\": {per_day: 0.5}, node: {mtbf: 30d}}}"), "r.yaml");
  REQUIRE(plan.ok());
  auto cat = runner::PlanCatalogue(plan->chaos, plan->path);
  REQUIRE(cat.ok());
  double node = 0;
  for (const auto& c : cat->causes) {
    if (c.name == "faulty GPU") CHECK(c.rate_per_hour * 24 == doctest::Approx(0.5));
    if (c.cls == cluster::FailureClass::kNode) node += c.rate_per_hour;
  }
  CHECK(node * 24 * 30 == doctest::Approx(1));

  auto unknown = ValidateAt(dir.path / "c.yaml", ChaosPlan("{catalogue: site.yaml, rates: {gpus: {per_day: 1}}}"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() == (dir.path / "c.yaml").string() +
                                          ":5:39: chaos.rates: 'gpus' is neither a class (gpu, nic, node) nor a "
                                          "cause of catalogue 'site'; its causes: fell off the bus, link");
  auto both = runner::ParsePlan(ChaosPlan("{catalogue: llama3, rates: {gpu: {per_day: 1, mtbf: 2d}}}"), "r.yaml");
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().message() == "r.yaml:5:36: chaos.rates.gpu: give per_day or mtbf (one of them), e.g. gpu: {per_day: 0.002}");
}


namespace {

std::string RenderKeys() {
  std::ostringstream md;
  std::string section = "-";
  for (const cluster::CatalogueKey& k : cluster::FailureCatalogueKeys()) {
    if (k.section != section) {
      section = std::string(k.section);
      md << "\n### " << (section.empty() ? "top level" : "`" + section + "`") << "\n\n"
         << "| key | type | required | example | meaning |\n|---|---|---|---|---|\n";
    }
    md << "| `" << k.key << "` | " << reports::MarkdownCell(k.type) << " | " << (k.required ? "yes" : "no") << " | `" << reports::MarkdownCell(k.example)
       << "` | " << reports::MarkdownCell(k.description) << " |\n";
  }
  return md.str();
}

}  // namespace

TEST_CASE("docs/catalogue.md matches the catalogue key table") {
  const std::string path = std::string(RACKCHAOS_SOURCE_DIR) + "/docs/catalogue.md";
  const std::string begin = "<!-- BEGIN generated from FailureCatalogueKeys() -->\n", end = "<!-- END generated -->";
  std::stringstream have;
  have << std::ifstream(path).rdbuf();
  std::string doc = have.str();
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string want = RenderKeys() + "\n";
  if (std::getenv("RACKCHAOS_UPDATE_DOCS")) {
    doc.replace(b + begin.size(), e - b - begin.size(), want);
    std::ofstream(path) << doc;
  }
  CHECK_MESSAGE(doc.substr(b + begin.size(), e - b - begin.size()) == want,
                "regenerate: RACKCHAOS_UPDATE_DOCS=1 run_tests -tc=\"*catalogue key table*\"");
}
