// libFuzzer target: any bytes as a Prometheus /api/v1/query answer. Never a crash; errors name a host.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/site/observe/prometheus_query.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  ob::PromQuery q;
  q.server = "prom1";
  q.now_s = 1796158716;
  ob::fuzz::CheckErrors(ob::ParsePrometheusQuery(std::string_view(reinterpret_cast<const char*>(data), size),
                                                 {ob::fuzz::Tray()}, q));
  return 0;
}
