// ReportStore readers for runs, components and jobs: plain structs for renderers.
#include <cstdlib>
#include <string>
#include <vector>

#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

constexpr const char* kRunColumns =
    "SELECT id, plan_name, plan_path, plan_text, plan_hash, seed, version, host, backend, "
    "started_wall, command_line, status, exit_code, ended_wall, failed_reason, ledger, ledger_run FROM runs";

RunRow RunFromRow(const Stmt& s) {
  RunRow r;
  r.id = s.Int(0);
  r.info.plan_name = s.Text(1);
  r.info.plan_path = s.Text(2);
  r.info.plan_text = s.Text(3);
  r.info.plan_hash = s.Text(4);
  // Seeds are stored as decimal text because a uint64 may not fit SQLite's signed integer.
  r.info.seed = std::strtoull(s.Text(5).c_str(), nullptr, 10);
  r.info.version = s.Text(6);
  r.info.host = s.Text(7);
  r.info.backend = s.Text(8);
  r.info.started_wall = s.Text(9);
  r.info.command_line = s.Text(10);
  r.status = s.Text(11);
  if (!s.IsNull(12)) r.exit_code = static_cast<int>(s.Int(12));
  r.ended_wall = s.Text(13);
  r.failed_reason = s.Text(14);
  // NULL in rows stored before schema version 16, which every later row sets (empty and 0 without a ledger).
  r.ledger_unrecorded = s.IsNull(16);
  r.info.ledger = s.Text(15);
  r.info.ledger_run = r.ledger_unrecorded ? 0 : s.Int(16);
  return r;
}

}  // namespace

Result<int64_t> ReportStore::LatestRun() const {
  const std::string what = "finding the latest run";
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare("SELECT max(id) FROM runs", what));
  RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
  if (!row || stmt.IsNull(0)) {
    return Status::NotFound("report '" + path() + "' has no runs yet");
  }
  return stmt.Int(0);
}

Result<std::vector<RunRow>> ReportStore::ListRuns() const {
  const std::string what = "listing runs";
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare(std::string(kRunColumns) + " ORDER BY id", what));
  std::vector<RunRow> runs;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    runs.push_back(RunFromRow(stmt));
  }
  return runs;
}

Result<RunRow> ReportStore::ReadRun(int64_t run) const {
  const std::string what = ForRun("reading", run);
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare(std::string(kRunColumns) + " WHERE id = ?", what));
  stmt.Bind(1, run);
  RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
  if (!row) {
    return Status::NotFound("no run " + std::to_string(run) + " in report '" + path() +
                            "'; list its runs with `sqlite3 " + path() + " 'select id, plan_name from runs'`");
  }
  return RunFromRow(stmt);
}

Result<std::vector<ComponentRow>> ReportStore::ReadComponents(int64_t run) const {
  const std::string what = ForRun("reading components of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<ComponentRow> rows;
  const char* sql = "SELECT id, name, kind, parent_id, serial FROM components WHERE run_id = ? ORDER BY id";
  RC_RETURN_IF_ERROR(ForEachRow(state_->db, sql, run, what, [&](const Stmt& s) { rows.push_back(ComponentFrom(s)); }));
  return rows;
}

Result<std::vector<JobRow>> ReportStore::ReadJobs(int64_t run) const {
  const std::string what = ForRun("reading jobs of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare(
      "SELECT id, name, gpus, nominal_step_s FROM jobs WHERE run_id = ? ORDER BY id", what));
  stmt.Bind(1, run);
  std::vector<JobRow> rows;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    rows.push_back({IdOr(stmt, 0, kNoJob), stmt.Text(1), static_cast<int>(stmt.Int(2)),
                    stmt.Double(3)});
  }
  return rows;
}

}  // namespace rackchaos::reports
