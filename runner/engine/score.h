// The stages a run ends with (runner/engine/engine.h), on any backend: metrics from the recorded
// events, stored; every gate evaluated and stored; then one verdict from how the run stopped and what
// the gates said.
#pragma once

#include <string>
#include <vector>

#include "core/event.h"
#include "healer/metrics.h"
#include "reports/store.h"
#include "core/exit_code.h"
#include "runner/spec/expect.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

Result<std::string> ScoreRun(reports::ReportStore& store, int64_t run, const RunSpec& spec,
                             const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs, Time end,
                             std::vector<GateResult>& gates);

// How a run ended, as the engine saw it.
struct RunEnd {
  std::string error;          // non-empty: the engine could not do its job (store, backend start-up, jobs)
  bool interrupted = false;   // a signal or the stop file
  std::string stop_reason;    // "interrupted by signal", "stop file ..."
  std::string host_error;     // non-empty: a fault could not be applied or reverted
  bool aborted = false;       // safety.abort or a continuous gate tripped
  std::string abort_reason;
  std::string failed_gate;    // ScoreRun's answer: the first failing gate, "" when all hold
};

struct RunVerdict {
  const char* status;  // the runs.status column: interrupted, error, aborted, failed, passed
  ExitCode code;
  std::string reason;  // stored beside the status; "" for a pass
};

// The one place a run's status and exit code are picked. An engine error beats interrupted beats a
// host error beats aborted beats failed: the first says the report itself is incomplete, the second
// that the run is, the third that the hosts may need `rackchaos recover`, the fourth why the run
// stopped early.
RunVerdict Verdict(const RunEnd& end);

}  // namespace rackchaos::runner
