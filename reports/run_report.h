// Everything a renderer shows about one run, read from the store in one call. Renderers take a
// RunReport (never live objects), so every format shows the same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct RunReport {
  RunRow run;
  std::vector<ComponentRow> components;
  std::vector<JobRow> jobs;
  RunMetrics metrics;
  std::vector<GateRow> gates;  // empty when the run stored none (or predates schema v2)
  int64_t events = 0;          // number of stored events
  std::vector<ActionRow> spare_rack_moves;  // jobs moved to spare racks (cluster.spares), in time order
};

// Reads run `run`: kNotFound for an unknown run, otherwise the store's errors.
Result<RunReport> LoadRunReport(const ReportStore& store, int64_t run);

// The job with id `id` in `report.jobs`, or nullptr.
const JobRow* FindJob(const RunReport& report, JobId id);
// The impacts of fault `fault`, in stored order.
std::vector<JobImpact> ImpactsOf(const RunMetrics& metrics, FaultId fault);
// Counts of gates that failed, and of faults with no time to recover.
int FailedGates(const RunReport& report);
int UnrecoveredFaults(const RunReport& report);

}  // namespace rackchaos::reports
