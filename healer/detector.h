// Detectors turn observations into symptoms. They read observations only (heartbeats, telemetry,
// kernel log lines, link state, step times, scheduler state), never the injection list, so detection
// delay is measured, not configured. Found through one explicit name -> factory table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "healer/policy.h"
#include "healer/xid.h"

namespace rackchaos::healer {

enum class SymptomClass { kHeartbeatLost, kXid, kLinkDown, kStraggler, kThermal, kFlowLow, kJobFailed, kPsuFailed, kLeak,
                          kSlowLink, kPartFailed, kClockLow };
const char* SymptomClassName(SymptomClass c);

struct Symptom {
  SymptomClass cls = SymptomClass::kXid;
  std::string detector;
  ComponentId component = kNoComponent;  // GPU, NIC, valve or tray; kNoComponent for job-level symptoms
  JobId job = kNoJob;
  std::string text;                      // "Xid 145 (NVLink error): reset GPU"
  XidAction action = XidAction::kNone;   // what the Xid catalogue recommends, for Xid symptoms
  int port = -1;                         // the NVLink port, for link symptoms on a GPU
};

struct DetectorContext {
  const cluster::Topology& topo;
  Clock& clock;
  const Policy& policy;
  std::function<void(Symptom)> raise;
  // The condition behind an earlier symptom of this class on this component has cleared (a link came
  // back up, flow returned). The healer drops it if it has not acted on it yet.
  std::function<void(SymptomClass, ComponentId)> clear;
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::string_view name() const = 0;
  virtual void OnObservation(const cluster::Observation& obs, DetectorContext& ctx) = 0;
  // The one kind of observation it reads (an ObservationBody index, see KindOf), or kAllKinds (the
  // default). The healer hands each detector only the observations of its kind, in table order: a
  // month of a fleet is two million observations, most of them telemetry samples that 4 of 11 detectors read.
  static constexpr size_t kAllKinds = SIZE_MAX;
  virtual size_t reads() const { return kAllKinds; }
  // Of telemetry samples, whether it reads those of `metric` under `policy` (default: all). The healer
  // hands a sample only to the detectors that read its metric: a GPU's poll is five samples, and most
  // detectors that read samples look at one metric each. A detector must do nothing with a sample
  // it says it does not read.
  virtual bool ReadsMetric(cluster::Metric, const Policy&) const { return true; }
  // The lowest GPU temperature (C) at which a GPU's poll may make it act, for a GPU that neither throttles,
  // nor sits at a power cap, nor is shut down: such a poll says nothing but how warm the GPU is. The
  // simulator stops polling a tray whose GPUs stay below every reader's line (Healer::GpuTemperatureLineC,
  // cluster::SimOptions::telemetry_interest_c), so a detector that acts on those polls below some line
  // must return it. The default: -infinity (every poll may matter) when it reads a GPU metric, +infinity
  // when it reads none.
  virtual double GpuTemperatureLineC(const Policy& policy) const;
};

// The ObservationBody index of T (cluster::TelemetrySample, ...), for Detector::reads.
template <typename T>
size_t KindOf() {
  return cluster::ObservationBody(std::in_place_type<T>).index();
}

struct DetectorInfo {
  std::string name;
  std::string summary;  // one line for `rackchaos list detectors`
  std::function<std::unique_ptr<Detector>()> make;
  std::string reads;     // for `rackchaos explain`: the observations it reads and when it raises a symptom
  std::string tuned_by;  // the policy keys that tune it ("" = none)
};
// The table, in a fixed order: heartbeat, xid, link_state, thermal, straggler, slow_link, job_failure, power,
// part_health, region_probe, clock.
const std::vector<DetectorInfo>& DetectorTable();

// The ranks a summarized step report does not list: how many, their median and MAD compute time.
struct RankSummary {
  int64_t ranks = 0;
  double median_s = 0, mad_s = 0;
};

// Straggler test on one step report, exposed for unit tests: indexes of the listed ranks whose compute
// time is a robust outlier (|x - median| / (1.4826 MAD) above `threshold` and at least `min_slowdown`
// slower, and slower by more than `min_excess_s`), median and MAD taken over the listed ranks and the
// summarized `bulk`. The slow_link detector runs the same test on the ranks' send times.
std::vector<size_t> RobustOutliers(const std::vector<float>& compute_s, double threshold, double min_slowdown,
                                   const RankSummary& bulk = {}, double min_excess_s = 0);
// The same test with each rank against the median and MAD of the other ranks (for small full reports,
// where one outlier of a handful moves the statistics it is judged by).
std::vector<size_t> LeaveOneOutOutliers(const std::vector<float>& x, double threshold, double min_slowdown,
                                        double min_excess_s);

}  // namespace rackchaos::healer
