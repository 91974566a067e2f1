// libFuzzer target: any bytes through the plan loader and then, when it loads, plan validation
// (runner/spec/validate.h: the model, topology, jobs, faults and their selectors, chaos drawn from the
// catalogue, the healer policy, gates, safety). The contract under test: no crash, no hang, no exception
// escaping; errors are one line naming fuzz.yaml. Plans that name a file (a site inventory, a catalogue
// or policy file) are only loaded: what validation would read depends on the working directory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cluster/failure_catalogue.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"
#include "tests/fuzz/fuzz_yaml.h"

namespace {

void CheckError(const rackchaos::Status& s) {
  const std::string& m = s.message();
  rackchaos::fuzz::CheckRefusal(m);
}

bool NamesAFile(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rr = rackchaos::runner;
  auto plan = rr::ParsePlan(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!plan.ok()) {
    CheckError(plan.status());
    return 0;
  }
  if (!plan->cluster.inventory.empty() || NamesAFile(plan->chaos.catalogue) || NamesAFile(plan->healer.policy)) return 0;
  auto spec = rr::ValidatePlan(*plan, {});
  if (!spec.ok()) CheckError(spec.status());
  return 0;
}
