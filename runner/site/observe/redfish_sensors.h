// Redfish answers from a BMC or CDU controller -> telemetry: temperatures, coolant flow, leak
// detectors, PSU and pump health.
//
// The site names each point it wants by its Redfish URI and says what it is (RedfishPoint). One GET
// (a Sensor, a SensorCollection with $expand, ThermalSubsystem/ThermalMetrics, LeakDetection,
// LeakDetector, PowerSupply, PowerSupplies with $expand, a CoolantConnector ...) may hold several
// points: every object of the body whose "@odata.id" or "DataSourceUri" names a point is read, so
// an expanded collection and the excerpts in ThermalMetrics or LeakDetection work alike.
//   temperature (GPU, switch tray) "Reading" in "Cel"          -> kGpuTemperature / kSwitchTemperature
//   coolant flow                   "Reading" in "L/min"        -> kCoolantFlow (L/min)
//   leak detector                  "DetectorState" OK / Warning / Critical -> kLeak 0 / 1 / 1
//   PSU, pump                      Status.Health OK, Warning / Critical -> kPsuOk, kPartOk 1 / 0
//                                  (Status.State Disabled or UnavailableOffline: not delivering -> 0)
// A null Reading, a State of Absent, StandbyOffline or UnavailableOffline (sensors), a point the
// body does not hold: kMissing. Units other than the expected: kUnreadable. An HTTP status other than
// 200 is kUnavailable (5xx) or kToolError (4xx), with the Redfish error's code and message when the
// body has one; an "error" object inside a 200 body is kToolError and the rest is still read.
// Never throws; linear in the body.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/observation.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

struct RedfishPoint {
  std::string uri;  // "/redfish/v1/Chassis/1U/Sensors/CPU1Temp"
  ComponentId component = kNoComponent;
  cluster::Metric metric = cluster::Metric::kGpuTemperature;  // one of the metrics above
};

// `points`: those this request should answer. `bmc`: the BMC's inventory name, for errors.
Observed ParseRedfish(int http_status, std::string_view body, const std::string& bmc,
                      const std::vector<RedfishPoint>& points);

}  // namespace rackchaos::observe
