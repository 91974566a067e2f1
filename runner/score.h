// The stage both run pipelines (simulated and real) end with: metrics from the recorded events, stored;
// every gate evaluated and stored. Returns the first failing gate's message ("" when all hold).
#pragma once

#include <string>
#include <vector>

#include "core/event.h"
#include "healer/metrics.h"
#include "reports/store.h"
#include "runner/expect.h"
#include "runner/validate.h"

namespace rackchaos::runner {

Result<std::string> ScoreRun(reports::ReportStore& store, int64_t run, const RunSpec& spec,
                             const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs, Time end,
                             std::vector<GateResult>& gates);

}  // namespace rackchaos::runner
