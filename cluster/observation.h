// What the healer can see: symptoms as a real site's telemetry would deliver them, never causes.
//
// The simulator produces these when something changes, delivered at the time the real poll period,
// heartbeat period or log shipping delay would make them visible (poll phases come from the seeded
// generator), instead of one sample per GPU per period. The SSH backend produces the same types from
// real commands.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/units.h"

namespace rackchaos::cluster {

// A node's heartbeats stopped (first missed beat) or resumed.
struct HeartbeatChange {
  ComponentId node = kNoComponent;  // compute tray
  bool alive = true;
  Time last_seen{};
  Duration period{};
};

enum class Metric { kGpuTemperature, kGpuPower, kGpuClockFraction, kThermalThrottle, kCoolantFlow, kPsuOk, kLeak, kPartOk,
                    kProbeOk, kSwitchTemperature, kPowerCapped };
inline constexpr size_t kMetricCount = static_cast<size_t>(Metric::kPowerCapped) + 1;
const char* MetricName(Metric m);
// Whether a GPU's own poll reports it (temperature, power, SM clock, thermal slowdown, power-cap event), as
// opposed to a valve's, a shelf's, a part's, a region's or a switch tray's. Every metric is classified in
// one switch: a new one that is not fails to compile (-Wswitch).
bool IsGpuMetric(Metric m);

// One polled telemetry value (DCGM-like): temperature in C, power in W, clock as a fraction of max,
// throttle as 0/1 (HW thermal slowdown bit), flow in L/min for a tray's valve, a PSU's health as 1 (OK)
// or 0 (failed, as the shelf's BMC reports it), a tray zone's leak sensor as 1 (wet) or 0 (dry), a part's
// health as 1 (OK) or 0 (failed) for a CDU pump (the CDU's controller), a DPU (its BMC) or a spine switch
// (the fabric manager), and a region's health probe as 1 (OK) or 0 (failing) for the region itself, its
// object store (read throughput below its service level counts as failing) and its checkpoint store, and
// an NVLink switch tray's temperature in C (its management controller, as NVOS/NMX exports it), and a
// GPU's power-cap clock event as 1 (the SW power cap or HW power brake reason active: its power limit
// holds the clock down) or 0.
struct TelemetrySample {
  ComponentId component = kNoComponent;
  Metric metric = Metric::kGpuTemperature;
  double value = 0;
};

// A kernel log line from a node, as the driver prints it (parse it with healer/xid.h).
struct KernelLogLine {
  ComponentId node = kNoComponent;
  std::string line;
};

// A link's state as counters or `nvidia-smi nvlink -s` show it. port >= 0 for NVLink ports of a GPU.
struct LinkStateChange {
  ComponentId component = kNoComponent;  // GPU (NVLink port) or NIC
  int port = -1;
  bool up = true;
};

// Per-step timings a job reports (per rank compute time; the rest of a step is waiting in collectives).
// A full report lists every rank. A summarized one, as a job's profiler aggregates it at scale, lists
// only the ranks off the bulk and summarizes the other `bulk_ranks` by the median and the median
// absolute deviation of their compute times; the straggler test reads both forms alike.
// A job that also measures its ranks' communication (each rank's time to send its own share of a
// collective, as NCCL's proxy or the rig's ranks time it) fills `comm_s` parallel to `rank_gpus`, and
// the bulk's median and MAD of it; empty when the job does not measure it. A rank behind a slow link
// sends slowly, while the ranks waiting for it only see longer steps.
struct StepReport {
  JobId job = kNoJob;
  double step_time_s = 0;
  std::vector<ComponentId> rank_gpus;
  std::vector<float> compute_s;  // parallel to rank_gpus
  int64_t bulk_ranks = 0;        // ranks not listed; 0 in a full report
  double bulk_median_s = 0, bulk_mad_s = 0;
  std::vector<float> comm_s{};  // parallel to rank_gpus, or empty
  double bulk_comm_median_s = 0, bulk_comm_mad_s = 0;
};

// The scheduler's view of a job (squeue/sacct): its state and where it runs.
struct JobStatus {
  JobId job = kNoJob;
  JobState state = JobState::kQueued;
  TrayList trays;      // shared with the job's events: O(1) to pass on
  std::string reason;  // e.g. "NCCL watchdog timeout" when it failed
};

// The result of a diagnostic the healer asked for (dcgmi diag -r 2 on a tray).
struct DiagnosticResult {
  ComponentId tray = kNoComponent;
  bool passed = false;
  std::string detail;
  bool gpus_off_bus = false;  // it failed because a GPU is not on the bus (a reboot may bring it back)
};

using ObservationBody = std::variant<HeartbeatChange, TelemetrySample, KernelLogLine, LinkStateChange,
                                     StepReport, JobStatus, DiagnosticResult>;

struct Observation {
  Time at{};
  ObservationBody body;
};

class ObservationSink {
 public:
  virtual ~ObservationSink() = default;
  virtual void OnObservation(const Observation& obs) = 0;
  // True once this sink has stopped the run (the safety watch, once an abort condition tripped). The
  // run loop stops after the timer that did it; a backend that delivers several observations from one
  // timer stops there too, so every sink sees what it would have seen with a timer per observation.
  virtual bool StopsRun() const { return false; }
};

}  // namespace rackchaos::cluster
