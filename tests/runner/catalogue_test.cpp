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
#include "tests/runner/catalogue_fixture.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
using namespace rackchaos::runner::testing;

TEST_CASE("catalogue: chaos.catalogue takes a file relative to the plan's folder") {
  TempDir dir("catalogue-path");
  WriteFile(dir.path / "catalogues" / "site.yaml", kSiteCatalogue);
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

  WriteFile(dir.path / "two.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, mtbf: 9d, class: gpu, injector: gpu_fail, repair: 1h}\n");
  auto two = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: two.yaml}"));
  REQUIRE_FALSE(two.ok());
  CHECK(two.status().message() == (dir.path / "two.yaml").string() + ":4:26: causes[0]: give one of count, rate and mtbf, not two");

  WriteFile(dir.path / "inj.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, class: gpu, injector: gpu_melt, repair: 1h}\n");
  auto inj = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: inj.yaml}"));
  REQUIRE_FALSE(inj.ok());
  CHECK(inj.status().message().find((dir.path / "inj.yaml").string() + ":4:48: cause 'a' names unknown injector 'gpu_melt'; catalogue causes use gpu_fail, process_crash, link_down or tray_pull (`rackchaos list injectors`)") == 0);
}

TEST_CASE("catalogue: chaos.scale takes decimals, and scales the draws") {
  TempDir dir("catalogue-scale");
  WriteFile(dir.path / "site.yaml", kSiteCatalogue);
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
  WriteFile(dir.path / "site.yaml", kSiteCatalogue);
  auto file = runner::Explain((dir.path / "site.yaml").string());
  REQUIRE_MESSAGE(file.ok(), file.status().ToString());
  CHECK(file->find("gpu: 0.1 /day, MTBF 10 days, shape 1") != std::string::npos);
  CHECK(file->find("link [nic]: 0.05 /day (MTBF 20 days, 100% of the class)") != std::string::npos);
  CHECK_FALSE(runner::Explain((dir.path / "none.yaml").string()).ok());
}


TEST_CASE("catalogue: each mistake in a catalogue file is refused at its FILE:LINE:COL with what would be valid") {
  TempDir dir("catalogue-loader-errors");
  const std::string file = (dir.path / "site.yaml").string();
  // The error a plan next to site.yaml gets when site.yaml's one cause is `cause` (on line 4).
  auto error = [&](const std::string& cause) {
    WriteFile(dir.path / "site.yaml", "name: t\nsource: s\ncauses:\n  - " + cause + "\n");
    auto spec = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: site.yaml}"));
    return spec.ok() ? std::string("ok") : spec.status().message();
  };
  CHECK(error("{name: a, rate: 0.1, class: gpus, injector: gpu_fail, repair: 1h}") ==
        file + ":4:33: causes[0].class: unknown failure class 'gpus'; known: gpu, nic, node");
  CHECK(error("{name: a, rate: 0.1, class: gpu, injector: gpu_fail}") ==
        file + ":4:5: missing required key 'repair' in causes[0]");
  CHECK(error("{name: a, rate: 2000, class: gpu, injector: gpu_fail, repair: 1h}") ==
        file + ":4:21: causes[0].rate must be from 0 to 1000 failures per component-day");
  const std::string repair = error("{name: a, rate: 0.1, class: gpu, injector: gpu_fail, repair: 4 hours}");
  CHECK(repair.starts_with(file + ":4:66: causes[0].repair: '4 hours'"));
  CHECK(repair.find("accepted units: ms, s, m, h, d, w") != std::string::npos);
  // An injector that cannot take the class's components: before, gpu_fail was drawn on NICs.
  CHECK(error("{name: a, rate: 0.1, class: nic, injector: gpu_fail, repair: 1h}") ==
        file + ":4:48: cause 'a' (class nic): gpu_fail needs a GPU (e.g. r01.tray05.gpu1); r01.tray01.nic0 is a nic; "
               "injectors for class nic: link_down");
  CHECK(error("{name: a, rate: 0.1, class: node, injector: link_down, repair: 1h}").starts_with(
      file + ":4:49: cause 'a' (class node): link_down needs"));

  // Two causes of one name; the file's YAML broken; no causes.
  WriteFile(dir.path / "site.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, class: gpu, injector: gpu_fail, repair: 1h}\n"
                                "  - {name: a, rate: 0.2, class: gpu, injector: gpu_fail, repair: 1h}\n");
  auto twice = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: site.yaml}"));
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() == file + ":5:5: causes[1]: a second cause named 'a'");
  WriteFile(dir.path / "site.yaml", "name: t\nsource: s\ncauses:\n  - {name: a, rate: 0.1, class: gpu\n");
  auto broken = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: site.yaml}"));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().message().starts_with(file + ":"));
  CHECK(broken.status().message().find(": YAML syntax error: ") != std::string::npos);
  WriteFile(dir.path / "site.yaml", "name: t\nsource: s\ncauses: []\n");
  auto empty = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: site.yaml}"));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message() == file + ":3:9: causes is empty; a failure catalogue needs at least one cause");

  // A directory where the file should be: the plan's key is blamed, with what is wrong with the path.
  std::filesystem::create_directories(dir.path / "dir.yaml");
  auto directory = ValidateAt(dir.path / "p.yaml", ChaosPlan("{catalogue: dir.yaml}"));
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.status().message().starts_with((dir.path / "p.yaml").string() + ":5:8: "));
  CHECK(directory.status().message().find("directory") != std::string::npos);
}
