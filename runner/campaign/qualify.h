// Rack qualification: `rackchaos qualify SUITE --rack SERIAL` runs a suite of plans in stages and keeps
// one qualification record for the rack, with every plan's verdict, in the report database (tables
// qualifications and qualification_plans, schema version 5) and optionally as JUnit XML.
//
// A suite is a directory whose subdirectories are its stages, in name order (1-tray/, 2-rack/,
// 3-multi-rack/); a stage's plans are its *.yaml files, in name order. A stage runs only when every
// plan of the stages before it passed; the plans of a stage that does not run are recorded 'skipped'.
// Every plan is loaded and validated before anything runs, so a typo fails the qualification at once
// (exit 2) instead of after an hour of earlier stages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

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
};

// JUnit XML: one <testsuite> per stage, one <testcase> per plan (failure, error or skipped).
std::string QualificationJUnit(const Qualification& q);

struct QualifyArgs {
  std::string suite;
  std::string rack;
  std::string db = "rackchaos.db";
  std::string junit;  // also write JUnit XML here
  std::string command_line;
  bool quiet = false;
  bool progress = false;
};

// The `qualify` subcommand. Exit codes (core/exit_code.h): 0 every plan passed; 1 a plan failed or was
// aborted (later stages skipped); 2 bad suite or plan; 3 database or backend error; 4 interrupted.
int CmdQualify(const QualifyArgs& args);

}  // namespace rackchaos::runner
