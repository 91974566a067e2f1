#include "reports/lemons.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.h"
#include "reports/escape.h"
#include "reports/fault_digest.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

constexpr size_t kListed = 20;

// Runs on real racks whose explained isolations are known (see the header on schema version 6).
constexpr const char* kRealRunsSql =
    "SELECT r.id FROM runs r WHERE r.backend <> 'sim' AND NOT ("
    " EXISTS (SELECT 1 FROM run_metrics m WHERE m.run_id = r.id AND m.name = 'correct_isolations' AND m.value > 0)"
    " AND NOT EXISTS (SELECT 1 FROM faulty_isolations f WHERE f.run_id = r.id))";

// One row per isolation in a real run, with the isolated component's name and serial; in a subtree,
// only the isolations of its components (as reports/history.cpp counts them).
constexpr const char* kIsolatedSql =
    "SELECT i.run_id, c.name, c.serial FROM runs r JOIN isolations i ON i.run_id = r.id"
    " JOIN components c ON c.run_id = i.run_id AND c.id = i.component_id";
constexpr const char* kInSubtreeSql =
    " JOIN run_topologies rt ON rt.run_id = c.run_id WHERE r.backend <> 'sim'"
    " AND (+rt.topology_id, +c.id) IN (SELECT topology_id, id FROM temp.history_subtree)";
constexpr const char* kEverywhereSql = " WHERE r.backend <> 'sim'";

// One row per explained isolation in a real run, by component name.
constexpr const char* kExplainedSql =
    "SELECT f.run_id, f.component FROM runs r JOIN faulty_isolations f ON f.run_id = r.id WHERE r.backend <> 'sim'";

struct Isolated {
  std::string serial;
  int isolations = 0, explained = 0;
};

Result<std::vector<RepeatOffender>> Read(Db& db, int min_runs, bool in_subtree) {
  const std::string what = "reading lemon evidence";
  std::set<int64_t> runs;
  RC_ASSIGN_OR_RETURN(Stmt real, db.Prepare(kRealRunsSql, what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, real.Step(what));
    if (!row) break;
    runs.insert(real.Int(0));
  }
  std::map<std::pair<int64_t, std::string>, Isolated> parts;  // (run, name)
  RC_ASSIGN_OR_RETURN(Stmt iso, db.Prepare(std::string(kIsolatedSql) + (in_subtree ? kInSubtreeSql : kEverywhereSql), what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, iso.Step(what));
    if (!row) break;
    if (!runs.count(iso.Int(0))) continue;
    Isolated& p = parts[{iso.Int(0), iso.Text(1)}];
    p.serial = iso.Text(2);
    ++p.isolations;
  }
  RC_ASSIGN_OR_RETURN(Stmt explained, db.Prepare(kExplainedSql, what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, explained.Step(what));
    if (!row) break;
    if (auto it = parts.find({explained.Int(0), explained.Text(1)}); it != parts.end()) ++it->second.explained;
  }
  // Evidence: isolated beyond what the run's injected faults explain. Grouped by serial (name when blank).
  std::map<std::string, RepeatOffender> by_key;
  for (const auto& [key, p] : parts) {
    if (p.isolations <= p.explained) continue;
    RepeatOffender& o = by_key[p.serial.empty() ? key.second : p.serial];
    o.name = key.second;
    o.serial = p.serial;
    if (o.runs.empty() || o.runs.back() != key.first) o.runs.push_back(key.first);
  }
  std::vector<RepeatOffender> out;
  for (auto& [key, o] : by_key)
    if (static_cast<int>(o.runs.size()) >= min_runs) out.push_back(std::move(o));
  std::stable_sort(out.begin(), out.end(),
                   [](const RepeatOffender& a, const RepeatOffender& b) { return a.runs.size() > b.runs.size(); });
  return out;
}

}  // namespace

Result<std::vector<RepeatOffender>> ReadLemons(const ReportStore& store, int min_runs, std::optional<int64_t> run) {
  RC_ASSIGN_OR_RETURN(std::vector<RepeatOffender> all, Read(StoreAccess::DbOf(store), min_runs, false));
  if (run) std::erase_if(all, [&](const RepeatOffender& o) { return !std::count(o.runs.begin(), o.runs.end(), *run); });
  return all;
}

Result<std::vector<RepeatOffender>> ReadLemonsInSubtree(Db& db, int min_runs) { return Read(db, min_runs, true); }

std::string RenderLemons(const std::vector<RepeatOffender>& lemons, int min_runs) {
  if (lemons.empty()) return "";
  std::string out = "Lemons (" + Thousands(lemons.size()) + "; isolated beyond what injected faults explain in at least " +
                    std::to_string(min_runs) + " runs on real racks; rule in docs/policies.md)\n";
  for (size_t i = 0; i < lemons.size() && i < kListed; ++i) {
    const RepeatOffender& o = lemons[i];
    std::vector<std::string> runs;
    for (int64_t r : o.runs) runs.push_back(std::to_string(r));
    out += "  " + TerminalText(o.name) + (o.serial.empty() ? "" : " (" + TerminalText(o.serial) + ")") + ": " +
           std::to_string(o.runs.size()) + " runs (" + JoinCut(runs, 10, "") + ")\n";
  }
  if (lemons.size() > kListed) out += "  ... and " + Thousands(lemons.size() - kListed) + " more\n";
  return out;
}

}  // namespace rackchaos::reports
