// `rackchaos history --rack SERIAL`: every stored run that touched a rack (or any component, by
// its serial), how each ended, the trend, and the lemons under it: components the healer isolated as
// really faulty (an isolation a fault explains; false isolations do not count) in several runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct RackRun {
  int64_t run = 0;
  std::string plan_name, started_wall, status;
  uint64_t seed = 0;
  int faults = 0;      // faults whose target is the component or under it
  int isolations = 0;  // isolations of the component or anything under it
  int unrecovered = 0;  // of those faults, how many never recovered
  std::optional<double> ttr_max_s;  // worst recovery among those faults (absent: none recovered)
};

struct RepeatOffender {
  std::string name, serial;
  std::vector<int64_t> runs;  // the runs that isolated it, ascending
};

struct RackHistory {
  std::string serial;
  std::vector<RackRun> runs;  // oldest first
  std::vector<RepeatOffender> offenders;  // lemons by serial (name when blank), most runs first
  int min_runs = 2;
};

// Runs whose components include one with this serial; faults and isolations counted over that
// component's subtree (components.parent_id). An unknown serial gives an empty history, not an error.
// Lemons are components isolated as really faulty in at least `min_runs` runs.
Result<RackHistory> ReadRackHistory(const ReportStore& store, const std::string& serial, int min_runs = 2);

// Every lemon of the database (isolated as really faulty in at least `min_runs` runs, matched by
// serial); with `run`, only those isolated in that run. Runs stored before schema version 6 add nothing.
Result<std::vector<RepeatOffender>> ReadLemons(const ReportStore& store, int min_runs,
                                               std::optional<int64_t> run = std::nullopt);
// "Lemons (...)" and one line per lemon; "" for none.
std::string RenderLemons(const std::vector<RepeatOffender>& lemons, int min_runs);

// Plain-text table of the runs, a trend line (verdicts oldest to newest and whether the worst TTR
// went up or down between the first and the last run with one) and the repeat offenders.
std::string RenderHistory(const RackHistory& history);

}  // namespace rackchaos::reports
