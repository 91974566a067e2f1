// `rackchaos run PLAN --dry-run`: the resolved timeline of a plan, touching nothing.
//
// Loads and validates the plan exactly as `run` does (selectors resolved against the topology with the
// seeded picks, chaos drawn, safety checked; real plans also against their site inventory), then prints
// what would happen to which component and when. Opens no database, no SSH session, no backend.
#pragma once

#include <string>

#include "runner/plan/plan.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// The timeline as text: a header, one line per inject and revert (time, fault id, kind, target, GPUs
// the target serves, faults and GPUs impaired right after), and the worst case at once.
std::string RenderDryRun(const Plan& plan, const RunSpec& spec);

// The subcommand: exit 0 with the timeline on stdout, 2 (bad input) with the error on stderr.
// `inventory`: run's --inventory (the plan on that site; runner/cli/real_run.h UseInventory).
int CmdDryRun(const std::string& path, const ValidateOptions& options, const std::string& inventory = "");

}  // namespace rackchaos::runner
