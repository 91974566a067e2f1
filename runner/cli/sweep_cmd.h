// The sweep subcommands of the rackchaos CLI: `sweep` runs one (shard of a) sweep, `report sweep`
// prints the aggregates a report database holds for a sweep (after `report merge` of the shards too).
// Each returns the process exit code (core/exit_code.h); errors go to stderr as one line.
#pragma once

#include <string>
#include <vector>

namespace rackchaos::runner {

// What `sweep` and `report sweep` show of the aggregates (runner/campaign/sweep_render.h).
struct SweepOutputArgs {
  std::string metrics;  // --metrics a,b,...: expectation metric names; empty = the default nine
  std::string csv;      // --csv FILE: one row per grid point and metric ("-" = stdout)
  std::string html;     // --html FILE: the page with a plot per metric
  bool timing = false;  // --timing: the runs' wall and CPU ms (always shown by `sweep`; CSV rows with it)
};

struct SweepArgs {
  std::string plan;
  std::string db = "rackchaos.db";
  int seeds = 10;
  std::vector<std::string> grid;  // "healer=default,aggressive", "chaos.scale=1,10"
  int threads = 1;
  std::string shard;              // "K/N"; empty = the whole sweep
  std::string command_line;
  bool quiet = false;
  bool progress = false;          // --progress: the progress line even when stderr is not a terminal
  std::string metrics_listen;     // --metrics-listen HOST:PORT: /metrics while the sweep runs
  bool allow_remote = false;      // --allow-remote: a non-loopback --metrics-listen
  SweepOutputArgs output;
};

// `rackchaos sweep PLAN --seeds N ...`: the aggregate table on stdout; 0 when every run passed, 1 when
// a run's expectations failed, 2 for bad input (plan, grid, shard, --seeds or --threads out of range),
// 3 for database errors, 4 when interrupted (signal or stop file: no new run starts, the runs in
// progress end interrupted, and one line on stderr says how many runs are stored and tagged).
int CmdSweep(const SweepArgs& args);

// `rackchaos report sweep [ID] --db PATH`: the aggregates of sweep ID (default: the latest); 0, or 2
// when the database holds no such sweep or --metrics names an unknown metric, 3 for database errors
// and files that cannot be written.
int CmdSweepReport(const std::string& db, const std::string& sweep_id, const SweepOutputArgs& output);

}  // namespace rackchaos::runner
