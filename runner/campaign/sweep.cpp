#include "runner/campaign/sweep.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <limits>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "core/strings.h"
#include "runner/engine/progress.h"
#include "runner/engine/run.h"
#include "runner/spec/safety.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace {

struct Point {
  std::string label = "-";
  std::string healer;  // empty: the plan's
  std::vector<std::pair<std::string, std::string>> settings;  // other grid keys
};

// Every combination of the grid's values, first axis slowest.
std::vector<Point> Points(const std::vector<GridAxis>& grid) {
  std::vector<Point> points{Point{}};
  for (const GridAxis& axis : grid) {
    std::vector<Point> next;
    for (const Point& p : points)
      for (const std::string& v : axis.values) {
        Point q = p;
        q.label = (p.label == "-" ? "" : p.label + ",") + axis.key + "=" + v;
        if (axis.key == "healer") q.healer = v;
        else q.settings.emplace_back(axis.key, v);
        next.push_back(q);
      }
    points = std::move(next);
  }
  return points;
}

// The plan for a point. Its text records the point, so the stored plan (and its hash, part of the key
// `report merge` uses to tell runs apart) says what actually ran.
Result<Plan> Variant(const Plan& plan, const Point& point) {
  Plan out = plan;
  if (point.label == "-") return out;
  out.text += "\n# rackchaos sweep point: " + point.label + "\n";
  for (const auto& [key, value] : point.settings) RC_RETURN_IF_ERROR(ApplyGridToPlan(out, key, value));
  return out;
}

// The point's plan validated for one seed, its healer thresholds set; errors name the grid point.
// `topologies`: the sweep's, so that the seeds of a cluster share one built topology.
Result<RunSpec> SpecFor(const Plan& variant, const Point& point, uint64_t seed, TopologyCache& topologies) {
  auto spec = ValidatePlan(variant, {seed, point.healer, &topologies});
  if (!spec.ok() && point.label != "-")
    return Status(spec.status().code(), spec.status().message() + " (at grid point " + point.label + ")");
  if (!spec.ok()) return spec.status();
  for (const auto& [key, value] : point.settings) ApplyGridToPolicy(spec->policy, key, value);
  return spec;
}

// Wall time and the calling thread's CPU time since construction, in milliseconds (sweep_runs columns;
// they describe the machine, never the simulated run).
class RunTimer {
 public:
  RunTimer() : wall_(std::chrono::steady_clock::now()), cpu_ms_(ThreadCpuMs()) {}
  int64_t WallMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - wall_).count();
  }
  int64_t CpuMs() const { return ThreadCpuMs() - cpu_ms_; }

 private:
  static int64_t ThreadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  }
  std::chrono::steady_clock::time_point wall_;
  int64_t cpu_ms_;
};

// What the workers share. Run number k (0 <= k < total) is point k / per_point, seed
// shard + (k % per_point) * shards: nothing per run is held before it runs.
struct Sweep {
  Sweep(const SweepOptions& o, const std::vector<Point>& p, const std::vector<Plan>& v, std::string sweep_id,
        TopologyCache& t)
      : options(o), points(p), variants(v), id(std::move(sweep_id)), topologies(t),
        per_point(o.seeds >= o.shard ? (o.seeds - o.shard) / o.shards + 1 : 0),
        total(per_point * static_cast<int64_t>(p.size())), line(o.progress) {}

  const SweepOptions& options;
  const std::vector<Point>& points;
  const std::vector<Plan>& variants;
  const std::string id;
  TopologyCache& topologies;  // every seed of a cluster validates against one built topology
  const int64_t per_point;  // seeds of this shard
  const int64_t total;      // points * per_point

  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0}, stored{0}, stored_interrupted{0}, skipped{0}, failed{0};
  std::atomic<bool> stop{false};         // no new run starts once set
  std::atomic<bool> interrupted{false};  // set with stop by a signal, the stop file or an interrupted run
  std::mutex mu;                         // guards error and line
  Status error;                          // the first error; it stops the sweep
  ProgressLine line;

  void Fail(const Status& s) {
    std::lock_guard lock(mu);
    if (error.ok()) error = s;
    stop = true;
  }
  void Interrupt() {
    interrupted = true;
    stop = true;
  }
  void Progress() {
    std::lock_guard lock(mu);
    // The progress line counts in int: a sweep past 2^31 runs shows its first 2^31.
    const auto clamp = [](int64_t v) { return static_cast<int>(std::min<int64_t>(v, 2147483647)); };
    line.Sweep(clamp(done), clamp(total), clamp(failed));
  }
};

// The workers store into one file at once, each run in its own write transactions; the first run of a
// large cluster writes its topology (hundreds of thousands of rows) in one, which on a loaded machine took
// longer than the store's default 5 s wait (validation:doc-current failed so: "adding components to run
// 1: ... database is locked"). A worker waits for the others this long before the sweep fails.
constexpr int kWorkerBusyTimeoutMs = 120'000;

// Makes run number k unless the store has it: validate, run (ExecuteRun stores it as it goes), tag.
Status RunNumber(Sweep& sweep, reports::SweepStore& store, int64_t k) {
  const size_t p = static_cast<size_t>(k / sweep.per_point);
  const uint64_t seed = static_cast<uint64_t>(sweep.options.shard + (k % sweep.per_point) * sweep.options.shards);
  const Point& point = sweep.points[p];
  RC_ASSIGN_OR_RETURN(bool had, store.HasFinished(sweep.id, point.label, seed));
  if (had) {
    ++sweep.skipped;
    return Status::Ok();
  }
  RC_ASSIGN_OR_RETURN(RunSpec spec, SpecFor(sweep.variants[p], point, seed, sweep.topologies));
  const RunTimer timer;
  RunOptions run{sweep.options.db_path, sweep.options.command_line, false, std::nullopt, nullptr, nullptr,
                 sweep.options.live, 0, {}, "", 0, kWorkerBusyTimeoutMs};
  const RunOutcome out = ExecuteRun(sweep.variants[p], spec, run);
  if (out.run_id != 0) {
    RC_RETURN_IF_ERROR(store.Tag({out.run_id, sweep.id, point.label, seed, timer.WallMs(), timer.CpuMs()}));
    ++sweep.stored;
    if (out.code == ExitCode::kInterrupted) ++sweep.stored_interrupted;
  }
  if (out.code == ExitCode::kRuntimeError) return Status::IoError("sweep run failed: " + out.error);
  if (out.code != ExitCode::kPass) ++sweep.failed;
  if (out.code == ExitCode::kInterrupted) sweep.Interrupt();
  return Status::Ok();
}

// The sweep's own connections (the workers' tags, the aggregates read back) look up, tag and read one
// run at a time and live as long as the sweep: a small page cache. With the store's default 64 MiB, the
// read-back kept every page of the file (RSS grew with --seeds, about the file's size).
reports::OpenOptions SweepConnection() {
  reports::OpenOptions o;
  o.cache_kib = 2048;
  o.busy_timeout_ms = kWorkerBusyTimeoutMs;
  return o;
}

// One worker: its own tag connection, then run numbers until none is left or the sweep stops.
void Work(Sweep& sweep) {
  auto store = reports::SweepStore::Open(sweep.options.db_path, SweepConnection());
  if (!store.ok()) return sweep.Fail(store.status());
  while (!sweep.stop) {
    // Before every run: a stop asked while the last one ran (which then ended interrupted) or the stop file.
    if (StopRequested() || StopFileExists()) return sweep.Interrupt();
    const int64_t k = sweep.next.fetch_add(1);
    if (k >= sweep.total) return;
    Status s = RunNumber(sweep, *store, k);
    if (!s.ok()) return sweep.Fail(s);
    ++sweep.done;
    sweep.Progress();
  }
}

// Starts min(threads, total) workers and waits for them. A thread the system refuses (std::system_error:
// too many threads for the user's limit) leaves the sweep with the workers already started, and its
// message in `refused`; none at all is kUnavailable. Returns how many ran.
Result<int> RunWorkers(Sweep& sweep, std::string& refused) {
  const int64_t wanted = std::min<int64_t>(sweep.options.threads, sweep.total);
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < wanted; ++t) {
    try {
      pool.emplace_back([&sweep] { Work(sweep); });
    } catch (const std::system_error& e) {
      refused = e.what();
      break;
    }
  }
  for (std::thread& t : pool) t.join();
  if (pool.empty() && wanted > 0) return Status::Unavailable("cannot start a sweep thread: " + refused);
  return static_cast<int>(pool.size());
}

}  // namespace

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  const std::string expected = "expected K/N with 1 <= K <= N <= " + std::to_string(kMaxSweepSeeds) + ", e.g. 1/4";
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return Status::Invalid("--shard " + Quote(text) + ": " + expected);
  auto number = [&](std::string_view part) -> std::optional<int64_t> {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || part.size() > 18 || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    return v;
  };
  const auto k = number(std::string_view(text).substr(0, slash)), n = number(std::string_view(text).substr(slash + 1));
  if (!k || !n) return Status::Invalid("--shard " + Quote(text) + ": " + expected);
  if (*n < 1 || *n > kMaxSweepSeeds || *k < 1 || *k > *n)
    return Status::Invalid("--shard " + Quote(text) + " is out of range; " + expected);
  return std::pair{static_cast<int>(*k), static_cast<int>(*n)};
}

Status CheckSweepBounds(const SweepOptions& options) {
  if (options.seeds < 1 || options.seeds > kMaxSweepSeeds)
    return Status::Invalid("--seeds " + std::to_string(options.seeds) + ": expected 1 to " +
                           std::to_string(kMaxSweepSeeds));
  if (options.threads < 1 || options.threads > kMaxSweepThreads)
    return Status::Invalid("--threads " + std::to_string(options.threads) + ": expected 1 to " +
                           std::to_string(kMaxSweepThreads) + " runs at once");
  // Shards split the seeds: with more shards than seeds some would run nothing and store nothing.
  if (options.shards > options.seeds)
    return Status::Invalid("--shard " + std::to_string(options.shard) + "/" + std::to_string(options.shards) +
                           ": " + std::to_string(options.shards) + " shards of " + std::to_string(options.seeds) +
                           " seed(s) leave shards with no run; N must be from 1 to --seeds (" +
                           std::to_string(options.seeds) + ")");
  return Status::Ok();
}

std::string SweepId(const Plan& plan, const SweepOptions& options) {
  std::string key = plan.text + "\nseeds=" + std::to_string(options.seeds);
  for (const GridAxis& axis : options.grid) {
    key += "\n" + axis.key + "=";
    for (const std::string& v : axis.values) key += v + ",";
  }
  return reports::PlanHash(key);
}

void KeepFreedMemoryForNextRun() {
  // Blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap, and the heap's free top is
  // never trimmed: the next run reuses both. Larger blocks stay mmapped and are returned when freed.
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

Result<SweepResult> RunSweep(const Plan& plan, const SweepOptions& options) {
  KeepFreedMemoryForNextRun();
  // Stage 1: the bounds, and every grid point's plan validated (for the shard's first seed) before
  // anything runs.
  RC_RETURN_IF_ERROR(CheckSweepBounds(options));
  const std::vector<Point> points = Points(options.grid);
  std::vector<Plan> variants;
  TopologyCache topologies;  // the check's topology is the first runs' too
  for (const Point& p : points) {
    RC_ASSIGN_OR_RETURN(Plan v, Variant(plan, p));
    RC_RETURN_IF_ERROR(SpecFor(v, p, static_cast<uint64_t>(options.shard), topologies).status());
    variants.push_back(std::move(v));
  }
  // The store is created and migrated here, once, and the tags of runs that did not finish dropped.
  Sweep sweep(options, points, variants, SweepId(plan, options), topologies);
  RC_ASSIGN_OR_RETURN(reports::SweepStore store, reports::SweepStore::Open(options.db_path, SweepConnection()));
  RC_RETURN_IF_ERROR(store.DropUnfinished(sweep.id).status());

  // Stage 2: the runs, on the workers; each is stored and tagged as it finishes.
  std::string refused;
  RC_ASSIGN_OR_RETURN(int threads, RunWorkers(sweep, refused));
  if (!sweep.error.ok()) {
    return Status(sweep.error.code(), sweep.error.message() + " (" + std::to_string(sweep.stored.load()) +
                                          " run(s) of the sweep stored and tagged before it)");
  }

  // Stage 3: the aggregates, as read back from the store; not after a stop, which must end the process
  // soon, whatever the number of runs stored (ReadSweep reads every one).
  SweepResult result;
  result.sweep_id = sweep.id;
  if (!sweep.interrupted && (sweep.stored > 0 || sweep.skipped > 0)) {
    RC_ASSIGN_OR_RETURN(result, ReadSweep(store, sweep.id, sweep.options.metrics));
  }
  result.stored = sweep.stored;
  result.stored_interrupted = sweep.stored_interrupted;
  result.skipped = sweep.skipped;
  result.interrupted = sweep.interrupted;
  result.threads = threads;
  result.threads_refused = refused;
  return result;
}

}  // namespace rackchaos::runner
