// docs/plan-reference.md is generated from PlanKeys(), the table the loader validates against, so the
// two cannot drift. Regenerate with: RACKCHAOS_UPDATE_DOCS=1 ./build/tests/runner/run_tests -tc="*plan key table*"
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "reports/escape.h"
#include "runner/plan/plan_loader.h"

using namespace rackchaos;

namespace {

std::string RenderReference() {
  std::ostringstream md;
  md << "# Plan reference\n\n"
     << "Generated from the loader's key table (`runner/plan/plan.cpp`, `PlanKeys()`); a test fails when this file\n"
     << "and the table disagree. Durations take units `ms s m h d w` and sums such as `1h30m`.\n";
  std::string section = "-";
  for (const runner::KeyInfo& k : runner::PlanKeys()) {
    if (k.section != section) {
      section = std::string(k.section);
      md << "\n## " << (section.empty() ? "top level" : "`" + section + "`") << "\n\n"
         << "| key | type | required | default | example | meaning |\n|---|---|---|---|---|---|\n";
    }
    md << "| `" << k.key << "` | " << reports::MarkdownCell(runner::DescribeType(k)) << " | " << (k.required ? "yes" : "no") << " | "
       << reports::MarkdownCell(k.default_value.empty() ? "-" : k.default_value) << " | `" << reports::MarkdownCell(k.example) << "` | "
       << reports::MarkdownCell(k.description) << " |\n";
  }
  return md.str();
}

}  // namespace

TEST_CASE("docs/plan-reference.md matches the plan key table") {
  std::string path = std::string(RACKCHAOS_SOURCE_DIR) + "/docs/plan-reference.md";
  std::string want = RenderReference();
  if (std::getenv("RACKCHAOS_UPDATE_DOCS")) {
    std::ofstream(path) << want;
  }
  std::ifstream in(path);
  std::stringstream have;
  have << in.rdbuf();
  CHECK_MESSAGE(have.str() == want, "regenerate: RACKCHAOS_UPDATE_DOCS=1 run_tests -tc=\"*plan key table*\"");
}
