// ReportStore::AddGates / ReadGates (schema v2) and the typed event readers used by timelines.
#include <limits>
#include <string>
#include <vector>

#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {

Status ReportStore::AddGates(int64_t run, const std::vector<GateRow>& gates) {
  const std::string what = ForRun("storing expectation results of", run);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  // Replacing keeps a re-evaluation idempotent, as AddMetrics does.
  RC_RETURN_IF_ERROR(state_->db.Exec("DELETE FROM gates WHERE run_id = " + std::to_string(run), what));
  RC_ASSIGN_OR_RETURN(Stmt* s, state_->Cached(
      "INSERT INTO gates(run_id, ord, text, metric, op, value, actual, passed, message) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < gates.size(); ++i) {
    const GateRow& g = gates[i];
    s->Bind(1, run);
    s->Bind(2, static_cast<int64_t>(i));
    s->Bind(3, g.text);
    s->Bind(4, g.metric);
    s->Bind(5, g.op);
    s->Bind(6, g.value);
    // A missing metric evaluates as infinitely late; SQLite would turn NaN into NULL anyway.
    if (g.actual == std::numeric_limits<double>::infinity() || g.actual != g.actual) s->BindNull(7);
    else s->Bind(7, g.actual);
    s->Bind(8, static_cast<int64_t>(g.passed ? 1 : 0));
    s->Bind(9, g.message);
    RC_RETURN_IF_ERROR(s->Run(what + " (" + g.text + ")"));
  }
  return txn.Commit(what);
}

Result<std::vector<GateRow>> ReportStore::ReadGates(int64_t run) const {
  const std::string what = ForRun("reading expectation results of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<GateRow> rows;
  RC_RETURN_IF_ERROR(ForEachRow(state_->db,
      "SELECT text, metric, op, value, actual, passed, message FROM gates WHERE run_id = ? "
      "ORDER BY ord", run, what, [&](const Stmt& s) {
        double actual = s.IsNull(4) ? std::numeric_limits<double>::infinity() : s.Double(4);
        rows.push_back({s.Text(0), s.Text(1), s.Text(2), s.Double(3), actual, s.Int(5) != 0,
                        s.Text(6)});
      }));
  return rows;
}

Result<std::vector<FaultRow>> ReportStore::ReadFaults(int64_t run) const {
  const std::string what = ForRun("reading faults of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<FaultRow> rows;
  RC_RETURN_IF_ERROR(ForEachRow(state_->db,
      "SELECT fault_id, kind, target_id, port, selector, detail, injected_us, reverted_us "
      "FROM faults WHERE run_id = ? ORDER BY seq", run, what, [&](const Stmt& s) {
        rows.push_back({static_cast<FaultId>(s.Int(0)), s.Text(1), IdOr(s, 2, kNoComponent),
                        s.IsNull(3) ? -1 : static_cast<int>(s.Int(3)), s.Text(4), s.Text(5),
                        Duration::Micros(s.Int(6)), OptDuration(s, 7)});
      }));
  return rows;
}

Result<std::vector<DetectionRow>> ReportStore::ReadDetections(int64_t run) const {
  const std::string what = ForRun("reading detections of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<DetectionRow> rows;
  RC_RETURN_IF_ERROR(ForEachRow(state_->db,
      "SELECT t_us, detection_id, detector, component_id, symptom FROM detections "
      "WHERE run_id = ? ORDER BY seq", run, what, [&](const Stmt& s) {
        rows.push_back({Duration::Micros(s.Int(0)), IdOr(s, 1, kNoDetection), s.Text(2),
                        IdOr(s, 3, kNoComponent), s.Text(4)});
      }));
  return rows;
}

Result<std::vector<IsolationRow>> ReportStore::ReadIsolations(int64_t run) const {
  const std::string what = ForRun("reading isolations of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<IsolationRow> rows;
  RC_RETURN_IF_ERROR(ForEachRow(state_->db,
      "SELECT t_us, component_id, domain, reason FROM isolations WHERE run_id = ? ORDER BY seq",
      run, what, [&](const Stmt& s) {
        rows.push_back({Duration::Micros(s.Int(0)), IdOr(s, 1, kNoComponent), s.Text(2), s.Text(3)});
      }));
  return rows;
}

Result<std::vector<JobEventRow>> ReportStore::ReadJobEvents(int64_t run) const {
  const std::string what = ForRun("reading job events of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  std::vector<JobEventRow> rows;
  RC_RETURN_IF_ERROR(ForEachRow(state_->db,
      "SELECT t_us, job_id, state, steps, speed, gpus, cause_fault_id FROM job_events "
      "WHERE run_id = ? ORDER BY seq", run, what, [&](const Stmt& s) {
        rows.push_back({Duration::Micros(s.Int(0)), IdOr(s, 1, kNoJob), s.Text(2), s.Double(3),
                        s.Double(4), static_cast<int>(s.Int(5)), IdOr(s, 6, kNoFault)});
      }));
  return rows;
}

Result<std::vector<ActionRow>> ReportStore::ReadActions(int64_t run, std::string_view action) const {
  const std::string what = ForRun("reading actions of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare("SELECT t_us, action, component_id, job_id, ok, detail FROM actions "
                                                 "WHERE run_id = ?1 AND (?2 = '' OR action = ?2) ORDER BY t_us, seq",
                                                 what));
  s.Bind(1, run);
  s.Bind(2, action);
  std::vector<ActionRow> rows;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return rows;
    rows.push_back({Duration::Micros(s.Int(0)), s.Text(1), IdOr(s, 2, kNoComponent), IdOr(s, 3, kNoJob), s.Int(4) != 0,
                    s.Text(5)});
  }
}

}  // namespace rackchaos::reports
