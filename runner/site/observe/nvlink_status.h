// `nvidia-smi nvlink -s` (port state) and `nvidia-smi nvlink -e` (error counters) from one tray host.
//
// -s prints a block per GPU ("GPU 0: NVIDIA GB200 (UUID: GPU-...)") with a line per port:
// "Link 3: 53.125 GB/s" is up, "Link 3: <inactive>" is down. Each port becomes a LinkStateChange
// (the GPU, the port, up or not) as the state read now; the monitor publishes the ones that changed.
// Whole-GPU lines:
//   "NVML: Unable to retrieve Nvlink information as all links are inActive"
//        -> every port down when the host's model has NVLink (HostMap::nvlink_ports), nothing otherwise
//   "Device does not have or support Nvlink" -> kToolError when the model has NVLink
//   "Nvlink queries are not supported for Devices in MIG mode" -> kNotSupported
// A GPU block maps by its index (nvlink -s prints no bus id); a known GPU without a block, and a
// block without some of the model's ports, are kMissing. Any other line is kUnreadable.
//
// -e prints "Link N: Replay Errors: 0" / "Recovery Errors" / "CRC Errors" lines per GPU: counters,
// returned as values (cluster/observation.h has no counter type yet). Never throws; linear.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

Observed ParseNvlinkStatus(std::string_view output, const HostMap& host);

struct NvlinkPortCounters {
  ComponentId gpu = kNoComponent;
  int port = -1;
  int64_t replay = -1, recovery = -1, crc = -1;  // -1 = not printed
};

struct NvlinkCounters {
  std::vector<NvlinkPortCounters> ports;
  std::vector<ObservationError> errors;
};

NvlinkCounters ParseNvlinkErrors(std::string_view output, const HostMap& host);

}  // namespace rackchaos::observe
