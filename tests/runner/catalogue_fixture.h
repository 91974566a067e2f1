// What the catalogue tests share: a small site catalogue, a plan around a chaos: block, and loading +
// validating a plan written to a file (catalogue paths are relative to the plan).
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner::testing {

inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A catalogue whose GPU cause fails about every 10 GPU-days and whose NIC cause every 20 NIC-days.
inline const char* const kSiteCatalogue = R"(name: site
source: a test site
causes:
  - {name: fell off the bus, rate: 0.1, class: gpu, injector: gpu_fail, xid: 79, repair: 1h}
  - {name: link, mtbf: 20d, class: nic, injector: link_down, repair: 30m}
)";

inline std::string ChaosPlan(const std::string& chaos) {
  return "name: c\nseed: 3\nduration: 2d\ncluster: {model: gb200-nvl72, racks: 1}\nchaos: " + chaos + "\n";
}

inline Result<RunSpec> ValidateAt(const std::filesystem::path& plan_path, const std::string& text) {
  WriteFile(plan_path, text);
  auto plan = LoadPlan(plan_path.string());
  if (!plan.ok()) return plan.status();
  return ValidatePlan(*plan, {});
}

inline std::map<std::string, int> CountByCause(const RunSpec& spec) {
  std::map<std::string, int> n;
  for (const auto& f : spec.faults) ++n[f.selector];
  return n;
}

}  // namespace rackchaos::runner::testing
