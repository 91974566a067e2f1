#include "reports/history.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "reports/escape.h"
#include "reports/text_table.h"

namespace rackchaos::reports {
namespace {

// The components with the serial, per topology (reports/topology_store.h), found through the topology
// tables' indexes: stored as it is, or as the topology's serial prefix followed by the name
// (`components.serial` computes it, so a search on it reads every row; CROSS JOIN keeps `topologies`
// outside so the name is looked up, not scanned for; an ORDER BY would make it a merge that scans).
constexpr const char* kRootsSql =
    "SELECT c.topology_id, c.id FROM topology_components c WHERE c.serial = ?1"
    " UNION SELECT t.id, c.id FROM topologies t CROSS"
    "   JOIN topology_components c ON c.topology_id = t.id AND c.name = substr(?1, length(t.serial_prefix) + 1)"
    "   WHERE c.serial IS NULL AND substr(?1, 1, length(t.serial_prefix)) = t.serial_prefix";

// The subtree the queries below count over: a TEMP table, so it works on a read-only report too. Each
// count tests its few rows against it by its primary key; runs meet it through run_topologies.
constexpr const char* kSubtreeTableSql =
    "CREATE TEMP TABLE IF NOT EXISTS history_subtree(topology_id INTEGER NOT NULL, id INTEGER NOT NULL,"
    " PRIMARY KEY(topology_id, id)) WITHOUT ROWID;"
    "DELETE FROM temp.history_subtree";

// faults_by_id is named: without statistics SQLite reads a run's faults by primary key for each metric.
constexpr const char* kRunsSql =
    "SELECT r.id, r.plan_name, r.started_wall, r.status, r.seed,"
    " (SELECT count(*) FROM faults f WHERE f.run_id = r.id"
    "    AND (+rt.topology_id, +f.target_id) IN (SELECT topology_id, id FROM temp.history_subtree)),"
    " (SELECT count(*) FROM isolations i WHERE i.run_id = r.id"
    "    AND (+rt.topology_id, +i.component_id) IN (SELECT topology_id, id FROM temp.history_subtree)),"
    " (SELECT count(*) FROM fault_metrics m JOIN faults f INDEXED BY faults_by_id"
    "    ON f.run_id = m.run_id AND f.fault_id = m.fault_id WHERE m.run_id = r.id AND m.ttr_us IS NULL"
    "    AND (+rt.topology_id, +f.target_id) IN (SELECT topology_id, id FROM temp.history_subtree)),"
    " (SELECT max(m.ttr_us) FROM fault_metrics m JOIN faults f INDEXED BY faults_by_id"
    "    ON f.run_id = m.run_id AND f.fault_id = m.fault_id WHERE m.run_id = r.id"
    "    AND (+rt.topology_id, +f.target_id) IN (SELECT topology_id, id FROM temp.history_subtree))"
    " FROM runs r JOIN run_topologies rt ON rt.run_id = r.id"
    " WHERE rt.topology_id IN (SELECT topology_id FROM temp.history_subtree) ORDER BY r.id";

// Isolations a fault explains (not false isolations), with the isolated component's serial.
constexpr const char* kFaultySql =
    "SELECT DISTINCT c.name, c.serial, f.run_id FROM faulty_isolations f"
    " JOIN components c ON c.run_id = f.run_id AND c.name = f.component";
constexpr const char* kFaultyUnderSql =
    " JOIN run_topologies rt ON rt.run_id = c.run_id"
    " WHERE (+rt.topology_id, +c.id) IN (SELECT topology_id, id FROM temp.history_subtree)";

// The ids under `roots` (themselves included) in one topology whose (parent, child) pairs are `edges`,
// sorted by parent: a breadth-first walk, each pair taken once (a cycle in a damaged file ends it).
std::vector<int64_t> Under(const std::vector<int64_t>& roots, const std::vector<std::pair<int64_t, int64_t>>& edges) {
  std::vector<int64_t> out = roots;
  std::vector<char> taken(edges.size(), 0);
  for (size_t next = 0; next < out.size(); ++next) {
    auto first = std::lower_bound(edges.begin(), edges.end(),
                                  std::pair<int64_t, int64_t>(out[next], std::numeric_limits<int64_t>::min()));
    for (auto e = first; e != edges.end() && e->first == out[next]; ++e) {
      if (taken[e - edges.begin()]) continue;
      taken[e - edges.begin()] = 1;
      out.push_back(e->second);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Fills temp.history_subtree with the components with the serial and everything under them: each
// topology that has one is read once, (id, parent_id) by its primary key, and walked in memory (no
// index by parent: building one cost a 1,778-rack file's first run a third of a second).
Status InsertSubtree(Db& db, const std::string& serial, const std::string& what) {
  RC_RETURN_IF_ERROR(db.Exec(kSubtreeTableSql, what));
  std::map<int64_t, std::vector<int64_t>> roots;  // by topology
  RC_ASSIGN_OR_RETURN(Stmt find, db.Prepare(kRootsSql, what));
  find.Bind(1, serial);
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, find.Step(what));
    if (!row) break;
    roots[find.Int(0)].push_back(find.Int(1));
  }
  RC_ASSIGN_OR_RETURN(Stmt pairs, db.Prepare("SELECT parent_id, id FROM topology_components"
                                             " WHERE topology_id = ?1 AND parent_id IS NOT NULL",
                                             what));
  RC_ASSIGN_OR_RETURN(Stmt add, db.Prepare("INSERT OR IGNORE INTO temp.history_subtree VALUES (?1, ?2)", what));
  for (const auto& [topology, ids] : roots) {
    std::vector<std::pair<int64_t, int64_t>> edges;
    pairs.Bind(1, topology);
    for (;;) {
      RC_ASSIGN_OR_RETURN(bool row, pairs.Step(what));
      if (!row) break;
      edges.emplace_back(pairs.Int(0), pairs.Int(1));
    }
    pairs.Reset();
    std::sort(edges.begin(), edges.end());
    for (int64_t id : Under(ids, edges)) {
      add.Bind(1, topology);
      add.Bind(2, id);
      RC_RETURN_IF_ERROR(add.Run(what));
    }
  }
  return Status::Ok();
}

// In one deferred transaction: it writes only the TEMP table, so it takes no write lock on the report
// (which may be open read-only), and a region's 190,000 rows are committed once, not row by row.
Status FillSubtree(Db& db, const std::string& serial) {
  const std::string what = "finding the components under serial '" + serial + "'";
  RC_RETURN_IF_ERROR(db.Exec("BEGIN", what));
  Status filled = InsertSubtree(db, serial, what);
  if (!filled.ok()) {
    (void)db.Exec("ROLLBACK", what);
    return filled;
  }
  return db.Exec("COMMIT", what);
}

Status ReadRuns(Db& db, const std::string& serial, RackHistory& h) {
  const std::string what = "reading the history of serial '" + serial + "'";
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(kRunsSql, what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return Status::Ok();
    RackRun r{s.Int(0), s.Text(1), s.Text(2), s.Text(3), std::strtoull(s.Text(4).c_str(), nullptr, 10),
              static_cast<int>(s.Int(5)), static_cast<int>(s.Int(6)), static_cast<int>(s.Int(7)), std::nullopt};
    if (!s.IsNull(8)) r.ttr_max_s = static_cast<double>(s.Int(8)) / 1e6;
    h.runs.push_back(r);
  }
}

// Groups (name, serial, run) rows by serial (name when blank); keeps those in at least `min_runs` runs.
Result<std::vector<RepeatOffender>> Offenders(Stmt& s, int min_runs, const std::string& what) {
  std::map<std::string, RepeatOffender> by_key;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) break;
    std::string name = s.Text(0), comp_serial = s.Text(1);
    RepeatOffender& o = by_key[comp_serial.empty() ? name : comp_serial];
    o.name = name;
    o.serial = comp_serial;
    if (o.runs.empty() || o.runs.back() != s.Int(2)) o.runs.push_back(s.Int(2));
  }
  std::vector<RepeatOffender> out;
  for (auto& [key, o] : by_key)
    if (static_cast<int>(o.runs.size()) >= min_runs) out.push_back(o);
  std::stable_sort(out.begin(), out.end(),
                   [](const RepeatOffender& a, const RepeatOffender& b) { return a.runs.size() > b.runs.size(); });
  return out;
}

std::string Trend(const RackHistory& h) {
  std::string verdicts;
  for (const RackRun& r : h.runs) verdicts += (verdicts.empty() ? "" : " ") + r.status;
  std::string out = "Trend (oldest to newest): " + verdicts + "\n";
  const RackRun* first = nullptr;
  const RackRun* last = nullptr;
  for (const RackRun& r : h.runs) {
    if (!r.ttr_max_s) continue;
    if (!first) first = &r;
    last = &r;
  }
  if (first && last && first != last) {
    double a = *first->ttr_max_s, b = *last->ttr_max_s;
    out += "Worst TTR on this rack: " + FormatDurationShort(Duration::FromSecondsF(a)) + " (run " +
           std::to_string(first->run) + ") -> " + FormatDurationShort(Duration::FromSecondsF(b)) + " (run " +
           std::to_string(last->run) + "): " + (b < a ? "improving" : b > a ? "worsening" : "steady") + "\n";
  }
  return out;
}

}  // namespace

Result<RackHistory> ReadRackHistory(const ReportStore& store, const std::string& serial, int min_runs) {
  RackHistory h;
  h.serial = serial;
  h.min_runs = min_runs;
  RC_RETURN_IF_ERROR(FillSubtree(store.db(), serial));
  RC_RETURN_IF_ERROR(ReadRuns(store.db(), serial, h));
  const std::string what = "reading isolations under serial '" + serial + "'";
  RC_ASSIGN_OR_RETURN(Stmt s, store.db().Prepare(std::string(kFaultySql) + kFaultyUnderSql + " ORDER BY f.run_id",
                                                 what));
  RC_ASSIGN_OR_RETURN(h.offenders, Offenders(s, min_runs, what));
  return h;
}

Result<std::vector<RepeatOffender>> ReadLemons(const ReportStore& store, int min_runs, std::optional<int64_t> run) {
  const std::string what = "reading repeat offenders";
  RC_ASSIGN_OR_RETURN(Stmt s, store.db().Prepare(std::string(kFaultySql) + " ORDER BY f.run_id", what));
  RC_ASSIGN_OR_RETURN(std::vector<RepeatOffender> all, Offenders(s, min_runs, what));
  if (run) std::erase_if(all, [&](const RepeatOffender& o) { return !std::count(o.runs.begin(), o.runs.end(), *run); });
  return all;
}

std::string RenderLemons(const std::vector<RepeatOffender>& lemons, int min_runs) {
  if (lemons.empty()) return "";
  std::string out = "Lemons (isolated as really faulty in at least " + std::to_string(min_runs) + " stored runs)\n";
  for (const RepeatOffender& o : lemons) {
    std::string runs;
    for (int64_t r : o.runs) runs += (runs.empty() ? "" : ", ") + std::to_string(r);
    out += "  " + o.name + (o.serial.empty() ? "" : " (" + o.serial + ")") + ": " + std::to_string(o.runs.size()) +
           " runs (" + runs + ")\n";
  }
  return out;
}

std::string RenderHistory(const RackHistory& h) {
  if (h.runs.empty()) return "No stored run touched a component with serial '" + h.serial + "'.\n";
  TextTable table({"run", "plan", "seed", "started", "status", "faults", "isolations", "unrecovered", "worst TTR"},
                  {Align::kRight, Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight});
  for (const RackRun& r : h.runs) {
    table.AddRow({std::to_string(r.run), r.plan_name, std::to_string(r.seed), r.started_wall, r.status,
                  std::to_string(r.faults), std::to_string(r.isolations), std::to_string(r.unrecovered),
                  r.ttr_max_s ? FormatDurationShort(Duration::FromSecondsF(*r.ttr_max_s)) : "-"});
  }
  std::string out = "History of " + h.serial + ": " + std::to_string(h.runs.size()) + " run(s)\n" +
                    table.Render("  ") + "\n" + Trend(h) + "\n";
  if (h.offenders.empty()) return out + "Lemons: none\n";
  return out + RenderLemons(h.offenders, h.min_runs);
}

}  // namespace rackchaos::reports
