// `rackchaos history --rack SERIAL`: every stored run that touched a rack (or any component, by
// its serial), how each ended, the trend of each plan (runs of one plan, by plan hash, are compared
// only with each other), the rack's qualification records and the lemons under it (reports/lemons.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/lemons.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct RackRun {
  int64_t run = 0;
  std::string plan_name, started_wall, status;
  std::string plan_hash;  // runs with the same hash ran the same plan text
  uint64_t seed = 0;
  int faults = 0;      // faults whose target is the component or under it
  int isolations = 0;  // isolations of the component or anything under it
  int unrecovered = 0;  // of those faults, how many never recovered
  std::optional<double> ttr_max_s;  // worst recovery among those faults (absent: none recovered)
};

// One `rackchaos qualify --rack SERIAL` of the rack (tables qualifications, qualification_plans).
struct QualificationRecord {
  int64_t id = 0;
  std::string suite, started_wall, verdict, reason;
  int plans = 0, passed = 0;
  std::string ran_on;  // "simulator", "site", "simulator and site", or "-" when no plan ran
};

struct RackHistory {
  std::string serial;
  std::vector<RackRun> runs;  // oldest first
  std::vector<QualificationRecord> qualifications;  // oldest first
  std::vector<RepeatOffender> offenders;  // lemons by serial (name when blank), most runs first
  bool real_runs = false;                 // whether any run was on real racks (only those make lemons)
  int min_runs = 2;
};

// Runs whose components include one with this serial; faults and isolations counted over that
// component's subtree (components.parent_id). Qualification records whose rack is this serial. An
// unknown serial gives an empty history, not an error. Lemons under it: reports/lemons.h.
Result<RackHistory> ReadRackHistory(const ReportStore& store, const std::string& serial, int min_runs = 2);

// Plain-text table of the runs; the trend of each plan (verdicts oldest to newest and whether the worst
// TTR went up or down between the plan's first and last run with one: runs of different plans are never
// compared); the qualification records; the lemons. Stored strings go through TerminalText.
std::string RenderHistory(const RackHistory& history);

}  // namespace rackchaos::reports
