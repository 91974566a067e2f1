// A run's feed into live metrics (`--metrics-listen` of run and sweep; reports/live_metrics.h): every
// event as it is recorded, the times to detect and isolate as soon as a scoring of the events so far
// attributes them (at most once a second of wall time), and the final metrics. It only reads: the run
// computes and stores exactly what it would without it.
//
// A feed built with no registry does nothing (each call is one branch). Not thread-safe: it belongs to
// the run's thread (the registry it feeds is thread-safe).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "cluster/topology.h"
#include "core/event.h"
#include "healer/metrics.h"
#include "reports/live_metrics.h"

namespace rackchaos::runner {

class LiveFeed : public EventSink {
 public:
  // `metrics` may be null; `backend` is "sim" or "ssh".
  LiveFeed(reports::LiveMetrics* metrics, const char* backend);

  bool on() const { return run_ != nullptr; }
  void Record(const Event& event) override;
  // Scores `events` so far, at most once a second of wall time (less often when scoring is slow).
  void Tick(const std::vector<Event>& events, const cluster::Topology& topology,
            const std::vector<healer::JobInfo>& jobs, Time now);
  // The run ended with `status` (runs.status) and, when it was scored, these metrics.
  void Finish(const char* status, const RunMetrics* metrics);

 private:
  std::unique_ptr<reports::LiveMetrics::Run> run_;
  std::chrono::steady_clock::time_point next_scoring_{};
};

}  // namespace rackchaos::runner
