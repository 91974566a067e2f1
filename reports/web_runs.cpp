// The runs list, a database's overview and a run's events after a sequence number, for serve.
#include <cstdlib>
#include <set>

#include "reports/rack_subtree.h"
#include "reports/store_state.h"
#include "reports/web_queries.h"

namespace rackchaos::reports {
namespace {

const std::set<std::string> kRunStatuses = {"running", "passed", "failed", "error", "interrupted", "aborted"};

// The per-row columns read from the run's own rows by primary key (fault_metrics and faults are keyed
// by run), so a page of 50 costs 50 lookups whatever the database holds.
constexpr const char* kRunListColumns =
    "SELECT r.id, r.plan_name, r.status, r.backend, r.host, r.started_wall, coalesce(r.ended_wall, ''),"
    " r.failed_reason, r.seed,"
    " (SELECT count(*) FROM faults f WHERE f.run_id = r.id),"
    " (SELECT count(*) FROM fault_metrics m WHERE m.run_id = r.id AND m.ttr_us IS NULL),"
    " (SELECT max(m.ttr_us) FROM fault_metrics m WHERE m.run_id = r.id)"
    " FROM runs r";

// The WHERE clause of a filter; `binds` gets the text of each ?N in order (the rack serial is ?1 when
// present, as RackRootsSql wants it).
std::string RunFilterWhere(const RunFilter& f, std::vector<std::string>& binds) {
  std::vector<std::string> terms;
  auto param = [&](const std::string& value) {
    binds.push_back(value);
    return "?" + std::to_string(binds.size());
  };
  if (!f.rack.empty()) {
    param(f.rack);
    terms.push_back(std::string("r.id IN (SELECT rt.run_id FROM run_topologies rt WHERE rt.topology_id IN"
                                " (SELECT topology_id FROM (") +
                    RackRootsSql() + ")))");
  }
  if (!f.plan.empty()) terms.push_back("r.plan_name = " + param(f.plan));
  if (!f.status.empty()) terms.push_back("r.status = " + param(f.status));
  if (!f.backend.empty()) terms.push_back("r.backend = " + param(f.backend));
  if (!f.since.empty()) terms.push_back("r.started_wall >= " + param(f.since));
  if (!f.until.empty()) {
    const std::string p = param(f.until);
    terms.push_back("substr(r.started_wall, 1, length(" + p + ")) <= " + p);
  }
  std::string out;
  for (const std::string& t : terms) out += (out.empty() ? " WHERE " : " AND ") + t;
  return out;
}

void BindRunFilter(Stmt& stmt, const std::vector<std::string>& binds) {
  for (size_t i = 0; i < binds.size(); ++i) stmt.Bind(static_cast<int>(i + 1), std::string_view(binds[i]));
}

RunListRow RunListRowFrom(const Stmt& s) {
  RunListRow r;
  r.id = s.Int(0);
  r.plan_name = s.Text(1);
  r.status = s.Text(2);
  r.backend = s.Text(3);
  r.host = s.Text(4);
  r.started_wall = s.Text(5);
  r.ended_wall = s.Text(6);
  r.failed_reason = s.Text(7);
  r.seed = std::strtoull(s.Text(8).c_str(), nullptr, 10);
  r.faults = static_cast<int>(s.Int(9));
  r.unrecovered = static_cast<int>(s.Int(10));
  if (!s.IsNull(11)) r.ttr_max_s = static_cast<double>(s.Int(11)) / 1e6;
  return r;
}

}  // namespace

Result<RunListPage> ListRunsPage(const ReportStore& store, const RunFilter& filter) {
  if (!filter.status.empty() && !kRunStatuses.count(filter.status))
    return Status::Invalid("unknown status '" + filter.status +
                           "'; known: running, passed, failed, error, interrupted, aborted");
  if (!filter.backend.empty() && filter.backend != "sim" && filter.backend != "ssh")
    return Status::Invalid("unknown backend '" + filter.backend + "'; known: sim, ssh");
  if (filter.limit < 1 || filter.limit > 500) return Status::Invalid("limit must be 1..500");
  if (filter.before < 0) return Status::Invalid("before must be a run id");
  Db& db = StoreAccess::DbOf(store);
  const std::string what = "listing runs";
  std::vector<std::string> binds;
  const std::string where = RunFilterWhere(filter, binds);
  RunListPage page;
  {
    RC_ASSIGN_OR_RETURN(Stmt count, db.Prepare("SELECT count(*) FROM runs r" + where, what));
    BindRunFilter(count, binds);
    RC_ASSIGN_OR_RETURN(bool row, count.Step(what));
    page.matching = row ? count.Int(0) : 0;
  }
  std::string sql = std::string(kRunListColumns) + where;
  if (filter.before > 0)
    sql += (where.empty() ? " WHERE" : " AND") + std::string(" r.id < ") + std::to_string(filter.before);
  sql += " ORDER BY r.id DESC LIMIT " + std::to_string(filter.limit + 1);
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql, what));
  BindRunFilter(s, binds);
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    if (static_cast<int>(page.runs.size()) == filter.limit) {  // one more than a page: there is a next one
      page.next_before = page.runs.back().id;
      break;
    }
    page.runs.push_back(RunListRowFrom(s));
  }
  return page;
}

Result<std::vector<std::string>> ListPlanNames(const ReportStore& store, int limit) {
  const std::string what = "listing plan names";
  RC_ASSIGN_OR_RETURN(Stmt s,
                      StoreAccess::DbOf(store).Prepare("SELECT DISTINCT plan_name FROM runs ORDER BY plan_name LIMIT ?1", what));
  s.Bind(1, static_cast<int64_t>(limit));
  std::vector<std::string> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back(s.Text(0));
  }
}

Result<DbOverview> ReadOverview(const ReportStore& store) {
  Db& db = StoreAccess::DbOf(store);
  const std::string what = "reading the database's overview";
  DbOverview o;
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT status, count(*), max(id) FROM runs GROUP BY status", what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    o.by_status[s.Text(0)] = s.Int(1);
    o.runs += s.Int(1);
    if (!o.latest_run || s.Int(2) > *o.latest_run) o.latest_run = s.Int(2);
  }
  RC_ASSIGN_OR_RETURN(o.sweeps, db.QueryInt("SELECT count(DISTINCT sweep) FROM sweep_runs", what));
  RC_ASSIGN_OR_RETURN(o.qualifications, db.QueryInt("SELECT count(*) FROM qualifications", what));
  return o;
}

Result<std::vector<RackRecoveryTotal>> ReadRackRecoveryTotals(const ReportStore& store) {
  const std::string what = "reading recoveries by rack";
  RC_ASSIGN_OR_RETURN(Stmt s,
                      StoreAccess::DbOf(store).Prepare("SELECT CASE WHEN instr(target, '.') > 0"
                                         " THEN substr(target, 1, instr(target, '.') - 1) ELSE target END AS rack,"
                                         " count(*), total(ttr_us) / 1e6 FROM fault_metrics"
                                         " WHERE ttr_us IS NOT NULL GROUP BY rack ORDER BY rack",
                                         what));
  std::vector<RackRecoveryTotal> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back({s.Text(0), s.Int(1), s.Double(2)});
  }
}

Result<std::vector<EventLogRow>> ReadEventsAfter(const ReportStore& store, int64_t run, int64_t after, int limit) {
  if (limit < 1 || limit > 5000) return Status::Invalid("limit must be 1..5000");
  RC_RETURN_IF_ERROR(store.ReadRun(run).status());
  const std::string what = "reading the events of run " + std::to_string(run);
  RC_ASSIGN_OR_RETURN(Stmt s, StoreAccess::DbOf(store).Prepare("SELECT seq, t_s, type, coalesce(component, ''), coalesce(job, ''),"
                                                 " fault_id, detail FROM event_log WHERE run_id = ?1 AND seq > ?2"
                                                 " ORDER BY seq LIMIT ?3",
                                                 what));
  s.Bind(1, run);
  s.Bind(2, after);
  s.Bind(3, static_cast<int64_t>(limit));
  std::vector<EventLogRow> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back({s.Int(0), s.Double(1), s.Text(2), s.Text(3), s.Text(4), s.OptInt(5), s.Text(6)});
  }
}

}  // namespace rackchaos::reports
