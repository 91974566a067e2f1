// Failure catalogues as user data (issue 22 item 1): a plan names a catalogue file by path, relative to
// the plan; chaos.scale takes decimals; `explain` knows catalogues. These use only what bf69c81 has
// (ParsePlan, ValidatePlan, Explain), so they were run against it: each failed there.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include "runner/cli/explain_cmd.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
using runner::testing::TempDir;

namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A GPU-only catalogue whose one cause fails about every 10 GPU-days.
const char* const kSiteCatalogue = R"(name: site
source: a test site
causes:
  - {name: fell off the bus, rate: 0.1, class: gpu, injector: gpu_fail, xid: 79, repair: 1h}
  - {name: link, mtbf: 20d, class: nic, injector: link_down, repair: 30m}
)";

std::string ChaosPlan(const std::string& chaos) {
  return "name: c\nseed: 3\nduration: 2d\ncluster: {model: gb200-nvl72, racks: 1}\nchaos: " + chaos + "\n";
}

Result<runner::RunSpec> ValidateAt(const std::filesystem::path& plan_path, const std::string& text) {
  Write(plan_path, text);
  auto plan = runner::LoadPlan(plan_path.string());
  if (!plan.ok()) return plan.status();
  return runner::ValidatePlan(*plan, {});
}

std::map<std::string, int> CountByCause(const runner::RunSpec& spec) {
  std::map<std::string, int> n;
  for (const auto& f : spec.faults) ++n[f.selector];
  return n;
}

}  // namespace

TEST_CASE("catalogue: chaos.catalogue takes a file relative to the plan's folder") {
  TempDir dir("catalogue-path");
  Write(dir.path / "catalogues" / "site.yaml", kSiteCatalogue);
  auto spec = ValidateAt(dir.path / "plans" / "p.yaml", ChaosPlan("{catalogue: ../catalogues/site.yaml}"));
  REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());  // bf69c81: "unknown failure catalogue"
  auto n = CountByCause(*spec);
  // 72 GPUs x 2 days x 0.1 a day: about 14 GPU failures; 72 NICs x 2 days / 20 days: about 7 link downs.
  CHECK(n["chaos site: fell off the bus"] > 4);
  CHECK(n["chaos site: link"] > 1);
  CHECK(n.size() == 2);
  for (const auto& f : spec->faults) {
    const bool gpu = f.selector.ends_with("bus");
    CHECK(f.injector->name() == (gpu ? "gpu_fail" : "link_down"));
    CHECK(*f.duration == (gpu ? Duration::Hours(1) : Duration::Minutes(30)));
  }
}

TEST_CASE("catalogue: a missing or broken catalogue file is refused with file:line:col") {
  TempDir dir("catalogue-errors");
  auto missing = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: nope.yaml}"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == (dir.path / "p.yaml").string() + ":5:8: " + (dir.path / "nope.yaml").string() +
                                          ": no such failure catalogue file");

  Write(dir.path / "two.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, mtbf: 9d, class: gpu, injector: gpu_fail, repair: 1h}\n");
  auto two = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: two.yaml}"));
  REQUIRE_FALSE(two.ok());
  CHECK(two.status().message() == (dir.path / "two.yaml").string() + ":4:26: causes[0]: give one of count, rate and mtbf, not two");

  Write(dir.path / "inj.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, class: gpu, injector: gpu_melt, repair: 1h}\n");
  auto inj = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: inj.yaml}"));
  REQUIRE_FALSE(inj.ok());
  CHECK(inj.status().message().find((dir.path / "inj.yaml").string() + ":4:48: cause 'a' names unknown injector 'gpu_melt'; catalogue causes use gpu_fail, process_crash, link_down or tray_pull (`rackchaos list injectors`)") == 0);
}

TEST_CASE("catalogue: chaos.scale takes decimals, and scales the draws") {
  TempDir dir("catalogue-scale");
  Write(dir.path / "site.yaml", kSiteCatalogue);
  auto half = ValidateAt(dir.path / "a.yaml", ChaosPlan("{catalogue: site.yaml, scale: 0.5}"));
  REQUIRE_MESSAGE(half.ok(), half.status().ToString());  // bf69c81: "is not a whole number"
  auto triple = ValidateAt(dir.path / "b.yaml", ChaosPlan("{catalogue: site.yaml, scale: 3.0}"));
  REQUIRE(triple.ok());
  CHECK(triple->faults.size() > 2 * half->faults.size());

  // On a shipped catalogue too, and a negative scale is out of range.
  auto plan = runner::ParsePlan(ChaosPlan("{catalogue: llama3, scale: 2.5}"), "s.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  CHECK(plan->chaos.scale == 2.5);
  auto negative = runner::ParsePlan(ChaosPlan("{catalogue: llama3, scale: -1}"), "s.yaml");
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().message() ==
        "s.yaml:5:35: scale: is out of range; expected a number from 0 to 1000000 (decimals allowed) (e.g. scale: 2.5)");
}

TEST_CASE("catalogue: explain knows the shipped catalogues and catalogue files") {
  auto text = runner::Explain("llama3");  // bf69c81: "explain: unknown name 'llama3'"
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  CHECK(text->find("llama3 (failure catalogue, `chaos.catalogue`)") != std::string::npos);
  CHECK(text->find("faulty GPU [gpu]: 0.000167 /day") != std::string::npos);  // 148 / (16384 x 54)
  CHECK(text->find("name: llama3") != std::string::npos);                    // the shipped YAML
  auto names = runner::ExplainableNames();
  CHECK(std::count(names.begin(), names.end(), "burn-in") == 1);

  TempDir dir("catalogue-explain");
  Write(dir.path / "site.yaml", kSiteCatalogue);
  auto file = runner::Explain((dir.path / "site.yaml").string());
  REQUIRE_MESSAGE(file.ok(), file.status().ToString());
  CHECK(file->find("gpu: 0.1 /day, MTBF 10 days, shape 1") != std::string::npos);
  CHECK(file->find("link [nic]: 0.05 /day (MTBF 20 days, 100% of the class)") != std::string::npos);
  CHECK_FALSE(runner::Explain((dir.path / "none.yaml").string()).ok());
}

