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
  int lemon_runs = 2;          // text: flag the run's isolated parts that were really faulty in this many runs
};

// `rackchaos report [RUN] --format F [-o FILE]`: 0, 2 (unknown format or run), 3 (database, file).
int CmdReportRender(const ReportArgs& args);

struct CompareArgs {
  std::string db = "rackchaos.db";
  std::string db_b;  // run B's database when it is another file ("" = the same as db)
  int64_t run_a = 0, run_b = 0;
  std::string fail_on;  // "ttr.p95=+10%,precision=-0.05"
};

// `rackchaos compare A B`: the table on stdout; 1 when a --fail-on threshold is exceeded,
// 2 for an unknown run or a bad threshold, 3 for database errors.
int CmdCompare(const CompareArgs& args);

// `rackchaos history --rack SERIAL`: 0 (also when no run touched it), 3 for database errors.
int CmdHistory(const std::string& db, const std::string& serial, int lemon_runs);

// `rackchaos report merge A.db B.db ... -o OUT.db`: one line per input; 0, 2 (an input is absent,
// not a report, or is OUT itself), 3 (database errors). Inputs merged before a failure stay merged.
int CmdReportMerge(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace rackchaos::runner
