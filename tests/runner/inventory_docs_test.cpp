// docs/inventory-reference.md is generated from InventoryKeys(), InventoryActions() and HealerActions()
// (the last two views of injectors/real_actions.cpp), the tables the inventory loader accepts, so the two
// cannot drift. Regenerate with:
//   RACKCHAOS_UPDATE_DOCS=1 ./build/tests/runner/run_tests -tc="*inventory key table*"
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/site/inventory.h"

using namespace rackchaos;

namespace {

std::string SectionTitle(const std::string& section) {
  if (section.empty()) return "top level";
  if (section == "host") return "`hosts[]`";
  if (section == "tray") return "`trays.<tray>`";
  if (section == "valve") return "`trays.<tray>.valve`";
  if (section == "action") return "`injectors.<action>`";
  if (section == "source") return "`observe.<source>`";
  if (section == "point") return "`observe.bmc.points[]`";
  return "`" + section + "`";
}

std::string Braced(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "`{" : ", `{") + n + "}`";
  return out.empty() ? "(common only)" : out;
}

std::string RenderInventoryReference() {
  std::ostringstream md;
  md << "# Site inventory reference\n\n"
     << "Generated from the inventory loader's key table (`runner/site/inventory_keys.cpp`) and the real-mode\n"
     << "action table (`injectors/real_actions.cpp`); a test fails when this file and the tables disagree.\n"
     << "How real mode uses an inventory: [real-mode.md](real-mode.md). Examples: `sites/gb200-example.yaml`,\n"
     << "or `rackchaos init --model MODEL` to write one for your rack model.\n"
     << "Durations take units `ms s m h d w`. Unknown keys are refused with `FILE:LINE:COL`.\n";
  std::string section = "-";
  for (const runner::InventoryKey& k : runner::InventoryKeys()) {
    if (k.section != section) {
      section = k.section;
      md << "\n## " << SectionTitle(section) << "\n\n| key | meaning |\n|---|---|\n";
    }
    const bool number = k.number != runner::InventoryKey::Number::kNone;
    md << "| `" << k.key << "` | " << k.meaning << (number ? " Valid: " + runner::DescribeRange(k) + "." : "") << " |\n";
  }
  md << "\n## Fault actions (`injectors.<action>`)\n\n"
     << "Every action's templates may use " << Braced(runner::CommonPlaceholders())
     << " and every `vars` name,\nplus the placeholders below. `rackchaos explain KIND` says what each command must "
        "do.\n\n"
     << "| action | used by | placeholders | checked by |\n|---|---|---|---|\n";
  for (const runner::ActionInfo& a : runner::InventoryActions())
    md << "| `" << a.name << "` | `" << a.injector << "`" << (a.target.empty() ? "" : " on " + a.target) << " | "
       << Braced(a.placeholders) << " | `" << a.checked_by << "` |\n";
  md << "\n## Healer actions (`healer.<action>`)\n\n"
     << "Each takes `apply` and optionally `run_on`; actions on the site need `run_on`. Formats of the\n"
     << "observe_* answers: [real-mode.md](real-mode.md).\n\n"
     << "| action | on | placeholders | answer |\n|---|---|---|---|\n";
  for (const runner::ActionInfo& a : runner::HealerActions())
    md << "| `" << a.name << "` | " << a.target << " | " << Braced(a.placeholders) << " | " << a.checked_by << " |\n";
  return md.str();
}

}  // namespace

TEST_CASE("docs: docs/inventory-reference.md matches the inventory key table") {
  std::string path = std::string(RACKCHAOS_SOURCE_DIR) + "/docs/inventory-reference.md";
  std::string want = RenderInventoryReference();
  if (std::getenv("RACKCHAOS_UPDATE_DOCS")) std::ofstream(path) << want;
  std::ifstream in(path);
  std::stringstream have;
  have << in.rdbuf();
  CHECK_MESSAGE(have.str() == want, "regenerate: RACKCHAOS_UPDATE_DOCS=1 run_tests -tc=\"*inventory key table*\"");
}
