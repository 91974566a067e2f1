// Real mode's composition root: a validated plan whose cluster names a site inventory, checked against
// that site and run on its hosts over SSH on the wall clock (SshBackend + WallClock + a write-through
// RecordingSink, handed to the engine, runner/engine/engine.h), into the same report store as
// simulated runs (backend "ssh").
//
// The engine's stages hold as for the simulator; the site's preconditions are the SSH backend's
// start-up (runner/site/ssh_backend.h: recover what earlier runs left open in the fault ledger,
// register the run there, open and host-key-check every session, check the fault hosts' clocks).
// When the inventory has a `healer:` section the healer runs too, on what the SshMonitor reads from
// the site; the plan's jobs start with start_job and stop with stop_job, and trays the healer still
// holds isolated at the end are resumed. Without one only the faults run (a warning says so).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/engine/engine.h"
#include "runner/plan/plan.h"
#include "runner/site/inventory.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// What real mode adds to a RunSpec.
struct RealSpec {
  Inventory inventory;
  std::vector<std::string> hosts;        // inventory hosts the run needs (faults, healer), sorted
  std::vector<std::string> fault_hosts;  // those the faults land on, sorted
  Time horizon{};                        // plan duration, or the end of the last fault
  bool healer = false;                   // the inventory's healer section can observe trays (observe_tray)
  // Said before anything runs: what the policy asks of the healer that this site cannot do (a reboot or a
  // GPU reset without its inventory action: the healer skips that step and diagnoses the tray as it is).
  std::vector<std::string> warnings;
};

// `--inventory PATH`: the plan runs on that site instead of its cluster.inventory (PATH relative to the
// working directory, not to the plan). Call before ValidatePlan, which checks plans for real sites.
void UseInventory(Plan& plan, const std::string& inventory);

// Checks that the site inventory's model and rack count match the plan's cluster (the plan's FILE:LINE:COL).
Status CheckModel(const Inventory& inv, const ClusterSpec& cluster);

// Loads the plan's inventory (path relative to the plan file) and checks, once for every fault, that
// the inventory maps its target and defines the templates its verb needs. kInvalidArgument with the
// plan's or the inventory's FILE:LINE:COL; kNotSupported folded into kInvalidArgument (bad input).
Result<RealSpec> ValidateRealPlan(const Plan& plan, const RunSpec& spec);

struct RealRunOptions {
  std::string db_path = "rackchaos.db";
  std::string ledger_path;  // empty: DefaultLedgerPath(db_path)
  std::string command_line;
  bool accept_new_host_keys = false;
  std::function<void(int open_faults)> on_stop;  // as RunOptions::on_stop (runner/engine/engine.h)
  // Live metrics (--metrics-listen), as RunOptions::live. A real run has no pace: it keeps the wall clock.
  reports::LiveMetrics* live = nullptr;
};

RunOutcome ExecuteRealRun(const Plan& plan, const RunSpec& spec, const RealSpec& real, const RealRunOptions& options);

}  // namespace rackchaos::runner
