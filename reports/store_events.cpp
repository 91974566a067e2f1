// ReportStore::AppendEvents and ReadEvents: every event goes to the flat `events` table and to the
// typed table of its kind.
#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// Fixed "%g"-style precision: the same double always prints the same text, so details stay
// deterministic and short.
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Detection and component ids share one integer type.
std::string JoinIds(const std::vector<uint32_t>& ids) {
  std::string out;
  for (uint32_t id : ids) {
    if (!out.empty()) out += ',';
    out += std::to_string(id);
  }
  return out;
}

// The columns of `events` that every type shares besides seq, time and type.
struct Common {
  ComponentId component = kNoComponent;
  JobId job = kNoJob;
  FaultId fault = kNoFault;
  std::string detail;
};

// Writes the typed row of one event and describes it for the flat table. One overload per event
// type; std::visit picks it, so a new event type fails to compile until it is handled here.
class EventWriter {
 public:
  EventWriter(ReportStore::State& state, int64_t run, const std::string& what)
      : state_(state), run_(run), what_(what) {}

  Status Write(int64_t seq, const Event& event) {
    seq_ = seq;
    at_ = event.at;
    Common common;
    RC_RETURN_IF_ERROR(std::visit([&](const auto& body) { return Typed(body, common); }, event.body));
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO events(run_id, seq, t_us, type, component_id, job_id, fault_id, detail) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    s->Bind(4, std::string_view(EventTypeName(event.body)));
    BindId(*s, 5, common.component, kNoComponent);
    BindId(*s, 6, common.job, kNoJob);
    BindId(*s, 7, common.fault, kNoFault);
    s->Bind(8, common.detail);
    return s->Run(what_);
  }

 private:
  // The cached statement with run_id, seq and t_us bound as parameters 1-3.
  Result<Stmt*> Prepared(const char* sql) {
    RC_ASSIGN_OR_RETURN(Stmt* s, state_.Cached(sql, what_));
    s->Bind(1, run_);
    s->Bind(2, seq_);
    s->Bind(3, at_.us);
    return s;
  }

  Status Typed(const FaultInjected& e, Common& c) {
    c = {e.target, kNoJob, e.fault, e.kind + " on '" + e.selector + "'"};
    if (e.port >= 0) c.detail += " port " + std::to_string(e.port);
    if (!e.detail.empty()) c.detail += ": " + e.detail;
    // t_us doubles as injected_us; the column order follows from binding 1-3 first.
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO faults(run_id, seq, injected_us, fault_id, kind, target_id, port, selector, "
        "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    s->Bind(4, static_cast<int64_t>(e.fault));
    s->Bind(5, e.kind);
    BindId(*s, 6, e.target, kNoComponent);
    if (e.port >= 0) s->Bind(7, static_cast<int64_t>(e.port));
    else s->BindNull(7);
    s->Bind(8, e.selector);
    s->Bind(9, e.detail);
    return s->Run(what_);
  }

  Status Typed(const FaultReverted& e, Common& c) {
    c = {kNoComponent, kNoJob, e.fault, "reverted" + (e.detail.empty() ? "" : ": " + e.detail)};
    // Closes the most recent still-open injection of this fault; a revert without an injection
    // changes nothing here but stays visible in `events`.
    RC_ASSIGN_OR_RETURN(Stmt* s, state_.Cached(
        "UPDATE faults SET reverted_us = ?, revert_detail = ? WHERE run_id = ? AND seq = "
        "(SELECT max(seq) FROM faults WHERE run_id = ? AND fault_id = ? AND reverted_us IS NULL)",
        what_));
    s->Bind(1, at_.us);
    s->Bind(2, e.detail);
    s->Bind(3, run_);
    s->Bind(4, run_);
    s->Bind(5, static_cast<int64_t>(e.fault));
    return s->Run(what_);
  }

  Status Typed(const PhysicsChanged& e, Common& c) {
    c = {e.component, kNoJob, e.cause, e.what + " value=" + Num(e.value)};
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO physics(run_id, seq, t_us, component_id, what, value, cause_fault_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    BindId(*s, 4, e.component, kNoComponent);
    s->Bind(5, e.what);
    s->Bind(6, e.value);
    BindId(*s, 7, e.cause, kNoFault);
    return s->Run(what_);
  }

  Status Typed(const Detected& e, Common& c) {
    c = {e.component, kNoJob, kNoFault,
         "detection " + std::to_string(e.detection) + " by " + e.detector + ": " + e.symptom};
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO detections(run_id, seq, t_us, detection_id, detector, component_id, symptom) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    BindId(*s, 4, e.detection, kNoDetection);
    s->Bind(5, e.detector);
    BindId(*s, 6, e.component, kNoComponent);
    s->Bind(7, e.symptom);
    return s->Run(what_);
  }

  Status Typed(const Isolated& e, Common& c) {
    std::string because = JoinIds(e.because);
    c = {e.component, kNoJob, kNoFault,
         "isolated " + e.domain + " for detections [" + because + "]: " + e.reason};
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO isolations(run_id, seq, t_us, component_id, domain, detection_ids, reason) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    BindId(*s, 4, e.component, kNoComponent);
    s->Bind(5, e.domain);
    s->Bind(6, because);
    s->Bind(7, e.reason);
    return s->Run(what_);
  }

  Status Typed(const ActionTaken& e, Common& c) {
    c = {e.component, e.job, kNoFault, e.action + (e.ok ? " ok" : " FAILED")};
    if (!e.detail.empty()) c.detail += ": " + e.detail;
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO actions(run_id, seq, t_us, action, component_id, job_id, ok, detail) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    s->Bind(4, e.action);
    BindId(*s, 5, e.component, kNoComponent);
    BindId(*s, 6, e.job, kNoJob);
    s->Bind(7, static_cast<int64_t>(e.ok ? 1 : 0));
    s->Bind(8, e.detail);
    return s->Run(what_);
  }

  Status Typed(const JobChanged& e, Common& c) {
    c = {kNoComponent, e.job, e.cause,
         std::string(JobStateName(e.state)) + " steps=" + Num(e.steps) + " speed=" + Num(e.speed) +
             " gpus=" + std::to_string(e.gpus)};
    if (e.lost_work.us > 0) c.detail += " lost_work=" + FormatDuration(e.lost_work);
    if (!e.detail.empty()) c.detail += ": " + e.detail;
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO job_events(run_id, seq, t_us, job_id, state, steps, step_time_s, speed, gpus, "
        "lost_work_us, cause_fault_id, detail, trays) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    BindId(*s, 4, e.job, kNoJob);
    s->Bind(5, std::string_view(JobStateName(e.state)));
    s->Bind(6, e.steps);
    s->Bind(7, e.step_time_s);
    s->Bind(8, e.speed);
    s->Bind(9, static_cast<int64_t>(e.gpus));
    s->Bind(10, e.lost_work.us);
    BindId(*s, 11, e.cause, kNoFault);
    s->Bind(12, e.detail);
    s->Bind(13, JoinIds(e.trays));
    return s->Run(what_);
  }

  Status Typed(const Checkpointed& e, Common& c) {
    c = {kNoComponent, e.job, kNoFault, "checkpoint at step " + Num(e.step)};
    RC_ASSIGN_OR_RETURN(Stmt* s, Prepared(
        "INSERT INTO checkpoints(run_id, seq, t_us, job_id, step) VALUES (?, ?, ?, ?, ?)"));
    BindId(*s, 4, e.job, kNoJob);
    s->Bind(5, e.step);
    return s->Run(what_);
  }

  ReportStore::State& state_;
  int64_t run_;
  const std::string& what_;
  int64_t seq_ = 0;
  Time at_{};
};

}  // namespace

Status ReportStore::AppendEvents(int64_t run, const std::vector<Event>& events) {
  const std::string what = ForRun("appending events to", run);
  // One transaction per batch: a million inserts then cost one fsync, and a failed batch leaves
  // nothing half-written.
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* last, state_->Cached(
      "SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", what));
  last->Bind(1, run);
  Result<bool> row = last->Step(what);
  int64_t seq = row.ok() && *row ? last->Int(0) : 0;
  last->Reset();
  if (!row.ok()) return row.status();

  EventWriter writer(*state_, run, what);
  for (const Event& event : events) {
    RC_RETURN_IF_ERROR(writer.Write(++seq, event));
  }
  return txn.Commit(what);
}

Result<std::vector<EventRow>> ReportStore::ReadEvents(int64_t run, int64_t limit) const {
  const std::string what = ForRun("reading events of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare(
      "SELECT seq, t_us, type, component_id, job_id, fault_id, detail FROM events "
      "WHERE run_id = ? ORDER BY seq LIMIT ?", what));
  stmt.Bind(1, run);
  stmt.Bind(2, limit);
  std::vector<EventRow> rows;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    rows.push_back({stmt.Int(0), Duration::Micros(stmt.Int(1)), stmt.Text(2),
                    IdOr(stmt, 3, kNoComponent), IdOr(stmt, 4, kNoJob), IdOr(stmt, 5, kNoFault),
                    stmt.Text(6)});
  }
  return rows;
}

}  // namespace rackchaos::reports
