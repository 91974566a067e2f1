// One GPU's telemetry as any GPU source reads it (nvidia-smi, dcgmi dmon, Prometheus over
// dcgm-exporter), and the one place that turns it into the simulator's TelemetrySamples:
//   temperature.gpu          -> Metric::kGpuTemperature (C)
//   power.draw               -> Metric::kGpuPower (W)
//   clocks.sm / clocks.max.sm -> Metric::kGpuClockFraction (the address's max_sm_mhz when the source has none)
//   clock event reasons      -> Metric::kThermalThrottle: 1 while HW or SW thermal slowdown is active
//                               Metric::kPowerCapped: 1 while the SW power cap or HW power brake is active
// power.limit has no Metric yet and is kept in the reading only. Every value a source could not give
// becomes an ObservationError naming the GPU and the field, never a sample. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

// One field of a reading: a number, or why there is none and what the tool printed instead.
struct Value {
  bool present = false;
  double number = 0;
  uint64_t bits = 0;  // exact, for bitmasks
  Problem problem = Problem::kMissing;
  std::string note;  // e.g. "[Not Supported]", "N/A", "NaN", "not in the output"

  static Value Number(double v);
  static Value Bits(uint64_t bits);
  static Value Absent(Problem problem, std::string note);
};

struct GpuReading {
  int index = -1;
  std::string pci;  // NormalizePci form or ""
  Value temperature_c, power_w, power_limit_w, sm_mhz, sm_max_mhz, reasons;
  Value xid;  // the last Xid DCGM holds (dcgmi XIDER, DCGM_FI_DEV_XID_ERRORS); absent for nvidia-smi
};

// The NVML clocks event reasons (nvmlClocksEventReasons, DCGM_CLOCKS_EVENT_REASON_*; the older
// "throttle reasons" names mean the same bits).
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClocks = 0x100;
inline constexpr uint64_t kKnownReasons = 0x1ff;

struct ClockEventReasons {
  bool gpu_idle = false, applications_clocks = false, sw_power_cap = false, hw_slowdown = false, sync_boost = false,
       sw_thermal = false, hw_thermal = false, hw_power_brake = false, display_clocks = false;
  uint64_t unknown = 0;  // bits outside kKnownReasons
  bool thermal() const { return sw_thermal || hw_thermal; }
  bool power() const { return sw_power_cap || hw_power_brake; }
};
ClockEventReasons DecodeClockEventReasons(uint64_t bits);
// "sw_power_cap,hw_thermal" (known bits, in bit order), "none" for 0; unknown bits as "0x200".
std::string DescribeClockEventReasons(uint64_t bits);

// Appends `reading`'s samples for `gpu` to `out`, and an error for each field it lacks (`fields`
// names them as the source does; an empty name is a field the source was not asked for, whose
// absence is no error). Without a maximum SM clock (the reading's or the address's) the clock
// fraction is reported missing under the max clock's name, or the SM clock's when that is empty.
struct FieldNames {
  std::string_view temperature, power, sm, sm_max, reasons;
};
void ToObservations(const GpuReading& reading, const GpuAddress& gpu, const std::string& host, Source source,
                    const FieldNames& fields, Observed& out);

}  // namespace rackchaos::observe
