// libFuzzer target: any bytes as nvidia-smi --query-gpu output. Never a crash; every mapped GPU ends
// up with a sample, a device report or an error (nothing is silently read as healthy).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>
#include <variant>

#include "runner/site/observe/nvsmi_query.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  const ob::HostMap host = ob::fuzz::Tray();
  ob::Observed o = ob::ParseNvidiaSmiQuery(std::string_view(reinterpret_cast<const char*>(data), size), host);
  ob::fuzz::CheckErrors(o);
  std::set<rackchaos::ComponentId> told;
  for (const auto& b : o.observations)
    if (const auto* s = std::get_if<rackchaos::cluster::TelemetrySample>(&b)) told.insert(s->component);
  for (const auto& d : o.devices) told.insert(d.state == ob::DeviceState::kDriverDown ? 7 : d.component);
  for (const auto& e : o.errors) told.insert(e.component);
  bool driver_down = told.count(7);
  for (const auto& g : host.gpus)
    if (!told.count(g.gpu) && !driver_down) std::abort();
  return 0;
}
