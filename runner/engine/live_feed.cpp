#include "runner/engine/live_feed.h"

#include <algorithm>

namespace rackchaos::runner {

LiveFeed::LiveFeed(reports::LiveMetrics* metrics, const char* backend) {
  if (metrics) run_ = metrics->StartRun(backend);
}

void LiveFeed::Record(const Event& event) {
  if (run_) run_->Record(event);
}

void LiveFeed::Tick(const std::vector<Event>& events, const cluster::Topology& topology,
                    const std::vector<healer::JobInfo>& jobs, Time now) {
  if (!run_) return;
  // Wall time decides only how often metrics are scored for the scrape, never anything the run stores.
  // A scoring costs time linear in the events so far: the next one waits ten times as long as this
  // one took, so a run of millions of events spends at most a tenth of its time here.
  const auto wall = std::chrono::steady_clock::now();
  if (wall < next_scoring_) return;
  run_->Scored(healer::ComputeMetrics(events, topology, jobs, now), false);
  const auto took = std::chrono::steady_clock::now() - wall;
  next_scoring_ = wall + std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), took * 10);
}

void LiveFeed::Finish(const char* status, const RunMetrics* metrics) {
  if (!run_) return;
  if (metrics) run_->Scored(*metrics, true);
  run_->Finish(status);
}

}  // namespace rackchaos::runner
