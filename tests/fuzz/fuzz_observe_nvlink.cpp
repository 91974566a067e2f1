// libFuzzer target: any bytes as nvidia-smi nvlink -s and -e output. Never a crash; ports stay in range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "runner/site/observe/nvlink_status.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ob::Observed o = ob::ParseNvlinkStatus(text, ob::fuzz::Tray());
  ob::fuzz::CheckErrors(o);
  for (const auto& b : o.observations)
    if (const auto* l = std::get_if<rackchaos::cluster::LinkStateChange>(&b); l && (l->port < 0 || l->port > 0xffff))
      std::abort();
  ob::NvlinkCounters c = ob::ParseNvlinkErrors(text, ob::fuzz::Tray());
  for (const auto& e : c.errors)
    if (e.host.empty()) std::abort();
  return 0;
}
