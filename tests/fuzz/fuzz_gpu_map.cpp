// libFuzzer target: any bytes through the --gpu-map parser. Never a crash; errors name fuzz.map:LINE:COL
// on one line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/incident/host_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto map = rackchaos::incident::ParseGpuMap(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.map");
  if (!map.ok()) {
    const std::string& m = map.status().message();
    if (m.rfind("fuzz.map:", 0) != 0 || m.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
