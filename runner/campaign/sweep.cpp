#include "runner/campaign/sweep.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "reports/text_table.h"
#include "runner/spec/expect.h"
#include "runner/engine/progress.h"
#include "runner/engine/run.h"
#include "runner/spec/safety.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace {

// The metrics a sweep aggregates, as gate metric names (runner/spec/expect.h).
const std::vector<std::string> kSweepMetrics = {"ttr.p50",          "ttr.p95",        "ettr.min",
                                                "ettr.mean",        "gpu_hours_lost.total", "drained.gpus",
                                                "drained.gpu_hours", "healer.precision",   "healer.recall"};

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

// One run to make: the plan variant of a point, validated for one seed.
struct Item {
  const Point* point;
  const Plan* plan;
  RunSpec spec;
  int64_t run_id = 0;
  ExitCode code = ExitCode::kPass;
  std::string error;
};

// The plan for a point. Its text records the point, so the stored plan (and its hash, part of the key
// `report merge` uses to tell runs apart) says what actually ran.
Result<Plan> Variant(const Plan& plan, const Point& point) {
  Plan out = plan;
  if (point.label == "-") return out;
  out.text += "\n# rackchaos sweep point: " + point.label + "\n";
  for (const auto& [key, value] : point.settings) RC_RETURN_IF_ERROR(ApplyGridToPlan(out, key, value));
  return out;
}

double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Stats of finite values; sorted first so the result does not depend on the order runs were stored.
SweepStat Stats(std::vector<double> values, SweepStat s) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / s.n;
  s.p50 = Percentile(values, 0.5);
  s.p95 = Percentile(values, 0.95);
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  double half = s.n > 1 ? 1.96 * std::sqrt(ss / (s.n - 1)) / std::sqrt(static_cast<double>(s.n)) : 0;
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

// Runs items on `threads` workers; each worker takes the next item until none is left or a stop is asked.
bool RunAll(std::vector<Item>& items, const SweepOptions& options) {
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  std::atomic<bool> stopped{false};
  std::atomic<int> failed{0};
  std::mutex progress;
  ProgressLine line(options.progress);
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < items.size();) {
      if (StopRequested() || StopFileExists()) {
        stopped = true;
        return;
      }
      Item& item = items[i];
      RunOptions run{options.db_path, options.command_line, false, std::nullopt, nullptr, nullptr, options.live, 0};
      RunOutcome out = ExecuteRun(*item.plan, item.spec, run);
      item.run_id = out.run_id;
      item.code = out.code;
      item.error = out.error;
      if (out.code == ExitCode::kInterrupted) stopped = true;
      if (out.code != ExitCode::kPass) ++failed;
      int n = ++done;
      std::lock_guard lock(progress);
      line.Sweep(n, static_cast<int>(items.size()), failed);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, options.threads); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  return !stopped;
}

Status Tag(reports::ReportStore& store, const std::string& sweep, const std::vector<Item>& items) {
  reports::Db& db = store.db();
  RC_ASSIGN_OR_RETURN(auto tx, reports::Transaction::Begin(db, "tagging sweep runs"));
  RC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT INTO sweep_runs(run_id, sweep, point) VALUES (?1, ?2, ?3)",
                                            "tagging sweep runs"));
  for (const Item& item : items) {
    if (item.run_id == 0) continue;
    stmt.Bind(1, item.run_id);
    stmt.Bind(2, std::string_view(sweep));
    stmt.Bind(3, std::string_view(item.point->label));
    RC_RETURN_IF_ERROR(stmt.Run("tagging sweep runs"));
  }
  return tx.Commit("tagging sweep runs");
}

// The (point, seed) pairs of `sweep` the store holds a finished run of. Tags of runs that did not
// finish are dropped here, so those runs are made again and counted once.
Result<std::set<std::pair<std::string, std::string>>> FinishedRuns(reports::ReportStore& store, const std::string& sweep) {
  reports::Db& db = store.db();
  const std::string what = "reading the runs a sweep already has";
  RC_ASSIGN_OR_RETURN(auto drop, db.Prepare("DELETE FROM sweep_runs WHERE sweep = ?1 AND run_id IN (SELECT id FROM runs "
                                            "WHERE status NOT IN ('passed', 'failed', 'aborted'))", what));
  drop.Bind(1, std::string_view(sweep));
  RC_RETURN_IF_ERROR(drop.Run(what));
  RC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT s.point, r.seed FROM sweep_runs s JOIN runs r ON r.id = s.run_id "
                                            "WHERE s.sweep = ?1", what));
  stmt.Bind(1, std::string_view(sweep));
  std::set<std::pair<std::string, std::string>> done;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    done.emplace(stmt.Text(0), stmt.Text(1));
  }
  return done;
}

}  // namespace

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  int k = 0, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &k, &slash, &n, &extra) != 3 || slash != '/' || k < 1 || k > n)
    return Status::Invalid("--shard '" + text + "': expected K/N with 1 <= K <= N, e.g. 1/4");
  return std::pair{k, n};
}

std::string SweepId(const Plan& plan, const SweepOptions& options) {
  std::string key = plan.text + "\nseeds=" + std::to_string(options.seeds);
  for (const GridAxis& axis : options.grid) {
    key += "\n" + axis.key + "=";
    for (const std::string& v : axis.values) key += v + ",";
  }
  return reports::PlanHash(key);
}

Result<SweepResult> RunSweep(const Plan& plan, const SweepOptions& options) {
  // Stage 1: every variant validated for every seed of this shard before anything runs.
  std::vector<Point> points = Points(options.grid);
  std::vector<Plan> variants;
  for (const Point& p : points) {
    RC_ASSIGN_OR_RETURN(Plan v, Variant(plan, p));
    variants.push_back(std::move(v));
  }
  // The store is created and migrated here, once: workers opening a fresh file at once would race.
  auto store = reports::ReportStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  const std::string id = SweepId(plan, options);
  RC_ASSIGN_OR_RETURN(auto done, FinishedRuns(*store, id));
  int skipped = 0;
  std::vector<Item> items;
  for (size_t i = 0; i < points.size(); ++i)
    for (int seed = options.shard; seed <= options.seeds; seed += options.shards) {
      if (done.count({points[i].label, std::to_string(seed)})) {
        ++skipped;
        continue;
      }
      auto spec = ValidatePlan(variants[i], {static_cast<uint64_t>(seed), points[i].healer});
      if (!spec.ok() && points[i].label != "-")
        return Status(spec.status().code(), spec.status().message() + " (at grid point " + points[i].label + ")");
      if (!spec.ok()) return spec.status();
      for (const auto& [key, value] : points[i].settings) ApplyGridToPolicy(spec->policy, key, value);
      items.push_back({&points[i], &variants[i], std::move(*spec), 0, ExitCode::kPass, ""});
    }
  // Stage 2: the runs, on the workers. Stage 3: tag them, then read the aggregates back.
  const bool complete = RunAll(items, options);
  RC_RETURN_IF_ERROR(Tag(*store, id, items));
  for (const Item& item : items)
    if (item.code == ExitCode::kRuntimeError) return Status::IoError("sweep run failed: " + item.error);
  SweepResult result;
  if (std::none_of(items.begin(), items.end(), [](const Item& i) { return i.run_id != 0; }) && skipped == 0) {
    result.sweep_id = id;
  } else {
    RC_ASSIGN_OR_RETURN(result, ReadSweep(*store, id));
  }
  result.interrupted = !complete;
  result.skipped = skipped;
  return result;
}

Result<SweepResult> ReadSweep(reports::ReportStore& store, const std::string& sweep_id) {
  reports::Db& db = store.db();
  std::string id = sweep_id;
  if (id.empty()) {
    RC_ASSIGN_OR_RETURN(auto latest, db.Prepare("SELECT sweep FROM sweep_runs ORDER BY run_id DESC LIMIT 1", "finding the latest sweep"));
    RC_ASSIGN_OR_RETURN(bool row, latest.Step("finding the latest sweep"));
    if (!row) return Status::NotFound("report '" + db.path() + "' holds no sweep");
    id = latest.Text(0);
  }
  RC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT point, run_id FROM sweep_runs WHERE sweep = ?1 ORDER BY point, run_id",
                                            "reading sweep runs"));
  stmt.Bind(1, std::string_view(id));
  std::vector<std::pair<std::string, int64_t>> runs;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step("reading sweep runs"));
    if (!row) break;
    runs.emplace_back(stmt.Text(0), stmt.Int(1));
  }
  if (runs.empty()) return Status::NotFound("report '" + db.path() + "' has no runs of sweep " + id);
  SweepResult result{id, static_cast<int>(runs.size()), 0, 0, false, {}};
  std::vector<Gate> gates;
  for (const std::string& m : kSweepMetrics) {  // a gate only to reach the metric; time metrics need a unit
    auto gate = ParseGate(m + " >= 0s");
    gates.push_back(gate.ok() ? *gate : *ParseGate(m + " >= 0"));
  }
  for (size_t begin = 0; begin < runs.size();) {  // one grid point at a time
    size_t end = begin;
    std::vector<std::vector<double>> values(gates.size());
    for (; end < runs.size() && runs[end].first == runs[begin].first; ++end) {
      RC_ASSIGN_OR_RETURN(RunMetrics metrics, store.ReadMetrics(runs[end].second));
      RC_ASSIGN_OR_RETURN(reports::RunRow row, store.ReadRun(runs[end].second));
      if (row.status != "passed") ++result.failed;
      for (size_t g = 0; g < gates.size(); ++g) values[g].push_back(EvaluateGate(gates[g], metrics).actual);
    }
    for (size_t g = 0; g < gates.size(); ++g) {
      SweepStat s{runs[begin].first, kSweepMetrics[g], static_cast<int>(end - begin), 0, 0, 0, 0, 0, 0};
      result.stats.push_back(Stats(std::move(values[g]), s));
    }
    begin = end;
  }
  return result;
}

std::string RenderSweepTable(const SweepResult& result) {
  using A = reports::Align;
  reports::TextTable table({"point", "metric", "runs", "n", "mean", "p50", "p95", "95% CI of mean"},
                           {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kLeft});
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  for (const SweepStat& s : result.stats) {
    bool any = s.n > 0;
    table.AddRow({s.point, s.metric, std::to_string(s.runs), std::to_string(s.n), any ? num(s.mean) : "-",
                  any ? num(s.p50) : "-", any ? num(s.p95) : "-",
                  any ? "[" + num(s.ci_low) + ", " + num(s.ci_high) + "]" : "-"});
  }
  return "Sweep " + result.sweep_id + ": " + std::to_string(result.runs) + " run(s), " + std::to_string(result.failed) +
         " not passed (ttr in seconds; values that never came are left out of n)\n" + table.Render("  ");
}

}  // namespace rackchaos::runner
