// Monte Carlo sweeps: one plan run for seeds 1..N at every point of a parameter grid, each run stored
// like a normal run and tagged in the report's sweep_runs table, with aggregates per grid point.
//
// Sharding: shard K/N takes the seeds s with (s - 1) % N == K - 1. The sweep id depends on the plan
// text, the seed count and the grid, not on the shard, so shards written to separate files and merged
// with `rackchaos report merge` hold the same tagged runs as one unsharded sweep, and ReadSweep gives
// the same aggregates (values are sorted before any arithmetic, so the order runs arrive in does not
// matter).
//
// Grid keys: runner/campaign/sweep_grid.h (healer, chaos.scale, spares, checkpoint.interval, healer.* thresholds).
//
// Running the same sweep into the same database again does not add a second copy: (point, seed) pairs
// the database already holds a finished run of (passed, failed or aborted) are skipped, and the tags of
// runs that did not finish (interrupted, error) are dropped and those runs made again. So a second
// invocation resumes an interrupted sweep and leaves a finished one as it was.
//
// Threads: each worker runs whole runs (the simulator is single-threaded and deterministic) with its
// own store connection (ExecuteRun opens one per run); SQLite serialises the writes. Tagging happens
// on the calling thread after the workers finish.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "reports/live_metrics.h"
#include "reports/store.h"
#include "runner/plan/plan.h"
#include "runner/campaign/sweep_grid.h"

namespace rackchaos::runner {

// Parses "K/N" with 1 <= K <= N.
Result<std::pair<int, int>> ParseShard(const std::string& text);

struct SweepOptions {
  int seeds = 1;
  std::vector<GridAxis> grid;
  int threads = 1;
  int shard = 1, shards = 1;
  std::string db_path = "rackchaos.db";
  std::string command_line;
  bool progress = false;  // the progress line on stderr (runner/engine/progress.h)
  reports::LiveMetrics* live = nullptr;  // --metrics-listen: every run feeds it (runner/engine/run.h)
};

// One metric over the runs of one grid point.
struct SweepStat {
  std::string point;   // "healer=aggressive,chaos.scale=10", or "-" without a grid
  std::string metric;  // "ttr.p95" | "ettr.min" | "gpu_hours_lost.total"
  int runs = 0;        // runs of the point
  int n = 0;           // runs where the metric had a finite value
  double mean = 0, p50 = 0, p95 = 0, ci_low = 0, ci_high = 0;  // 95% CI of the mean: mean +- 1.96 sd/sqrt(n)
};

struct SweepResult {
  std::string sweep_id;
  int runs = 0;
  int skipped = 0;      // (point, seed) runs this invocation found already done in the database
  int failed = 0;       // runs whose exit code was not pass (expectations, errors, interrupts)
  bool interrupted = false;
  std::vector<SweepStat> stats;
};

// The sweep id: 16 hex digits naming (plan text, seeds, grid).
std::string SweepId(const Plan& plan, const SweepOptions& options);

// Runs this shard of the sweep. Every plan variant is validated first (kInvalidArgument with
// FILE:LINE:COL before anything runs); kRuntimeError-style failures come back as kIoError/kUnavailable
// from the store. The stats are read back from the store with ReadSweep.
Result<SweepResult> RunSweep(const Plan& plan, const SweepOptions& options);

// Aggregates of the tagged runs of `sweep_id` in `store` (kNotFound when it has none). An empty id
// means the sweep of the most recently tagged run.
Result<SweepResult> ReadSweep(reports::ReportStore& store, const std::string& sweep_id);

// The stats as a text table, one row per grid point and metric.
std::string RenderSweepTable(const SweepResult& result);

}  // namespace rackchaos::runner
