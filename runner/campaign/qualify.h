// Rack qualification: `rackchaos qualify SUITE --rack SERIAL` runs a suite of plans in stages and keeps
// one qualification record for the rack, with every plan's verdict, in the report database (tables
// qualifications and qualification_plans, schema version 5) and optionally as JUnit XML.
//
// A suite is a directory whose subdirectories are its stages, in name order (1-tray/, 2-rack/,
// 3-multi-rack/); a stage's plans are its *.yaml files, in name order. A stage runs only when every
// plan of the stages before it passed; the plans of a stage that does not run are recorded 'skipped'.
// Every plan is loaded and validated before anything runs (the `qualify` command, runner/cli/qualify_cmd.h),
// so a typo fails the qualification at once (exit 2) instead of after an hour of earlier stages.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "core/status.h"
#include "runner/engine/engine.h"

namespace rackchaos::runner {

struct SuitePlan {
  std::string stage;  // the stage directory's name, "1-tray"
  std::string path;   // the plan file
};

struct Suite {
  std::string name;  // the suite directory's name
  std::vector<std::string> stages;
  std::vector<SuitePlan> plans;  // stage by stage
};

// kNotFound when `dir` is not a directory; kInvalidArgument when it has no stage with a plan (naming
// the layout expected).
Result<Suite> LoadSuite(const std::string& dir);

// One plan's outcome in a qualification.
struct QualifiedPlan {
  SuitePlan plan;
  std::optional<int64_t> run_id;  // absent when skipped or refused
  std::string verdict;            // passed | failed | aborted | error | interrupted | skipped
  std::string reason;             // the failing gate, the abort reason, the error, or why it was skipped
};

struct Qualification {
  int64_t id = 0;
  std::string rack;
  std::string suite;
  std::string verdict;  // passed | failed | error | interrupted
  std::vector<QualifiedPlan> plans;
  ExitCode code = ExitCode::kPass;  // of the verdict: 0 passed, 1 failed, 3 error, 4 interrupted
  std::string reason;               // the first plan that did not pass, and why; "" when all did
};

// JUnit XML: one <testsuite> per stage, one <testcase> per plan (failure, error or skipped).
std::string QualificationJUnit(const Qualification& q);

// Where a qualification is recorded, and for which rack.
struct QualifyRecord {
  std::string rack;
  std::string db = "rackchaos.db";
  std::string command_line;
};

// Runs the plan at `index` of the suite's plans; the caller (the composition root) picks its backend.
using RunSuitePlan = std::function<RunOutcome(size_t index)>;

// Runs `suite` stage by stage into a qualification record in `record.db`: a stage runs only when every
// plan before it passed, the plans of a stage not reached are recorded 'skipped', and a stop (signal or
// stop file) skips the rest. `on_plan` hears of each plan as it is decided. Fails only when the record
// cannot be written; each plan's own failure is its verdict.
Result<Qualification> Qualify(const Suite& suite, const QualifyRecord& record, const RunSuitePlan& run,
                              const std::function<void(const QualifiedPlan&)>& on_plan);

}  // namespace rackchaos::runner
