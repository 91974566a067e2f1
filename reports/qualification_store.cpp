#include "reports/qualification_store.h"

#include <string>
#include <utility>

#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

constexpr const char* kQualificationColumns =
    "id, rack, suite, started_wall, coalesce(ended_wall, ''), verdict, exit_code, reason, command_line";

QualificationRow QualificationFrom(const Stmt& s) {
  QualificationRow q;
  q.id = s.Int(0);
  q.rack = s.Text(1);
  q.suite = s.Text(2);
  q.started_wall = s.Text(3);
  q.ended_wall = s.Text(4);
  q.verdict = s.Text(5);
  if (!s.IsNull(6)) q.exit_code = static_cast<int>(s.Int(6));
  q.reason = s.Text(7);
  q.command_line = s.Text(8);
  return q;
}

bool IsFinalVerdict(const std::string& v) {
  return v == "passed" || v == "failed" || v == "error" || v == "interrupted";
}

}  // namespace

Result<QualificationStore> QualificationStore::Open(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(ReportStore runs, ReportStore::Open(path, options));
  return QualificationStore(std::move(runs));
}

Result<QualificationStore> QualificationStore::OpenForReading(const std::string& path, const OpenOptions& options) {
  RC_ASSIGN_OR_RETURN(ReportStore runs, ReportStore::OpenForReading(path, options));
  return QualificationStore(std::move(runs));
}

Result<int64_t> QualificationStore::Begin(const std::string& rack, const std::string& suite,
                                          const std::string& started_wall, const std::string& command_line) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "recording the qualification of rack '" + rack + "'";
  RC_ASSIGN_OR_RETURN(Stmt add,
                      db.Prepare("INSERT INTO qualifications(rack, suite, started_wall, verdict, command_line) "
                                 "VALUES (?1, ?2, ?3, 'running', ?4) RETURNING id",
                                 what));
  add.Bind(1, std::string_view(rack));
  add.Bind(2, std::string_view(suite));
  add.Bind(3, std::string_view(started_wall));
  add.Bind(4, std::string_view(command_line));
  // A lone statement is its own transaction; stepping it to DONE is what commits the row.
  RC_ASSIGN_OR_RETURN(bool row, add.Step(what));
  if (!row) return Status::Internal(what + ": no id returned");
  const int64_t id = add.Int(0);
  RC_RETURN_IF_ERROR(add.Run(what));
  return id;
}

Status QualificationStore::Finish(int64_t id, const std::vector<QualificationPlanRow>& plans,
                                  const std::string& verdict, int exit_code, const std::string& ended_wall,
                                  const std::string& reason) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "recording the verdicts of qualification " + std::to_string(id);
  if (!IsFinalVerdict(verdict))
    return Status::Invalid(what + ": verdict '" + verdict + "' is not one of passed, failed, error, interrupted");
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, what));
  RC_ASSIGN_OR_RETURN(Stmt fin, db.Prepare("UPDATE qualifications SET ended_wall = ?1, verdict = ?2, exit_code = ?3, "
                                           "reason = ?4 WHERE id = ?5",
                                           what));
  fin.Bind(1, std::string_view(ended_wall));
  fin.Bind(2, std::string_view(verdict));
  fin.Bind(3, static_cast<int64_t>(exit_code));
  fin.Bind(4, std::string_view(reason));
  fin.Bind(5, id);
  RC_RETURN_IF_ERROR(fin.Run(what));
  if (db.Changes() == 0)
    return Status::NotFound(what + ": no qualification " + std::to_string(id) + " in report '" + path() + "'");
  RC_ASSIGN_OR_RETURN(Stmt add, db.Prepare("INSERT INTO qualification_plans(qualification_id, seq, stage, plan_path, "
                                           "run_id, verdict, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                           what));
  int64_t seq = 0;
  for (const QualificationPlanRow& p : plans) {
    add.Bind(1, id);
    add.Bind(2, ++seq);
    add.Bind(3, std::string_view(p.stage));
    add.Bind(4, std::string_view(p.plan_path));
    add.Bind(5, p.run_id);
    add.Bind(6, std::string_view(p.verdict));
    add.Bind(7, std::string_view(p.reason));
    RC_RETURN_IF_ERROR(add.Run(what + " (" + p.plan_path + ")"));
  }
  return txn.Commit(what);
}

namespace {

// Appends qualification q.id's plans, in suite order, to q.plans.
Status ReadPlans(Db& db, QualificationRow& q, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt plans, db.Prepare("SELECT stage, plan_path, run_id, verdict, reason, seq FROM "
                                             "qualification_plans WHERE qualification_id = ?1 ORDER BY seq",
                                             what));
  plans.Bind(1, q.id);
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, plans.Step(what));
    if (!row) return Status::Ok();
    q.plans.push_back({plans.Text(0), plans.Text(1), plans.OptInt(2), plans.Text(3), plans.Text(4), plans.Int(5)});
  }
}

}  // namespace

Result<QualificationRow> QualificationStore::Read(int64_t id) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "reading qualification " + std::to_string(id);
  // One snapshot: a writer finishing the qualification meanwhile is seen whole or not at all.
  RC_ASSIGN_OR_RETURN(Transaction snapshot, Transaction::BeginRead(db, what));
  QualificationRow q;
  {
    RC_ASSIGN_OR_RETURN(
        Stmt one,
        db.Prepare(std::string("SELECT ") + kQualificationColumns + " FROM qualifications WHERE id = ?1", what));
    one.Bind(1, id);
    RC_ASSIGN_OR_RETURN(bool found, one.Step(what));
    if (!found) return Status::NotFound(what + ": no such qualification in report '" + path() + "'");
    q = QualificationFrom(one);
    RC_RETURN_IF_ERROR(ReadPlans(db, q, what));
  }  // statements finalized before the snapshot ends
  RC_RETURN_IF_ERROR(snapshot.Commit(what));
  return q;
}

Result<std::vector<QualificationRow>> QualificationStore::List(const std::string& rack) {
  Db& db = StoreAccess::DbOf(runs_);
  const std::string what = "listing qualifications";
  RC_ASSIGN_OR_RETURN(Stmt all, db.Prepare(std::string("SELECT ") + kQualificationColumns +
                                               " FROM qualifications WHERE ?1 = '' OR rack = ?1 ORDER BY id",
                                           what));
  all.Bind(1, std::string_view(rack));
  std::vector<QualificationRow> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, all.Step(what));
    if (!row) return out;
    out.push_back(QualificationFrom(all));
  }
}

Result<std::vector<QualificationRow>> ReadRecentQualifications(const ReportStore& store, const std::string& rack,
                                                               int limit) {
  Db& db = StoreAccess::DbOf(store);
  const std::string what = "reading qualification records";
  RC_ASSIGN_OR_RETURN(Transaction snapshot, Transaction::BeginRead(db, what));
  std::vector<QualificationRow> out;
  {
    RC_ASSIGN_OR_RETURN(Stmt all, db.Prepare(std::string("SELECT ") + kQualificationColumns +
                                                 " FROM qualifications WHERE ?1 = '' OR rack = ?1 ORDER BY id DESC"
                                                 " LIMIT ?2",
                                             what));
    all.Bind(1, std::string_view(rack));
    all.Bind(2, static_cast<int64_t>(limit));
    for (;;) {
      RC_ASSIGN_OR_RETURN(bool row, all.Step(what));
      if (!row) break;
      out.push_back(QualificationFrom(all));
    }
    for (QualificationRow& q : out) RC_RETURN_IF_ERROR(ReadPlans(db, q, what));
  }  // statements finalized before the snapshot ends
  RC_RETURN_IF_ERROR(snapshot.Commit(what));
  return out;
}

}  // namespace rackchaos::reports
