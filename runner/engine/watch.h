// Live safety while a run goes, simulated or real: abort conditions (`safety.abort`) on what the
// monitoring observes, and continuous gates on the metrics so far.
//
// Watch is an ObservationSink beside the healer: it sees heartbeats, temperature samples and the
// scheduler's job states, never causes, so the same conditions make sense for a real rack. The runner
// also tells it how many faults are applied. The first condition that trips is kept with its time and
// reason; the run loop stops after the step that tripped it, reverts every fault and finishes 'aborted'.
// Single-threaded: everything is called from the run's clock.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/observation.h"
#include "core/clock.h"
#include "healer/metrics.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// How often continuous gates are evaluated, in simulated time.
inline constexpr Duration kGateCheckPeriod = Duration::Minutes(1);

class Watch : public cluster::ObservationSink {
 public:
  explicit Watch(const RunSpec& spec) : spec_(spec) {}

  // The GPU temperature above which `spec`'s abort limits act (safety.abort.gpu_temperature, `>`);
  // +infinity without one. No other observation it reads is a GPU poll.
  static double GpuTemperatureLineC(const RunSpec& spec);

  // True when the plan has an abort condition (then subscribe the Watch to the backend).
  bool watches_observations() const { return spec_.abort.any(); }
  bool has_continuous_gates() const;

  void OnObservation(const cluster::Observation& obs) override;
  bool StopsRun() const override { return tripped(); }
  // After each fault applied or reverted, with how many are applied now.
  void OnFaultsActive(size_t active, Time now);
  // Evaluates the continuous gates every `period` on the metrics of `events` so far. `events` and
  // `jobs` must outlive the clock's timers.
  void ScheduleGateChecks(Clock& clock, const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs,
                          Duration period = kGateCheckPeriod);

  bool tripped() const { return !reason_.empty(); }
  // "at 1h02m: 16 GPUs offline (...), more than safety.abort.gpus_offline 8"; empty until tripped.
  const std::string& reason() const { return reason_; }
  // Records the trip as an `abort` action (both run pipelines call it before reverting) and logs it.
  void RecordAbort(EventSink& events, Time now) const;

 private:
  void Trip(Time at, const std::string& why);
  void CheckGates(Clock& clock, const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs,
                  Duration period);

  const RunSpec& spec_;
  std::set<ComponentId> dead_trays_;
  std::map<JobId, JobState> jobs_;  // jobs that have run at least once, by their last state
  std::string reason_;
};

}  // namespace rackchaos::runner
