// One run of a validated plan on the simulated cluster, recorded in the report store.
//
// Stages: open the store and record the run -> build the simulated cluster and the healer -> schedule
// every fault (apply at `at`, revert after `for`) -> run the virtual clock to the horizon -> revert what
// is still applied -> compute metrics from the recorded events -> evaluate the gates -> finish the run.
// Events are flushed to the store in batches while the run goes, so a crash loses little and the run
// row says 'running'. SIGINT/SIGTERM stop the clock, revert every applied fault and finish as
// 'interrupted' (exit 4).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "reports/live_metrics.h"
#include "runner/engine/progress.h"
#include "runner/plan/plan.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

struct RunOptions {
  std::string db_path = "rackchaos.db";
  std::string command_line;
  bool print_summary = true;
  // Behave as if SIGINT arrived when the simulated clock reaches this time (tests use it).
  std::optional<Time> interrupt_at;
  // Called every few thousand simulation steps with where the run is (the CLI's progress line); never
  // changes the run.
  std::function<void(const RunProgress&)> progress;
  // Called once when a stop (SIGINT/SIGTERM, the stop file) ends the clock, with the faults still applied,
  // before they are reverted and the report written: the CLI says so at once.
  std::function<void(int open_faults)> on_stop;
  // Live metrics (--metrics-listen; runner/engine/live_feed.h): fed the run's events and metrics, never
  // changes the run. Not owned; thread-safe, so a sweep's runs share one.
  reports::LiveMetrics* live = nullptr;
  // Simulated seconds per wall second (--pace; runner/engine/pacer.h); 0: as fast as it computes. A
  // paced run also stores its events each time it waits, so serve's live page sees them come.
  double pace = 0;
};

struct RunOutcome {
  ExitCode code = ExitCode::kPass;
  int64_t run_id = 0;
  std::string summary;             // the rendered terminal summary
  std::vector<GateResult> gates;
  std::string error;               // for kRuntimeError
};

RunOutcome ExecuteRun(const Plan& plan, const RunSpec& spec, const RunOptions& options);

// Installs SIGINT/SIGTERM handlers that ask a running ExecuteRun to stop. Idempotent.
void InstallStopHandlers();
// True once a stop was asked (by a signal or RequestStop).
bool StopRequested();
void RequestStop();

}  // namespace rackchaos::runner
