// nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] from one tray host -> telemetry.
//
// The columns are the header's when the output has one (units in brackets dropped, e.g.
// "power.draw [W]"), else `fields` (what the command asked for, comma-separated). Aliases are one
// column: clocks.sm = clocks.current.sm, gpu_bus_id = pci.bus_id, clocks_throttle_reasons.active =
// clocks_event_reasons.active (the pre-535 name). Cells with units ("612.50 W", "1980 MHz") are
// read as well as bare numbers. A row is mapped to its GPU by pci.bus_id, else index.
//
// The tool's own words are observations, not parse failures:
//   "[N/A]" / "N/A"                      -> ObservationError kMissing for that field
//   "[Not Supported]"                    -> kNotSupported
//   "[Unknown Error]", any other "[...]" -> kToolError
//   "Unable to determine the device handle for GPU<pci>: GPU is lost. ..." -> DeviceReport kGpuLost
//   "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver..." and
//   "Failed to initialize NVML: ..."     -> DeviceReport kDriverDown for the node
// A garbled row (wrong cell count, no index and no bus id) is kUnreadable; a row for a GPU the map
// does not know is kUnmapped; every mapped GPU with no row at all gets a kMissing error (or is
// covered by its kGpuLost report, or by the host's kDriverDown). Never throws; linear in the input.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

// The query rackchaos runs (`nvidia-smi --query-gpu=<this> --format=csv,noheader,nounits`).
inline constexpr std::string_view kNvsmiQueryFields =
    "index,pci.bus_id,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks_event_reasons.active";

Observed ParseNvidiaSmiQuery(std::string_view output, const HostMap& host,
                             std::string_view fields = kNvsmiQueryFields);

// A line in which nvidia-smi reports a device or the driver instead of printing values.
struct NvsmiNotice {
  DeviceState state = DeviceState::kGpuLost;
  bool lost = false;  // kGpuLost only when the reason says "GPU is lost"; other handle errors are tool errors
  std::string pci;    // NormalizePci form, for the device handle lines
  std::string reason;  // e.g. "GPU is lost. Reboot the system to recover this GPU", "Unknown Error"
};
std::optional<NvsmiNotice> MatchNvsmiNotice(std::string_view line);

}  // namespace rackchaos::observe
