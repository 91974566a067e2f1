// A rack serial's page for serve: every run that touched it (counted whole, the newest few in detail), the
// parts isolated under it, its lemons and its qualification records.
#include <algorithm>
#include <cstdlib>

#include "reports/rack_subtree.h"
#include "reports/store_state.h"
#include "reports/web_queries.h"

namespace rackchaos::reports {
namespace {

// The runs whose cluster holds the subtree (temp.history_subtree, filled by FillRackSubtree).
constexpr const char* kRackTouching =
    " FROM runs r JOIN run_topologies rt ON rt.run_id = r.id"
    " WHERE rt.topology_id IN (SELECT DISTINCT topology_id FROM temp.history_subtree)";

// Fault rows under the subtree of run r (rt its topology); `col` aggregated over their scored metrics.
std::string RackUnderSubtree(const std::string& aggregate) {
  return " (SELECT " + aggregate +
         " FROM fault_metrics m JOIN faults f INDEXED BY faults_by_id"
         " ON f.run_id = m.run_id AND f.fault_id = m.fault_id WHERE m.run_id = r.id"
         " AND (+rt.topology_id, +f.target_id) IN (SELECT topology_id, id FROM temp.history_subtree))";
}

// The newest `limit` runs are picked first (by key, no per-row work), then only their rows are counted:
// ORDER BY ... LIMIT over the counts would compute them for every run of the rack before sorting.
std::string RackPointsSql() {
  return "SELECT r.id, r.plan_name, r.started_wall, r.status,"
         " (SELECT count(*) FROM faults f WHERE f.run_id = r.id"
         "    AND (+rt.topology_id, +f.target_id) IN (SELECT topology_id, id FROM temp.history_subtree)),"
         " (SELECT count(*) FROM isolations i WHERE i.run_id = r.id"
         "    AND (+rt.topology_id, +i.component_id) IN (SELECT topology_id, id FROM temp.history_subtree)),"
         + RackUnderSubtree("count(*) FILTER (WHERE m.ttr_us IS NULL)") + "," + RackUnderSubtree("max(m.ttd_us)") +
         "," + RackUnderSubtree("max(m.tti_us)") + "," + RackUnderSubtree("max(m.ttr_us)") +
         " FROM (SELECT p.run_id AS run_id, p.topology_id AS topology_id FROM run_topologies p"
         "   WHERE p.topology_id IN (SELECT DISTINCT topology_id FROM temp.history_subtree)"
         "   ORDER BY p.run_id DESC LIMIT ?1) rt"
         " CROSS JOIN runs r ON r.id = rt.run_id ORDER BY r.id DESC";
}

// Parts under the rack the healer isolated: each run's few isolations tested against the subtree by key.
constexpr const char* kRackIsolatedSql =
    "SELECT c.name, coalesce(c.serial, t.serial_prefix || c.name), g.n, g.runs FROM"
    " (SELECT rt.topology_id AS topology_id, i.component_id AS id, count(*) AS n, count(DISTINCT i.run_id) AS runs"
    "  FROM run_topologies rt JOIN isolations i ON i.run_id = rt.run_id"
    "  WHERE rt.topology_id IN (SELECT DISTINCT topology_id FROM temp.history_subtree) AND rt.run_id >= ?1"
    "    AND (rt.topology_id, i.component_id) IN (SELECT topology_id, id FROM temp.history_subtree)"
    "  GROUP BY rt.topology_id, i.component_id) g"
    " JOIN topology_components c ON c.topology_id = g.topology_id AND c.id = g.id"
    " JOIN topologies t ON t.id = g.topology_id ORDER BY g.n DESC, c.name LIMIT 50";

// Isolations a fault explains (faulty_isolations, by name) of parts under the rack, run by run.
// CROSS JOIN keeps the order: a rack's runs, their faulty isolations (a few each), the part by name; SQLite
// would otherwise start from the subtree and probe every run for each part (8 s at 10,000 runs).
constexpr const char* kRackFaultyUnderSql =
    "SELECT c.name, coalesce(c.serial, t.serial_prefix || c.name), f.run_id"
    " FROM run_topologies rt CROSS JOIN faulty_isolations f ON f.run_id = rt.run_id"
    " CROSS JOIN topology_components c ON c.topology_id = rt.topology_id AND c.name = f.component"
    " CROSS JOIN topologies t ON t.id = rt.topology_id"
    " WHERE rt.topology_id IN (SELECT DISTINCT topology_id FROM temp.history_subtree) AND rt.run_id >= ?1"
    "   AND (+c.topology_id, +c.id) IN (SELECT topology_id, id FROM temp.history_subtree)"
    " ORDER BY f.run_id";

std::optional<double> RackSeconds(const Stmt& s, int col) {
  if (s.IsNull(col)) return std::nullopt;
  return static_cast<double>(s.Int(col)) / 1e6;
}

Status ReadRackPoints(Db& db, int limit, RackPage& page) {
  const std::string what = "reading the runs of rack '" + page.serial + "'";
  RC_ASSIGN_OR_RETURN(
      Stmt counts, db.Prepare(std::string("SELECT r.status, count(*)") + kRackTouching + " GROUP BY r.status", what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, counts.Step(what));
    if (!row) break;
    page.by_status[counts.Text(0)] = counts.Int(1);
    page.runs_total += counts.Int(1);
  }
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(RackPointsSql(), what));
  s.Bind(1, static_cast<int64_t>(limit));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    page.runs.push_back({s.Int(0), s.Text(1), s.Text(2), s.Text(3), static_cast<int>(s.Int(4)),
                         static_cast<int>(s.Int(5)), static_cast<int>(s.Int(6)), RackSeconds(s, 7), RackSeconds(s, 8),
                         RackSeconds(s, 9)});
  }
  std::reverse(page.runs.begin(), page.runs.end());  // oldest first, as a chart reads
  return Status::Ok();
}

Status ReadRackParts(Db& db, int min_runs, RackPage& page) {
  const std::string what = "reading the parts isolated under rack '" + page.serial + "'";
  // Over the runs the page shows (the newest `limit`): the page costs the same whatever the history holds.
  const int64_t first = page.runs.empty() ? 0 : page.runs.front().run;
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(kRackIsolatedSql, what));
  s.Bind(1, first);
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    page.isolated.push_back({s.Text(0), s.Text(1), static_cast<int>(s.Int(2)), static_cast<int>(s.Int(3))});
  }
  // Lemons as `history` counts them: by serial (name when blank), in at least min_runs runs.
  RC_ASSIGN_OR_RETURN(Stmt f, db.Prepare(kRackFaultyUnderSql, what));
  f.Bind(1, first);
  std::map<std::string, RepeatOffender> by_key;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, f.Step(what));
    if (!row) break;
    const std::string name = f.Text(0), serial = f.Text(1);
    RepeatOffender& o = by_key[serial.empty() ? name : serial];
    o.name = name;
    o.serial = serial;
    if (o.runs.empty() || o.runs.back() != f.Int(2)) o.runs.push_back(f.Int(2));
  }
  for (auto& [key, o] : by_key)
    if (static_cast<int>(o.runs.size()) >= min_runs) page.lemons.push_back(std::move(o));
  std::stable_sort(page.lemons.begin(), page.lemons.end(),
                   [](const RepeatOffender& a, const RepeatOffender& b) { return a.runs.size() > b.runs.size(); });
  return Status::Ok();
}

}  // namespace

Result<RackPage> ReadRackPage(const ReportStore& store, const std::string& serial, int limit, int min_runs) {
  if (limit < 1 || limit > 2000) return Status::Invalid("limit must be 1..2000");
  RackPage page;
  page.serial = serial;
  Db& db = StoreAccess::DbOf(store);
  RC_RETURN_IF_ERROR(FillRackSubtree(db, serial));
  RC_RETURN_IF_ERROR(ReadRackPoints(db, limit, page));
  RC_RETURN_IF_ERROR(ReadRackParts(db, min_runs, page));
  RC_ASSIGN_OR_RETURN(page.qualifications, ReadRecentQualifications(store, serial));
  return page;
}

Result<std::vector<std::string>> ListRackSerials(const ReportStore& store, int limit) {
  const std::string what = "listing rack serials";
  RC_ASSIGN_OR_RETURN(Stmt s, StoreAccess::DbOf(store).Prepare("SELECT DISTINCT coalesce(c.serial, t.serial_prefix || c.name)"
                                                 " FROM topology_components c JOIN topologies t ON t.id = c.topology_id"
                                                 " WHERE c.kind = 'rack' ORDER BY 1 LIMIT ?1",
                                                 what));
  s.Bind(1, static_cast<int64_t>(limit));
  std::vector<std::string> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back(s.Text(0));
  }
}

}  // namespace rackchaos::reports
