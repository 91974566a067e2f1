// Schema version 12 (reports/schema_views.cpp): event_log, fault_timeline and fault_summary give the
// columns and rows the views of versions 1 and 3 gave, and read the topology tables by key.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reports/schema.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

constexpr const char* kViews[] = {"event_log", "fault_timeline", "fault_summary"};
// The alias of the tables each view gives a row of (EXPLAIN QUERY PLAN names it): event_log's are the
// typed event tables behind `events`, each aliased x.
constexpr const char* kDriving[] = {"x", "f", "m"};

// The column names of `sql`'s result, then each row ("a|b|..." with NULL as "<null>"), rows sorted.
std::vector<std::string> Rows(Db& db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &raw, nullptr) == SQLITE_OK,
                  sql << ": " << sqlite3_errmsg(db.handle()));
  std::string names;
  for (int c = 0; c < sqlite3_column_count(raw); ++c) names += std::string(sqlite3_column_name(raw, c)) + "|";
  std::vector<std::string> rows;
  while (sqlite3_step(raw) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(raw); ++c) {
      // The type first: reading the value as text converts it.
      const bool null = sqlite3_column_type(raw, c) == SQLITE_NULL;
      row += (null ? std::string("<null>") : reinterpret_cast<const char*>(sqlite3_column_text(raw, c))) + "|";
    }
    rows.push_back(row);
  }
  sqlite3_finalize(raw);
  std::sort(rows.begin(), rows.end());
  rows.insert(rows.begin(), names);
  return rows;
}

// The sample run with `components` (none when null); with `edge_events`, t::EdgeEvents() and a fault
// metric on a target that names no component too.
void WriteRun(ReportStore& store, const std::vector<ComponentRow>* components, bool edge_events) {
  auto run = store.BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  if (components) REQUIRE(store.AddComponents(*run, *components).ok());
  REQUIRE(store.AddJobs(*run, t::SampleJobs()).ok());
  REQUIRE(store.AppendEvents(*run, t::SampleEvents()).ok());
  RunMetrics m = t::SampleMetrics();
  if (edge_events) {
    REQUIRE(store.AppendEvents(*run, t::EdgeEvents()).ok());
    FaultMetrics unknown = m.faults.front();  // a target that names no component of the run
    unknown.fault = 3;
    unknown.target = "r01.nvs1.port7";
    m.faults.push_back(unknown);
  }
  REQUIRE(store.AddMetrics(*run, m).ok());
  REQUIRE(store.FinishRun(*run, "passed", 0, "2025-01-02T03:14:05Z", "").ok());
}

// Four runs over two topologies: runs 1 and 3 share the sample parts (every serial given: "TR-003"),
// run 2 has the same names with simulated serials (derived "SIM-gb200-nvl72-" + name, stored NULL, but
// r01.tray05's given "TR-005") plus component-less events, a fault with no target and a target that
// names no part; run 4 stored no components at all.
void WriteFixture(const std::string& path) {
  auto store = ReportStore::Open(path);
  REQUIRE(store.ok());
  const std::vector<ComponentRow> given = t::SampleComponents();
  std::vector<ComponentRow> derived = given;
  for (ComponentRow& c : derived)
    if (c.name != "r01.tray05") c.serial = "SIM-gb200-nvl72-" + c.name;
  WriteRun(*store, &given, false);
  WriteRun(*store, &derived, true);
  WriteRun(*store, &given, false);
  WriteRun(*store, nullptr, false);
}

// The views as version 10 defined them, as TEMP views old_<name> on `db`: their text is read from a
// file the real migration steps 1-10 made.
void CreateOldViews(Db& db, const std::string& scratch) {
  Db old = t::OpenOrCreate(scratch);
  REQUIRE(Migrate(old, SchemaMigrations().first(10)).ok());
  for (const char* view : kViews) {
    auto stmt = old.Prepare("SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = ?", "old view");
    REQUIRE(stmt.ok());
    stmt->Bind(1, std::string_view(view));
    REQUIRE(*stmt->Step("old view"));
    std::string sql = stmt->Text(0);
    const std::string head = std::string("CREATE VIEW ") + view + " ";
    REQUIRE(sql.starts_with(head));
    REQUIRE(db.Exec("CREATE TEMP VIEW old_" + std::string(view) + " " + sql.substr(head.size()), "old view").ok());
  }
}

// EXPLAIN QUERY PLAN's lines for `sql`.
std::vector<std::string> Plan(Db& db, const std::string& sql) {
  auto stmt = db.Prepare("EXPLAIN QUERY PLAN " + sql, "plan");
  REQUIRE(stmt.ok());
  std::vector<std::string> lines;
  while (*stmt->Step("plan")) lines.push_back(stmt->Text(3));
  return lines;
}

// False for a plan that builds a view or an index for the query, or scans a table other than
// event_log's `events` (whose run_id filter is inside it) and the view's own table aliased `may_scan`.
bool ReadsByKeyOnly(const std::vector<std::string>& plan, const std::string& may_scan = "") {
  for (const std::string& line : plan) {
    if (t::Has(line, "MATERIALIZE") || t::Has(line, "AUTOMATIC")) return false;
    if (!line.starts_with("SCAN ") || line == "SCAN e") continue;
    if (may_scan.empty() || !(line == "SCAN " + may_scan || line.starts_with("SCAN " + may_scan + " "))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("reports.views: version 12 views give the columns and rows of version 10 for every run") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  WriteFixture(path);
  Db db = t::OpenOrCreate(path);
  CHECK(t::IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);
  CreateOldViews(db, dir.File("v10.db"));
  for (const char* view : kViews) {
    const std::string v = view;
    CAPTURE(v);
    std::vector<std::string> now = Rows(db, "SELECT * FROM " + v), before = Rows(db, "SELECT * FROM old_" + v);
    CHECK(now.size() > 4);
    CHECK(now == before);
    for (int run = 1; run <= 5; ++run) {
      const std::string where = " WHERE run_id = " + std::to_string(run);
      CHECK(Rows(db, "SELECT * FROM " + v + where) == Rows(db, "SELECT * FROM old_" + v + where));
    }
  }
  // The fixture has the cases the views must keep: a serial given and one derived, a target that names
  // no component, a fault with no target, a component-less event, and a run without components.
  auto serial = [&](int run, const char* target) {
    return Rows(db, "SELECT target_serial FROM fault_summary WHERE run_id = " + std::to_string(run) +
                          " AND target = '" + target + "'");
  };
  CHECK(serial(1, "r01.tray03") == std::vector<std::string>{"target_serial|", "TR-003|"});
  CHECK(serial(2, "r01.tray03") == std::vector<std::string>{"target_serial|", "SIM-gb200-nvl72-r01.tray03|"});
  CHECK(serial(2, "r01.nvs1.port7") == std::vector<std::string>{"target_serial|", "<null>|"});
  CHECK(serial(4, "r01.tray03") == std::vector<std::string>{"target_serial|", "<null>|"});
  CHECK(Rows(db, "SELECT count(*) FROM fault_timeline WHERE run_id = 2 AND target IS NULL")[1] == "2|");
  CHECK(Rows(db, "SELECT count(*) FROM event_log WHERE run_id = 2 AND component IS NULL")[1] != "0|");
  CHECK(Rows(db, "SELECT component FROM event_log WHERE run_id = 3 AND type = 'detected'")[1] == "r01.tray03|");
}

TEST_CASE("reports.views: a run's rows are read by key - no view built whole and no scan of the topology") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  WriteFixture(path);
  Db db = t::OpenOrCreate(path);
  CreateOldViews(db, dir.File("v10.db"));
  for (size_t i = 0; i < std::size(kViews); ++i) {
    const std::string v = kViews[i];
    for (const std::string& sql :
         {"SELECT * FROM " + v + " WHERE run_id = 2", "SELECT count(*) FROM " + v + " WHERE run_id = 2"}) {
      CAPTURE(sql);
      CHECK(ReadsByKeyOnly(Plan(db, sql)));
    }
    CAPTURE(v);
    CHECK(ReadsByKeyOnly(Plan(db, "SELECT * FROM " + v), kDriving[i]));
  }
  // The check tells the two apart: version 10 built all of `components` for one run's faults.
  CHECK_FALSE(ReadsByKeyOnly(Plan(db, "SELECT count(*) FROM old_fault_summary WHERE run_id = 2")));
  CHECK_FALSE(ReadsByKeyOnly(Plan(db, "SELECT * FROM old_fault_timeline WHERE run_id = 2")));
}
