// libFuzzer target: any bytes through the healer policy loader (healer/policy.h). The contract under
// test: no crash, no hang, no exception escaping; errors are one line naming fuzz.yaml; a loaded policy
// holds no negative duration and no number that is not finite (PolicyBounds() has the ranges).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "healer/policy.h"
#include "tests/fuzz/fuzz_yaml.h"

namespace {

void CheckDuration(rackchaos::Duration d) {
  if (d.Seconds() < 0) std::abort();
}
void CheckNumber(double x) {
  if (!std::isfinite(x)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rh = rackchaos::healer;
  auto policy = rh::ParsePolicy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!policy.ok()) {
    const std::string& m = policy.status().message();
    rackchaos::fuzz::CheckRefusal(m);
    return 0;
  }
  const rh::Policy& p = *policy;
  for (auto d : {p.straggler_window, p.slow_link.window, p.slow_link.min_excess, p.correlation_window,
                 p.breaker_window, p.reboot_wait, p.recheck, p.burn_in})
    CheckDuration(d);
  for (const char* cls : {"gpu", "tray", "nic", "cooling", "switch_tray", "power", "rack"}) CheckDuration(p.repair.Of(cls));
  for (double x : {p.straggler_mad_threshold, p.straggler_min_slowdown, p.slow_link.mad_threshold,
                   p.slow_link.min_slowdown, p.thermal_temperature_c, p.thermal_flow_drop, p.breaker_max_share})
    CheckNumber(x);
  return 0;
}
