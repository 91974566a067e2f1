// The report-side subcommands of the rackchaos CLI: report, compare, history, report merge.
// Each function is a whole subcommand: it opens the store, renders, writes to stdout or a file and
// returns the process exit code (core/exit_code.h); errors go to stderr as one line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rackchaos::runner {

struct ReportArgs {
  std::string db = "rackchaos.db";
  std::optional<int64_t> run;  // default: the latest run
  std::string format = "text";
  std::string output;          // "" or "-": stdout
  int lemon_runs = 2;          // text: flag the run's isolated parts that are lemons (reports/lemons.h)
  bool quiet = false;          // no "wrote FILE" line
};

// `rackchaos report [RUN] --format F [-o FILE]`. Rendered, it exits with the run's verdict, as the run
// itself exited: 0 passed, 1 failed or aborted, 3 error, 4 interrupted, and 3 for a run with no verdict
// (still running, or its process died; said on stderr). Not rendered: 2 (unknown format or run), 3
// (database, file). With -o FILE it prints "wrote FILE (...)" unless quiet.
int CmdReportRender(const ReportArgs& args);
// The help text of those exit codes (`rackchaos report --help`).
extern const char* const kReportExitHelp;

struct CompareArgs {
  std::string db = "rackchaos.db";
  std::string db_b;  // run B's database when it is another file ("" = the same as db)
  int64_t run_a = 0, run_b = 0;
  std::string fail_on;  // "ttr.p95=+10%,precision=-0.05"
};

// `rackchaos compare A B`: the table on stdout, under a warning when the runs ran different plans; 1 when
// a --fail-on threshold is exceeded, 2 for an unknown run, a bad threshold or a run that did not finish (status
// running or error: its metrics are partial), 3 for database errors.
int CmdCompare(const CompareArgs& args);

// `rackchaos history --rack SERIAL`: 0 (also when no run touched it), 3 for database errors.
int CmdHistory(const std::string& db, const std::string& serial, int lemon_runs);

// `rackchaos report merge A.db B.db ... -o OUT.db`: one line per input; 0, 2 (an input is absent,
// not a report, or is OUT itself), 3 (database errors). Inputs merged before a failure stay merged.
int CmdReportMerge(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace rackchaos::runner
