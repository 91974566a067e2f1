#include "reports/history.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "reports/escape.h"
#include "reports/rack_subtree.h"
#include "reports/store_state.h"
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
    "SELECT r.id, r.plan_name, r.started_wall, r.status, r.seed, r.plan_hash, r.backend,"
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

// The rack's qualification records, and what their plans ran on (the backends of their runs).
constexpr const char* kQualificationsSql =
    "SELECT q.id, q.suite, q.started_wall, q.verdict, q.reason,"
    " (SELECT count(*) FROM qualification_plans p WHERE p.qualification_id = q.id),"
    " (SELECT count(*) FROM qualification_plans p WHERE p.qualification_id = q.id AND p.verdict = 'passed'),"
    " (SELECT count(*) FROM qualification_plans p JOIN runs r ON r.id = p.run_id"
    "    WHERE p.qualification_id = q.id AND r.backend = 'sim'),"
    " (SELECT count(*) FROM qualification_plans p JOIN runs r ON r.id = p.run_id"
    "    WHERE p.qualification_id = q.id AND r.backend <> 'sim')"
    " FROM qualifications q WHERE q.rack = ?1 ORDER BY q.id";

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
    RackRun r{s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Text(5), std::strtoull(s.Text(4).c_str(), nullptr, 10),
              static_cast<int>(s.Int(7)), static_cast<int>(s.Int(8)), static_cast<int>(s.Int(9)), std::nullopt};
    if (!s.IsNull(10)) r.ttr_max_s = static_cast<double>(s.Int(10)) / 1e6;
    h.real_runs = h.real_runs || s.Text(6) != "sim";
    h.runs.push_back(r);
  }
}

Status ReadQualifications(Db& db, const std::string& serial, RackHistory& h) {
  const std::string what = "reading the qualifications of rack '" + serial + "'";
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(kQualificationsSql, what));
  s.Bind(1, std::string_view(serial));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return Status::Ok();
    const int64_t sim = s.Int(7), site = s.Int(8);
    h.qualifications.push_back({s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), static_cast<int>(s.Int(5)),
                                static_cast<int>(s.Int(6)),
                                sim && site ? "simulator and site" : sim ? "simulator" : site ? "site" : "-"});
  }
}

// A run with no final numbers: still running (or dead), or stopped by an error part way.
bool Unfinished(const RackRun& r) { return r.status == "running" || r.status == "error"; }

// The line under the table that names the unfinished runs, so no one reads their partial rows as a result.
std::string UnfinishedNote(const RackHistory& h) {
  std::string ids;
  for (const RackRun& r : h.runs)
    if (Unfinished(r)) ids += (ids.empty() ? "" : ", ") + std::to_string(r.run) + " (" + r.status + ")";
  if (ids.empty()) return "";
  return "  NO VERDICT for run(s) " + ids + ": still running, dead, or stopped by an error; their numbers are "
         "partial and left out of the trend\n";
}

// One line per plan (by plan hash, in the order plans first appear): its verdicts and whether its worst
// TTR on this rack went up or down. Runs of different plans break different things, so a trend across
// them would compare the plans, not the rack.
std::string Trend(const RackHistory& h) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RackRun*>> by_plan;
  for (const RackRun& r : h.runs) {
    auto& runs = by_plan[r.plan_hash];
    if (runs.empty()) order.push_back(r.plan_hash);
    runs.push_back(&r);
  }
  std::string out = "Trend per plan (runs of one plan, by plan hash, oldest to newest)\n";
  for (const std::string& hash : order) {
    const std::vector<const RackRun*>& runs = by_plan[hash];
    std::string verdicts;
    for (const RackRun* r : runs) verdicts += (verdicts.empty() ? "" : " ") + TerminalText(r->status);
    out += "  " + TerminalText(runs.front()->plan_name) + " (hash " + TerminalText(hash) + ", " +
           std::to_string(runs.size()) + " run" + (runs.size() == 1 ? "" : "s") + "): " + verdicts + "\n";
    const RackRun* first = nullptr;
    const RackRun* last = nullptr;
    for (const RackRun* r : runs) {
      if (!r->ttr_max_s || Unfinished(*r)) continue;
      if (!first) first = r;
      last = r;
    }
    if (!first || first == last) continue;
    double a = *first->ttr_max_s, b = *last->ttr_max_s;
    out += "    worst TTR on this rack: " + FormatDurationShort(Duration::FromSecondsF(a)) + " (run " +
           std::to_string(first->run) + ") -> " + FormatDurationShort(Duration::FromSecondsF(b)) + " (run " +
           std::to_string(last->run) + "): " + (b < a ? "improving" : b > a ? "worsening" : "steady") + "\n";
  }
  return out;
}

std::string Qualifications(const RackHistory& h) {
  if (h.qualifications.empty()) return "Qualifications: none\n";
  TextTable table({"id", "suite", "started", "verdict", "plans passed", "ran on", "reason"},
                  {Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft});
  for (const QualificationRecord& q : h.qualifications)
    table.AddRow({std::to_string(q.id), TerminalText(q.suite), TerminalText(q.started_wall), TerminalText(q.verdict),
                  std::to_string(q.passed) + "/" + std::to_string(q.plans), q.ran_on, TerminalText(q.reason)});
  return "Qualifications (" + std::to_string(h.qualifications.size()) + ")\n" + table.Render("  ");
}

}  // namespace

const char* RackRootsSql() { return kRootsSql; }
Status FillRackSubtree(Db& db, const std::string& serial) { return FillSubtree(db, serial); }

Result<RackHistory> ReadRackHistory(const ReportStore& store, const std::string& serial, int min_runs) {
  RackHistory h;
  h.serial = serial;
  h.min_runs = min_runs;
  RC_RETURN_IF_ERROR(FillSubtree(StoreAccess::DbOf(store), serial));
  RC_RETURN_IF_ERROR(ReadRuns(StoreAccess::DbOf(store), serial, h));
  RC_RETURN_IF_ERROR(ReadQualifications(StoreAccess::DbOf(store), serial, h));
  RC_ASSIGN_OR_RETURN(h.offenders, ReadLemonsInSubtree(StoreAccess::DbOf(store), min_runs));
  return h;
}

std::string RenderHistory(const RackHistory& h) {
  if (h.runs.empty() && h.qualifications.empty())
    return "No stored run touched a component with serial '" + TerminalText(h.serial) + "', and no qualification names it.\n";
  TextTable table({"run", "plan", "seed", "started", "status", "faults", "isolations", "unrecovered", "worst TTR"},
                  {Align::kRight, Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight});
  for (const RackRun& r : h.runs) {
    table.AddRow({std::to_string(r.run), TerminalText(r.plan_name), std::to_string(r.seed), TerminalText(r.started_wall),
                  TerminalText(r.status), std::to_string(r.faults), std::to_string(r.isolations), std::to_string(r.unrecovered),
                  r.ttr_max_s ? FormatDurationShort(Duration::FromSecondsF(*r.ttr_max_s)) : "-"});
  }
  std::string out = "History of " + TerminalText(h.serial) + ": " + std::to_string(h.runs.size()) + " run(s)\n";
  if (!h.runs.empty()) out += table.Render("  ") + UnfinishedNote(h) + "\n" + Trend(h);
  out += "\n" + Qualifications(h) + "\n";
  if (!h.offenders.empty()) return out + RenderLemons(h.offenders, h.min_runs);
  return out + (h.real_runs || h.runs.empty() ? "Lemons: none\n"
                                              : "Lemons: none (only runs on real racks make lemons: on the simulator every "
                                                "failure is injected; docs/policies.md)\n");
}

}  // namespace rackchaos::reports
