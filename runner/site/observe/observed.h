// What one poll of a real tool gave: the simulator's observation types, the devices the tool itself
// reported gone, and observation errors for everything it could not say.
//
// Missing data is an observation error, never a reading: a parser that cannot read a value (the tool
// printed [N/A], a row is garbled, a service answered 500, a sample is stale) leaves the value out of
// `observations` and says why in `errors`, naming the host, the source and, where known, the
// component. The healer therefore never reads missing data as healthy (a default value) or as failed.
// A GPU that fell off the bus or a driver that does not answer is not missing data: the tool said so,
// and it lands in `devices`. Plain values; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cluster/observation.h"
#include "core/ids.h"

namespace rackchaos::observe {

// Which tool an observation came from.
enum class Source { kNvidiaSmi, kNvlink, kDcgmi, kJournal, kRedfish, kPrometheus };
const char* SourceName(Source source);  // "nvidia-smi", "nvidia-smi nvlink", "dcgmi dmon", "journald", ...

// Why a value is not in `observations`.
enum class Problem {
  kMissing,       // the tool has no value: [N/A], N/A, NaN, a null Reading, no row or series at all
  kNotSupported,  // the tool says the device cannot report it: [Not Supported]
  kToolError,     // the tool answered with an error: [Unknown Error], a Redfish error body, status "error"
  kUnreadable,    // the text is not what the tool prints: a garbled line, a missing column, broken JSON
  kUnknownBits,   // a bitmask carries bits this parser does not know (the known ones are still used)
  kStale,         // the newest sample is older than the caller's limit
  kUnavailable,   // the tool or service did not answer: host engine down, HTTP 5xx, scrape target down
  kUnmapped,      // a row or series for a device the host map does not know
  kGap,           // a journal cursor no longer exists: lines logged in between may be lost
};
const char* ProblemName(Problem problem);  // "missing", "not_supported", ...

struct ObservationError {
  std::string host;
  Source source = Source::kNvidiaSmi;
  Problem problem = Problem::kMissing;
  ComponentId component = kNoComponent;  // the GPU, NIC, sensor's part or node, when known
  std::string what;                      // e.g. "GPU 3 (0000:3b:00) power.draw: [N/A]"
  // "<host>: <source>: <problem>: <what>", one line.
  std::string ToString() const;
};

// What a tool reported about a device itself (not a value of it).
enum class DeviceState {
  kGpuLost,     // "Unable to determine the device handle for GPU ...: GPU is lost"
  kDriverDown,  // "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", NVML init failed
};
const char* DeviceStateName(DeviceState state);  // "gpu_lost", "driver_down"

struct DeviceReport {
  std::string host;
  Source source = Source::kNvidiaSmi;
  ComponentId component = kNoComponent;  // the GPU (kGpuLost) or the node (kDriverDown)
  DeviceState state = DeviceState::kGpuLost;
  std::string detail;  // the tool's line
};

// The last Xid a GPU's DCGM counter holds (DCGM_FI_DEV_XID_ERRORS, dcgmi XIDER): a gauge, not an
// event. XidGauge (xid_gauge.h) turns a change of it into a kernel log line.
struct XidGaugeSample {
  std::string host;
  Source source = Source::kPrometheus;
  ComponentId gpu = kNoComponent;
  ComponentId node = kNoComponent;
  std::string pci;  // normalized "dddd:bb:dd", empty when unknown
  int code = 0;     // 0 = no Xid since the counter started
};

struct Observed {
  std::vector<cluster::ObservationBody> observations;
  std::vector<DeviceReport> devices;
  std::vector<XidGaugeSample> xid_gauges;
  std::vector<ObservationError> errors;

  void Append(Observed other);
  // Adds one observation, constructed in place (GCC 12 warns, wrongly, that a variant built from a
  // temporary and then moved may hold an uninitialized string).
  template <typename Body>
  void Add(Body body) {
    observations.emplace_back(std::in_place_type<Body>, std::move(body));
  }
  // Adds an error; returns it for the caller to fill in further.
  ObservationError& Error(const std::string& host, Source source, Problem problem, ComponentId component,
                          std::string what);
};

}  // namespace rackchaos::observe
