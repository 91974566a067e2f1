// The sweep records of a report database: which runs a sweep made (table sweep_runs: run id, sweep id,
// grid point, seed, and the run's wall and CPU time in milliseconds). The runs themselves are ordinary
// runs of the same file (reports/store.h); a sweep tags each one as it finishes, so a sweep stopped at
// any moment has every finished run stored and tagged, and the next invocation resumes it.
//
// Tags are per-run rows: `rackchaos report merge` copies them with their runs, so shards written to
// separate files and merged hold the same tags as one unsharded sweep. The aggregates are computed in
// runner/campaign/sweep.h from the rows ForEachRun gives; this store only stores and reads.
//
// Errors, threading and ownership as ReportStore's: one store is one connection, used from one thread
// at a time; every failure is a Status naming the operation and the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

// One run a sweep made, as the sweep tags it.
struct SweepTag {
  int64_t run = 0;
  std::string sweep;  // the sweep id (16 hex digits)
  std::string point;  // the grid point, "-" without a grid
  uint64_t seed = 0;
  std::optional<int64_t> wall_ms;  // the run's wall time, as the sweep measured it
  std::optional<int64_t> cpu_ms;   // the CPU time of the thread that ran it
};

// A tagged run as ForEachRun reads it back: its tag, how the run ended, and its stored metrics.
struct SweepRunRow {
  SweepTag tag;
  std::string status;  // runs.status: passed | failed | aborted | error | interrupted | running
  std::string plan_name;
  RunMetrics metrics;
};

// One sweep of a file, as a list shows it.
struct SweepListRow {
  std::string id;
  std::string plan_name;  // of its first run
  int64_t runs = 0, points = 0, not_passed = 0;
  int64_t first_run = 0, last_run = 0;
};

// Every sweep of the file behind an open store, newest first (by its last run); serve's read-only
// stores use it.
Result<std::vector<SweepListRow>> ListSweeps(const ReportStore& store);

class SweepStore {
 public:
  // Opens or creates the report database at `path` for writing (ReportStore::Open: migrated, waits
  // for other openers).
  static Result<SweepStore> Open(const std::string& path, const OpenOptions& options = {});
  // Opens it for reading only (ReportStore::OpenForReading); the writers then fail with kIoError.
  static Result<SweepStore> OpenForReading(const std::string& path, const OpenOptions& options = {});

  SweepStore(SweepStore&&) noexcept = default;
  SweepStore& operator=(SweepStore&&) noexcept = default;

  const std::string& path() const { return runs_.path(); }

  // Drops the tags of `sweep`'s runs that did not finish (status other than passed, failed, aborted),
  // so that those runs are made again, and returns how many were dropped.
  Result<int64_t> DropUnfinished(const std::string& sweep);
  // Whether `sweep` has a finished (passed, failed or aborted) tagged run at (point, seed): one index
  // lookup, whatever the size of the sweep.
  Result<bool> HasFinished(const std::string& sweep, const std::string& point, uint64_t seed);
  // Tags one run (which must exist in this file: kNotFound otherwise). One transaction.
  Status Tag(const SweepTag& tag);

  // The sweep of the most recently tagged run; kNotFound when the file holds no sweep.
  Result<std::string> LatestSweep();
  // Every sweep of the file, newest first.
  Result<std::vector<SweepListRow>> List() const { return ListSweeps(runs_); }
  // Calls `fn` for every tagged run of `sweep`, grouped by point (points in text order), and stops at
  // the first error `fn` returns. One run's row is in memory at a time. kNotFound when the sweep has
  // no tagged run.
  Status ForEachRun(const std::string& sweep, const std::function<Status(const SweepRunRow&)>& fn);

 private:
  explicit SweepStore(ReportStore runs) : runs_(std::move(runs)) {}
  ReportStore runs_;
};

}  // namespace rackchaos::reports
