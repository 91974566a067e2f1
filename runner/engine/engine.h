// The engine: one function runs a validated plan on any backend and records it in the report store.
//
// Stages (RunPlan in engine.cpp reads as this list): open the report (the run row first) -> start the
// backend -> place the jobs, start the healer and the watch on the backend's observations -> run the
// fault timeline on the clock to the horizon, or until a stop or an abort -> stop the observation
// source and the jobs -> revert what is still applied, return the trays the healer holds -> score the
// recorded events against the plan's gates -> store the verdict -> shut the backend down.
//
// What differs between a simulated and a real run is the backend (cluster/backend.h: its lifecycle
// verbs and its fault-group lead), the clock (virtual or wall) and the recording sink's mode, all
// picked by the composition root: ExecuteRun (runner/engine/run.h) for the simulator, the CLI's real
// runs (runner/cli/real_run.h) for a site. The safety rules (runner/engine/fault_timeline.h, the
// watch), the stop rules and the verdict are the engine's, the same for both.
//
// Errors: once the run row exists, every failure ends the run as 'error' with its message, never
// 'running'. SIGINT/SIGTERM and the stop file stop the clock, revert every applied fault and finish the
// run as 'interrupted' (exit 4), naming which. The log clock is the run's for its duration only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/backend.h"
#include "core/clock.h"
#include "core/exit_code.h"
#include "reports/live_metrics.h"
#include "runner/engine/progress.h"
#include "runner/engine/recording_sink.h"
#include "runner/engine/watch.h"
#include "runner/plan/plan.h"
#include "runner/spec/expect.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

struct RunOptions {
  std::string db_path = "rackchaos.db";
  std::string command_line;
  bool print_summary = true;
  // Behave as if SIGINT arrived when the clock reaches this time (tests use it).
  std::optional<Time> interrupt_at;
  // Called every few thousand timers with where the run is (the CLI's progress line); never changes
  // the run.
  std::function<void(const RunProgress&)> progress;
  // Called once when a stop (SIGINT/SIGTERM, the stop file) ends the clock, with the faults still
  // applied, before they are reverted and the report written: the CLI says so at once.
  std::function<void(int open_faults)> on_stop;
  // Live metrics (--metrics-listen; runner/engine/live_feed.h): fed every event the run records, the
  // metrics so far and the final ones, on any backend; never changes the run. Not owned; thread-safe,
  // so a sweep's runs share one.
  reports::LiveMetrics* live = nullptr;
  // Simulated seconds per wall second (--pace; runner/engine/pacer.h); 0: as fast as it computes. A
  // paced run also stores its events each time it waits, so serve's live page sees them come. For a
  // clock that does not wait (the simulator's) only: a real run keeps the wall clock, so its
  // composition root (runner/cli/real_run.h) has no pace to pass and the CLI refuses --pace for it.
  double pace = 0;
  // Sinks that see the backend's observations after the healer and the watch (a bench counts the
  // telemetry samples and step reports a run produced); they must only look, so the run stays the same.
  // Not owned; subscribed when the backend observes.
  std::vector<cluster::ObservationSink*> observers;
  // A real run's fault ledger and its run there (SshBackend::LedgerOfRun, LedgerRun), stored in its report
  // row so that `rackchaos recover` finds the row of a run killed before the ledger learned its id.
  std::string ledger;
  int64_t ledger_run = 0;
  // How long the run's report connection waits for another connection's write lock (reports/store.h's
  // default when unset). A sweep's workers store into one file at once; its runs wait longer (sweep.cpp).
  std::optional<int> busy_timeout_ms;
};

struct RunOutcome {
  ExitCode code = ExitCode::kPass;
  int64_t run_id = 0;   // 0 when no run row could be written
  std::string summary;  // the rendered terminal summary; empty after an engine error
  std::vector<GateResult> gates;
  std::string error;  // for kRuntimeError
};

// What a run goes through, picked by the composition root. The backend records into `events`, and
// both run on `clock`.
struct Rig {
  cluster::Backend& backend;
  Clock& clock;
  RecordingSink& events;
  // When the run ends: the spec's horizon (a simulated run: an hour past the last fault), or the
  // composition root's (a real run ends with its last fault).
  std::optional<Time> horizon;
  // How often continuous gates are evaluated (a site: its observe period).
  Duration gate_period = kGateCheckPeriod;
  // Every backend.SerialOf is empty (the simulator): the component rows depend on the topology and the
  // serial prefix alone, so their digest is computed once per shared topology (RunSpec::topology).
  bool serials_derived = false;
};

RunOutcome RunPlan(const Plan& plan, const RunSpec& spec, const Rig& rig, const RunOptions& options);

// Installs SIGINT/SIGTERM handlers that ask a running RunPlan to stop. Idempotent.
void InstallStopHandlers();
// True once a stop was asked (by a signal or RequestStop).
bool StopRequested();
void RequestStop();

}  // namespace rackchaos::runner
