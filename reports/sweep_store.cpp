#include "reports/sweep_store.h"

#include <charconv>
#include <string>
#include <utility>

#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// The statuses a run keeps for good: a sweep does not make these again.
constexpr const char* kFinishedStatuses = "('passed', 'failed', 'aborted')";

// Seeds are stored as decimal text (a uint64 may not fit SQLite's signed integer); 0 if unreadable.
uint64_t SeedOf(const std::string& text) {
  uint64_t seed = 0;
  std::from_chars(text.data(), text.data() + text.size(), seed);
  return seed;
}

// Per sweep: its plan (of its first run), runs, points, runs not passed, first and last run.
constexpr const char* kSweepListSql =
    "SELECT g.sweep, (SELECT plan_name FROM runs WHERE id = g.first), g.n, g.points,"
    " (SELECT count(*) FROM sweep_runs s JOIN runs r ON r.id = s.run_id WHERE s.sweep = g.sweep AND r.status != "
    "'passed'),"
    " g.first, g.last FROM (SELECT sweep, count(*) AS n, count(DISTINCT point) AS points, min(run_id) AS first,"
    " max(run_id) AS last FROM sweep_runs GROUP BY sweep) g ORDER BY g.last DESC";

}  // namespace

Result<SweepStore> SweepStore::Open(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(ReportStore runs, ReportStore::Open(path, options));
  return SweepStore(std::move(runs));
}

Result<SweepStore> SweepStore::OpenForReading(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(ReportStore runs, ReportStore::OpenForReading(path, options));
  return SweepStore(std::move(runs));
}

Result<int64_t> SweepStore::DropUnfinished(const std::string& sweep) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "dropping the tags of sweep " + sweep + "'s unfinished runs";
  RC_ASSIGN_OR_RETURN(Stmt drop, db.Prepare(std::string("DELETE FROM sweep_runs WHERE sweep = ?1 AND run_id NOT IN "
                                                        "(SELECT id FROM runs WHERE status IN ") +
                                                kFinishedStatuses + ")",
                                            what));
  drop.Bind(1, std::string_view(sweep));
  RC_RETURN_IF_ERROR(drop.Run(what));
  return db.Changes();
}

Result<bool> SweepStore::HasFinished(const std::string& sweep, const std::string& point, uint64_t seed) {
  const std::string what = "looking up seed " + std::to_string(seed) + " of sweep " + sweep;
  // Cached: a sweep asks once per run it is about to make. The statuses are kFinishedStatuses'.
  RC_ASSIGN_OR_RETURN(Stmt* find,
                      StoreAccess::Cached(runs_,
                                          "SELECT 1 FROM sweep_runs s JOIN runs r ON r.id = s.run_id WHERE s.sweep = ?1 "
                                          "AND s.point = ?2 AND s.seed = ?3 AND r.status IN ('passed', 'failed', "
                                          "'aborted') LIMIT 1",
                                          what));
  find->Bind(1, std::string_view(sweep));
  find->Bind(2, std::string_view(point));
  find->Bind(3, std::string_view(std::to_string(seed)));
  Result<bool> found = find->Step(what);
  find->Reset();
  return found;
}

Status SweepStore::Tag(const SweepTag& tag) {
  const std::string what = ForRun("tagging sweep " + tag.sweep + "'s", tag.run);
  RC_ASSIGN_OR_RETURN(Stmt* add, StoreAccess::Cached(runs_,
                                                      "INSERT INTO sweep_runs(run_id, sweep, point, seed, wall_ms, "
                                                      "cpu_ms) SELECT id, ?2, ?3, ?4, ?5, ?6 FROM runs WHERE id = ?1",
                                                      what));
  add->Bind(1, tag.run);
  add->Bind(2, std::string_view(tag.sweep));
  add->Bind(3, std::string_view(tag.point));
  add->Bind(4, std::string_view(std::to_string(tag.seed)));
  add->Bind(5, tag.wall_ms);
  add->Bind(6, tag.cpu_ms);
  RC_RETURN_IF_ERROR(add->Run(what));
  if (StoreAccess::DbOf(runs_).Changes() == 0)
    return Status::NotFound(what + ": no run " + std::to_string(tag.run) + " in report '" + path() + "'");
  return Status::Ok();
}

Result<std::string> SweepStore::LatestSweep() {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "finding the latest sweep";
  RC_ASSIGN_OR_RETURN(Stmt latest, db.Prepare("SELECT sweep FROM sweep_runs ORDER BY run_id DESC LIMIT 1", what));
  RC_ASSIGN_OR_RETURN(bool row, latest.Step(what));
  if (!row) return Status::NotFound("report '" + path() + "' holds no sweep");
  return latest.Text(0);
}

Status SweepStore::ForEachRun(const std::string& sweep, const std::function<Status(const SweepRunRow&)>& fn) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "reading the runs of sweep " + sweep;
  // In the order of the index by (sweep, point, seed): grouped by point without a sort.
  RC_ASSIGN_OR_RETURN(Stmt stmt, db.Prepare("SELECT s.run_id, s.point, s.seed, s.wall_ms, s.cpu_ms, r.status, r.plan_name "
                                            "FROM sweep_runs s JOIN runs r ON r.id = s.run_id WHERE s.sweep = ?1 "
                                            "ORDER BY s.point, s.seed, s.run_id",
                                            what));
  stmt.Bind(1, std::string_view(sweep));
  int64_t rows = 0;
  for (;; ++rows) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    SweepRunRow r;
    r.tag = {stmt.Int(0), sweep, stmt.Text(1), SeedOf(stmt.Text(2)), stmt.OptInt(3), stmt.OptInt(4)};
    r.status = stmt.Text(5);
    r.plan_name = stmt.Text(6);
    RC_ASSIGN_OR_RETURN(r.metrics, runs_.ReadMetrics(r.tag.run));
    RC_RETURN_IF_ERROR(fn(r));
  }
  if (rows == 0) return Status::NotFound("report '" + path() + "' has no runs of sweep " + sweep);
  return Status::Ok();
}

Result<std::vector<SweepListRow>> ListSweeps(const ReportStore& store) {
  const std::string what = "listing sweeps";
  RC_ASSIGN_OR_RETURN(Stmt s, StoreAccess::DbOf(store).Prepare(kSweepListSql, what));
  std::vector<SweepListRow> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back({s.Text(0), s.Text(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5), s.Int(6)});
  }
}

}  // namespace rackchaos::reports
