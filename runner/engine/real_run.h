// Real mode: a validated plan whose cluster names a site inventory, run on real hosts over SSH on the
// wall clock, into the same report store as simulated runs (backend "ssh").
//
// Stages: recover what earlier runs left open in the fault ledger -> record the run -> open and
// host-key-check every SSH session the faults need (nothing is applied if one fails) -> check the
// fault hosts' clocks and bash (runner/site/clock_check.h) -> schedule the faults on a WallClock, armed
// ahead of `at` and landed together at `at` (runner/engine/real_timeline.h), reverted after `for` -> wait until the end -> revert what is
// still applied -> metrics, gates, verdict. Every apply is in the ledger before it runs and carries a
// host-side expiry when it has a duration. SIGINT/SIGTERM (runner/engine/run.h: StopRequested) revert
// everything and finish the run as 'interrupted' (exit 4). A failed host fails only its own faults
// (recorded as ActionTaken events with ok = false).
//
// When the inventory has a `healer:` section the healer runs too: an SshMonitor turns the site's own
// answers (tray hosts answering, link state, the scheduler's job list, the ranks' step times) into
// observations; the healer acts through the inventory's drain/resume/requeue_job/diagnostic commands.
// The plan's jobs are then started with start_job before the first fault and stopped with stop_job at
// the end, and trays the healer still holds isolated at the end are resumed. Without a `healer:`
// section only the faults run (jobs are not started; a warning says so).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/site/inventory.h"
#include "runner/plan/plan.h"
#include "runner/site/recover.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// What real mode adds to a RunSpec.
struct RealSpec {
  Inventory inventory;
  std::vector<std::string> hosts;        // inventory hosts the run needs (faults, healer), sorted
  std::vector<std::string> fault_hosts;  // those the faults land on, sorted
  Time horizon{};                  // plan duration, or the end of the last fault
  bool healer = false;             // the inventory's healer section can observe trays (observe_tray)
};

// Loads the plan's inventory (path relative to the plan file) and checks, once for every fault, that
// the inventory maps its target and defines the templates its verb needs. kInvalidArgument with the
// plan's or the inventory's FILE:LINE:COL; kNotSupported folded into kInvalidArgument (bad input).
// Checks that the site inventory's model and rack count match the plan's cluster (the plan's FILE:LINE:COL).
Status CheckModel(const Inventory& inv, const ClusterSpec& cluster);

Result<RealSpec> ValidateRealPlan(const Plan& plan, const RunSpec& spec);

struct RealRunOptions {
  std::string db_path = "rackchaos.db";
  std::string ledger_path;  // empty: DefaultLedgerPath(db_path)
  std::string command_line;
  bool accept_new_host_keys = false;
  std::function<void(int open_faults)> on_stop;  // as RunOptions::on_stop (runner/engine/run.h)
  // Live metrics (--metrics-listen): the run's events and final metrics; not owned (run.h RunOptions).
  reports::LiveMetrics* live = nullptr;
};

RunOutcome ExecuteRealRun(const Plan& plan, const RunSpec& spec, const RealSpec& real, const RealRunOptions& options);

}  // namespace rackchaos::runner
