#include "runner/site/observe/observed.h"

#include <iterator>
#include <utility>

namespace rackchaos::observe {

const char* SourceName(Source source) {
  switch (source) {
    case Source::kNvidiaSmi: return "nvidia-smi";
    case Source::kNvlink: return "nvidia-smi nvlink";
    case Source::kDcgmi: return "dcgmi dmon";
    case Source::kJournal: return "journald";
    case Source::kRedfish: return "redfish";
    case Source::kPrometheus: return "prometheus";
  }
  return "unknown";
}

const char* ProblemName(Problem problem) {
  switch (problem) {
    case Problem::kMissing: return "missing";
    case Problem::kNotSupported: return "not_supported";
    case Problem::kToolError: return "tool_error";
    case Problem::kUnreadable: return "unreadable";
    case Problem::kUnknownBits: return "unknown_bits";
    case Problem::kStale: return "stale";
    case Problem::kUnavailable: return "unavailable";
    case Problem::kUnmapped: return "unmapped";
    case Problem::kGap: return "gap";
  }
  return "unknown";
}

const char* DeviceStateName(DeviceState state) {
  return state == DeviceState::kGpuLost ? "gpu_lost" : "driver_down";
}

std::string ObservationError::ToString() const {
  return (host.empty() ? std::string("?") : host) + ": " + SourceName(source) + ": " + ProblemName(problem) + ": " +
         what;
}

void Observed::Append(Observed other) {
  auto move_all = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  move_all(observations, other.observations);
  move_all(devices, other.devices);
  move_all(xid_gauges, other.xid_gauges);
  move_all(errors, other.errors);
}

ObservationError& Observed::Error(const std::string& host, Source source, Problem problem, ComponentId component,
                                  std::string what) {
  errors.push_back({host, source, problem, component, std::move(what)});
  return errors.back();
}

}  // namespace rackchaos::observe
