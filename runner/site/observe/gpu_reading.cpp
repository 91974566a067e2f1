#include "runner/site/observe/gpu_reading.h"

#include <cstdio>
#include <utility>

namespace rackchaos::observe {

Value Value::Number(double v) {
  Value out;
  out.present = true;
  out.number = v;
  return out;
}

Value Value::Bits(uint64_t bits) {
  Value out = Number(static_cast<double>(bits));
  out.bits = bits;
  return out;
}

Value Value::Absent(Problem problem, std::string note) {
  Value out;
  out.problem = problem;
  out.note = std::move(note);
  return out;
}

ClockEventReasons DecodeClockEventReasons(uint64_t bits) {
  ClockEventReasons r;
  r.gpu_idle = bits & kReasonGpuIdle;
  r.applications_clocks = bits & kReasonApplicationsClocks;
  r.sw_power_cap = bits & kReasonSwPowerCap;
  r.hw_slowdown = bits & kReasonHwSlowdown;
  r.sync_boost = bits & kReasonSyncBoost;
  r.sw_thermal = bits & kReasonSwThermal;
  r.hw_thermal = bits & kReasonHwThermal;
  r.hw_power_brake = bits & kReasonHwPowerBrake;
  r.display_clocks = bits & kReasonDisplayClocks;
  r.unknown = bits & ~kKnownReasons;
  return r;
}

std::string DescribeClockEventReasons(uint64_t bits) {
  static const char* const kNames[] = {"gpu_idle",   "applications_clocks", "sw_power_cap",
                                       "hw_slowdown", "sync_boost",          "sw_thermal",
                                       "hw_thermal",  "hw_power_brake",      "display_clocks"};
  std::string out;
  for (int bit = 0; bit < 9; ++bit) {
    if (!(bits & (uint64_t{1} << bit))) continue;
    if (!out.empty()) out += ',';
    out += kNames[bit];
  }
  if (uint64_t unknown = bits & ~kKnownReasons) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(unknown));
    if (!out.empty()) out += ',';
    out += buf;
  }
  return out.empty() ? "none" : out;
}

namespace {

void Missing(const Value& v, std::string_view field, const GpuReading& r, const GpuAddress& gpu,
             const std::string& host, Source source, Observed& out) {
  if (field.empty()) return;  // a field the source was not asked for
  out.Error(host, source, v.problem, gpu.gpu,
            HostMap::Describe(r.index >= 0 ? r.index : gpu.index, r.pci.empty() ? gpu.pci : r.pci) + " " +
                std::string(field) + ": " + (v.note.empty() ? "no value" : v.note));
}

}  // namespace

void ToObservations(const GpuReading& r, const GpuAddress& gpu, const std::string& host, Source source,
                    const FieldNames& fields, Observed& out) {
  using cluster::Metric;
  using cluster::TelemetrySample;
  auto sample = [&](Metric m, double v) { out.Add(TelemetrySample{gpu.gpu, m, v}); };
  if (r.temperature_c.present)
    sample(Metric::kGpuTemperature, r.temperature_c.number);
  else
    Missing(r.temperature_c, fields.temperature, r, gpu, host, source, out);
  if (r.power_w.present)
    sample(Metric::kGpuPower, r.power_w.number);
  else
    Missing(r.power_w, fields.power, r, gpu, host, source, out);
  // The fraction needs both clocks; the site's nominal maximum stands in for a source without one
  // (dcgm-exporter's default counters export no maximum).
  double max = r.sm_max_mhz.present ? r.sm_max_mhz.number : gpu.max_sm_mhz;
  if (!r.sm_mhz.present) {
    Missing(r.sm_mhz, fields.sm, r, gpu, host, source, out);
  } else if (max > 0) {
    sample(Metric::kGpuClockFraction, r.sm_mhz.number / max);
  } else {
    Value why = r.sm_max_mhz;
    if (why.note.empty()) why.note = "no value";
    why.note += " (clock fraction unknown: no maximum SM clock)";
    Missing(why, fields.sm_max.empty() ? fields.sm : fields.sm_max, r, gpu, host, source, out);
  }
  if (!r.reasons.present) {
    Missing(r.reasons, fields.reasons, r, gpu, host, source, out);
    return;
  }
  ClockEventReasons reasons = DecodeClockEventReasons(r.reasons.bits);
  // The known bits still say whether heat or the power limit slows the GPU; the unknown ones are
  // reported, not guessed.
  sample(Metric::kThermalThrottle, reasons.thermal() ? 1.0 : 0.0);
  sample(Metric::kPowerCapped, reasons.power() ? 1.0 : 0.0);
  if (reasons.unknown) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%016llx has unknown bits 0x%llx",
                  static_cast<unsigned long long>(r.reasons.bits), static_cast<unsigned long long>(reasons.unknown));
    out.Error(host, source, Problem::kUnknownBits, gpu.gpu,
              HostMap::Describe(r.index >= 0 ? r.index : gpu.index, r.pci.empty() ? gpu.pci : r.pci) + " " +
                  std::string(fields.reasons) + ": " + buf);
  }
}

}  // namespace rackchaos::observe
