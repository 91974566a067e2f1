// The report-side subcommands of the rackchaos CLI: report, compare, history, report merge.
// Each function is a whole subcommand: it opens the store, renders, writes to stdout or a file and
// returns the process exit code (runner/exit_code.h); errors go to stderr as one line.
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
};

// `rackchaos report [RUN] --format F [-o FILE]`: 0, 2 (unknown format or run), 3 (database, file).
int CmdReportRender(const ReportArgs& args);

}  // namespace rackchaos::runner
