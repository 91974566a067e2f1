// libFuzzer target: any bytes through the plan loader (YAML -> Plan values). The contract under test:
// no crash, no hang, no exception escaping; errors are one line naming fuzz.yaml:LINE:COL.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/plan/plan_loader.h"
#include "tests/fuzz/fuzz_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = rackchaos::runner::ParsePlan(text, "fuzz.yaml");
  if (!plan.ok()) {
    const std::string& m = plan.status().message();
    rackchaos::fuzz::CheckRefusal(m);
  }
  return 0;
}
