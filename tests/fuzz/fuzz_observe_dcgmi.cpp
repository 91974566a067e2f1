// libFuzzer target: any bytes as dcgmi dmon output. Never a crash; errors name host and source.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/site/observe/dcgmi_dmon.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  ob::fuzz::CheckErrors(ob::ParseDcgmiDmon(std::string_view(reinterpret_cast<const char*>(data), size), ob::fuzz::Tray()));
  return 0;
}
