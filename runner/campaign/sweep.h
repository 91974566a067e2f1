// Monte Carlo sweeps: one plan run for seeds 1..N at every point of a parameter grid, each run stored
// like a normal run and tagged in the report's sweep_runs table (reports/sweep_store.h), with aggregates
// per grid point.
//
// Streaming: the runs to make are numbered, not listed: a worker takes the next number and derives its
// grid point and seed from it, so memory does not grow with --seeds. Each run is stored as it goes
// (ExecuteRun) and tagged, with its wall and CPU time in milliseconds, the moment it finishes, so a
// sweep killed at any point has every finished run stored and tagged.
//
// Stopping: SIGINT/SIGTERM (runner/engine/run.h StopRequested), the stop file, or a run that ends
// interrupted stop new runs at once; the runs in progress see the same stop in their event loop and end
// 'interrupted' within one simulation step, are stored and tagged, and RunSweep returns with
// `interrupted` set and the count of runs it stored.
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
// own store connections (ExecuteRun opens one per run; the worker one for its tags); SQLite serialises
// the writes. At most min(threads, runs to make) workers start.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "reports/live_metrics.h"
#include "reports/sweep_store.h"
#include "runner/campaign/sweep_grid.h"
#include "runner/campaign/sweep_stats.h"
#include "runner/plan/plan.h"

namespace rackchaos::runner {

// Parses "K/N" with 1 <= K <= N <= kMaxSweepSeeds; kInvalidArgument naming the range otherwise (N is
// also at most --seeds: CheckSweepBounds).
Result<std::pair<int, int>> ParseShard(const std::string& text);

// The bounds of --seeds and --threads (each refusal names them).
inline constexpr int kMaxSweepSeeds = 2147483647;
inline constexpr int kMaxSweepThreads = 1024;

struct SweepOptions {
  int seeds = 1;  // 1..kMaxSweepSeeds
  std::vector<GridAxis> grid;
  int threads = 1;  // 1..kMaxSweepThreads
  int shard = 1, shards = 1;
  std::string db_path = "rackchaos.db";
  std::string command_line;
  bool progress = false;  // the progress line on stderr (runner/engine/progress.h)
  reports::LiveMetrics* live = nullptr;  // --metrics-listen: every run feeds it (runner/engine/run.h)
  std::vector<std::string> metrics;      // --metrics (sweep_stats.h ParseSweepMetrics); empty: the default
};

// kInvalidArgument naming the option and its valid range when seeds or threads are out of bounds, or when
// there are more shards than seeds.
Status CheckSweepBounds(const SweepOptions& options);

// One metric over the runs of one grid point (n, mean, sd, min, max, p50, p95 and the 95% CI of the
// mean: sweep_stats.h Summary).
struct SweepStat : Summary {
  std::string point;   // "healer=aggressive,chaos.scale=10", or "-" without a grid
  std::string metric;  // "ttr.p95" | "ettr.min" | "gpu_hours_lost.total" (time metrics in seconds)
  int64_t runs = 0;    // runs of the point
  // The optimum of the metric over the sweep's points (MarkBestPoints): the highest mean where higher is
  // better (ettr, goodput, job.mttf, precision, recall; runner/spec/expect.h HigherIsBetter), else the lowest.
  bool best = false;
};

// The machine time the runs of one grid point took, in milliseconds, as the sweep measured each run:
// it varies between machines and invocations, so it is kept apart from the simulated results.
struct SweepTiming {
  std::string point;
  Summary wall_ms, cpu_ms;  // over the runs with a stored time (runs tagged before schema 14 have none)
};

struct SweepResult {
  std::string sweep_id;
  std::string plan_name;  // of its runs
  int64_t runs = 0;    // tagged runs of the sweep in the database (this and earlier invocations)
  int64_t failed = 0;  // of those, runs that did not pass (expectations, errors, interrupts)
  // What this invocation did (RunSweep only):
  int64_t stored = 0;              // runs it made, stored and tagged
  int64_t stored_interrupted = 0;  // of those, runs a stop cut short (made again by the next invocation)
  int64_t skipped = 0;             // (point, seed) runs it found already done in the database
  bool interrupted = false;        // a signal, the stop file or an interrupted run stopped it early
  int threads = 0;                 // workers that ran: min(threads, runs to make), or fewer when
  std::string threads_refused;     // the system refused a thread (its message; "" otherwise)
  std::vector<std::string> metrics;  // the metrics of `stats`, in the order asked
  std::vector<std::string> points;   // grid points by their values (sweep_stats.h PointBefore)
  std::vector<SweepStat> stats;      // by point (as `points`), then metric (as `metrics`)
  std::vector<SweepTiming> timing;   // by point (as `points`)
};

// The sweep id: 16 hex digits naming (plan text, seeds, grid).
std::string SweepId(const Plan& plan, const SweepOptions& options);

// Runs this shard of the sweep. Every grid point's plan variant is validated first (kInvalidArgument
// with FILE:LINE:COL before anything runs); a seed whose validation fails later stops the sweep with
// that error. Store failures come back as kIoError/kUnavailable, after the runs finished so far are
// stored and tagged. The stats are read back from the store with ReadSweep, unless the sweep was
// interrupted (then runs, failed and stats are left empty: `report sweep` reads them).
Result<SweepResult> RunSweep(const Plan& plan, const SweepOptions& options);

// Has the allocator keep freed memory for the process's next run instead of handing it back to the
// system: each run of a 1,778-rack cluster allocates and frees a few hundred MB (the simulator's
// per-part state, the event buffer), and a seed then paid about 0.1 s of CPU faulting in and zeroing
// the pages the one before it had freed. RunSweep calls it; process-wide, for processes that run many.
void KeepFreedMemoryForNextRun();

// Marks, per metric, the points whose mean is the best of the sweep (SweepStat::best): every point with
// that mean, ties included. None when fewer than two points have values or every point's mean is the same
// (nothing to choose between). Depends only on the means, so the same stored runs give the same marks.
void MarkBestPoints(std::vector<SweepStat>& stats);

// Aggregates of `metrics` (empty: DefaultSweepMetrics()) over the tagged runs of `sweep_id` in `store`
// (kNotFound when it has none). An empty id means the sweep of the most recently tagged run. Holds one
// value per run and metric (for the percentiles), not the runs themselves. The best points are marked.
Result<SweepResult> ReadSweep(reports::SweepStore& store, const std::string& sweep_id,
                              const std::vector<std::string>& metrics = {});

}  // namespace rackchaos::runner
