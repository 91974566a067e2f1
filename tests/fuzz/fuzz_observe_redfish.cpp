// libFuzzer target: any bytes as a Redfish body (and as a JSON document). Never a crash; every point
// ends up read or in an error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/site/observe/json.h"
#include "runner/site/observe/redfish_sensors.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  using rackchaos::cluster::Metric;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)ob::ParseJson(body);
  const std::vector<ob::RedfishPoint> points{{"/redfish/v1/Chassis/1U/Sensors/CPU1Temp", 1, Metric::kGpuTemperature},
                                             {"/redfish/v1/Chassis/CDU/Sensors/SecondaryFlow", 2, Metric::kCoolantFlow},
                                             {"/redfish/v1/Chassis/CDU/LeakDetectors/Moisture", 3, Metric::kLeak},
                                             {"/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/Bay1", 4, Metric::kPsuOk}};
  for (int status : {200, 500}) {
    ob::Observed o = ob::ParseRedfish(status, body, "bmc07", points);
    ob::fuzz::CheckErrors(o);
    if (o.observations.size() + o.errors.size() < points.size()) std::abort();
  }
  return 0;
}
