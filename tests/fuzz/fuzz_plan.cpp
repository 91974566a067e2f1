// libFuzzer target: any bytes through the plan loader (YAML -> Plan values). The contract under test:
// no crash, no hang, no exception escaping; errors are one line naming fuzz.yaml:LINE:COL.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/plan/plan_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = rackchaos::runner::ParsePlan(text, "fuzz.yaml");
  if (!plan.ok()) {
    const std::string& m = plan.status().message();
    if (m.find('\n') != std::string::npos) std::abort();  // errors stay one line
    if (m.rfind("fuzz.yaml", 0) != 0) std::abort();       // and name the file
  }
  return 0;
}
