// Components stored once per distinct cluster (schema version 8, reports/topology_store.h); indexed by
// parent in version 9 only.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reports/history.h"
#include "reports/merge.h"
#include "reports/schema.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"
#include "reports/topology_store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

using t::IntOpenOrCreate;
using t::OpenOrCreate;

// Every row of `sql` (six columns) as "a|b|c|d|e|f|" (NULL as "-").
std::vector<std::string> TopologyRows(const std::string& path, const std::string& sql) {
  Db db = OpenOrCreate(path);
  auto stmt = db.Prepare(sql, "test query");
  REQUIRE(stmt.ok());
  std::vector<std::string> out;
  while (*stmt->Step("test query")) {
    std::string row;
    for (int c = 0; c < 6; ++c) row += (stmt->IsNull(c) ? "-" : stmt->Text(c)) + "|";
    out.push_back(row);
  }
  return out;
}

// 200 parts of a simulated rack: serials are "SIM-gb200-nvl72-" + name, except one bought part.
std::vector<ComponentRow> SimRackRows() {
  std::vector<ComponentRow> rows;
  for (uint32_t i = 0; i < 200; ++i) {
    std::string name = "r01.c" + std::to_string(i);
    rows.push_back({i, name, i % 3 ? "gpu" : "compute_tray", i ? i - 1 : kNoComponent, "SIM-gb200-nvl72-" + name});
  }
  rows[7].serial = "RK-7";
  return rows;
}

bool SameComponentRows(const std::vector<ComponentRow>& a, const std::vector<ComponentRow>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].name != b[i].name || a[i].kind != b[i].kind || a[i].parent != b[i].parent ||
        a[i].serial != b[i].serial)
      return false;
  return true;
}

}  // namespace

TEST_CASE("reports.topology: runs of one cluster share one stored copy - each run reads its own rows back") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE(store.ok());
  std::vector<ComponentRow> rows = SimRackRows(), other = SimRackRows();
  other[5].name = "r01.x5";
  other[5].serial = "SIM-gb200-nvl72-r01.x5";
  int64_t runs[3];
  for (int64_t& run : runs) run = *store->BeginRun(t::SampleRunInfo());
  REQUIRE(store->AddComponents(runs[0], rows).ok());
  REQUIRE(store->AddComponents(runs[1], rows).ok());
  REQUIRE(store->AddComponents(runs[2], other).ok());
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topology_components") == 400);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM components") == 600);
  // Derived serials are not stored; the bought part's is.
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topology_components WHERE serial IS NULL") == 2 * 199);
  CHECK(SameComponentRows(*store->ReadComponents(runs[1]), rows));
  CHECK(SameComponentRows(*store->ReadComponents(runs[2]), other));
  CHECK(
      TopologyRows(path,
           "SELECT run_id, id, name, kind, parent_id, serial FROM components WHERE serial = 'RK-7' ORDER BY run_id") ==
      std::vector<std::string>{"1|7|r01.c7|gpu|6|RK-7|", "2|7|r01.c7|gpu|6|RK-7|", "3|7|r01.c7|gpu|6|RK-7|"});
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM components WHERE serial = 'SIM-gb200-nvl72-r01.x5'") == 1);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM components WHERE name = 'r01.c0' AND parent_id IS NULL") == 3);

  // The digest tells lists apart by any field, serials included.
  std::vector<ComponentRow> serial_changed = rows;
  serial_changed[9].serial = "RK-9";
  CHECK(TopologyDigest(rows) == TopologyDigest(SimRackRows()));
  CHECK(TopologyDigest(rows) != TopologyDigest(serial_changed));
  CHECK(TopologyDigest(rows) != TopologyDigest(other));

  // More rows for run 2: it gets a topology of its own, run 1 keeps the shared one.
  REQUIRE(store->AddComponents(runs[1], {{500, "r01.extra", "nic", 3, "N-500"}}).ok());
  CHECK(store->ReadComponents(runs[1])->size() == 201);
  CHECK(SameComponentRows(*store->ReadComponents(runs[0]), rows));
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 3);
  // A repeated id is refused, named, and leaves the run as it was.
  Status s = store->AddComponents(runs[0], {{3, "r01.again", "gpu", 0, "G"}});
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("(r01.again)") != std::string::npos);
  CHECK(SameComponentRows(*store->ReadComponents(runs[0]), rows));
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 3);
}

// A later seed of a cluster (runner/engine/engine.cpp): asked by digest, it shares the stored rows
// without handing any.
TEST_CASE("reports.topology: LinkComponents gives a run the stored topology with the digest, and only that") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE(store.ok());
  const std::vector<ComponentRow> rows = SimRackRows();
  std::vector<ComponentRow> other = SimRackRows();
  other[3].parent = 1;
  auto digest_of = [](const std::vector<ComponentRow>& r) {
    return ComponentsDigest(r.size(), [&](size_t i) { return ComponentRef{r[i].id, r[i].name, r[i].kind, r[i].parent, r[i].serial}; },
                            std::nullopt);
  };
  // The same digest as the store's own, for spelled-out serials and for serials derived from a prefix.
  CHECK(digest_of(rows) == TopologyDigest(rows));
  CHECK(digest_of(rows) != digest_of(other));
  const std::string prefix = "SIM-gb200-nvl72-";
  auto derived = [&](size_t i) {
    const ComponentRow& c = rows[i];
    return ComponentRef{c.id, c.name, c.kind, c.parent, c.serial.starts_with(prefix) ? std::string_view() : c.serial};
  };
  CHECK(ComponentsDigest(rows.size(), derived, prefix) == TopologyDigest(rows));

  int64_t runs[4];
  for (int64_t& run : runs) run = *store->BeginRun(t::SampleRunInfo());
  // Nothing stored yet: no topology to link, nothing written, and no digest asked for.
  bool asked = false;
  CHECK(*store->LinkComponents(runs[0], [&] {
    asked = true;
    return digest_of(rows);
  }) == false);
  CHECK(!asked);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM run_topologies") == 0);
  REQUIRE(store->AddComponents(runs[0], rows).ok());
  CHECK(*store->LinkComponents(runs[1], [&] { return digest_of(rows); }) == true);
  CHECK(SameComponentRows(*store->ReadComponents(runs[1]), rows));
  // Another list's digest finds nothing; the run is left without components for AddComponents.
  CHECK(*store->LinkComponents(runs[2], [&] { return digest_of(other); }) == false);
  CHECK(store->ReadComponents(runs[2])->empty());
  REQUIRE(store->AddComponents(runs[2], other).ok());
  // A run that has components is not relinked (AddComponents merges more rows into its own).
  CHECK(*store->LinkComponents(runs[2], [&] { return digest_of(rows); }) == false);
  CHECK(SameComponentRows(*store->ReadComponents(runs[2]), other));
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topology_components") == 400);
  // An unknown run is refused as AddComponents refuses it.
  CHECK(store->LinkComponents(999, [&] { return digest_of(rows); }).status().code() == store->AddComponents(999, rows).code());
  CHECK(!store->LinkComponents(999, [&] { return digest_of(rows); }).ok());
}

// What the simulator hands the store (runner/engine/run.cpp): names by reference, serials derived from a prefix.
TEST_CASE("reports.topology: rows by reference with derived serials are stored and digested as spelled-out rows") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE(store.ok());
  const std::vector<ComponentRow> rows = SimRackRows();  // derived serials but the bought part's (7)
  std::vector<ComponentRef> refs = RefsTo(rows);
  for (ComponentRef& r : refs)
    if (r.id != 7) r.serial = {};
  const std::string prefix = "SIM-gb200-nvl72-";
  CHECK(TopologyDigest(ComponentList{refs, prefix}) == TopologyDigest(rows));
  CHECK(TopologyDigest(ComponentList{refs, std::string_view("SIM-gb300-nvl72-")}) != TopologyDigest(rows));
  int64_t runs[3];
  for (int64_t& run : runs) run = *store->BeginRun(t::SampleRunInfo());
  REQUIRE(store->AddComponents(runs[0], refs, prefix).ok());
  REQUIRE(store->AddComponents(runs[1], rows).ok());
  CHECK(SameComponentRows(*store->ReadComponents(runs[0]), rows));
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 1);  // the spelled-out copy shares it
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topology_components WHERE serial IS NULL") == 199);

  // The first row's serial is the bought one: the others' derived serials do not follow the prefix the
  // first row gives (none), so they are stored spelled out, as the same rows spelled out would be.
  std::vector<ComponentRef> bought_first(refs.begin() + 7, refs.end());
  std::vector<ComponentRow> spelled(rows.begin() + 7, rows.end());
  CHECK(TopologyDigest(ComponentList{bought_first, prefix}) == TopologyDigest(spelled));
  REQUIRE(store->AddComponents(runs[2], bought_first, prefix).ok());
  CHECK(SameComponentRows(*store->ReadComponents(runs[2]), spelled));
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);
  // More rows by reference for a run that has some: its serials are built for the combined topology.
  const std::vector<ComponentRef> extra{{500, "r01.extra", "nic", 3, {}}};
  REQUIRE(store->AddComponents(runs[0], extra, prefix).ok());
  auto now = store->ReadComponents(runs[0]);
  REQUIRE(now->size() == 201);
  CHECK(now->back().serial == "SIM-gb200-nvl72-r01.extra");
}

TEST_CASE("reports.topology: version 8 moves the rows of a version 7 components table into shared topologies") {
  TempDir dir;
  const std::string path = dir.File("v7.db");
  {
    Db db = OpenOrCreate(path);
    REQUIRE(Migrate(db, SchemaMigrations().first(7)).ok());
    std::string sql = "INSERT INTO components VALUES ";
    for (int run = 1; run <= 3; ++run)
      for (int i = 0; i < 100; ++i) {
        std::string name = (run == 3 && i == 50 ? "r02.c" : "r01.c") + std::to_string(i);
        std::string serial = i == 20 ? "'BOUGHT-20'" : "'SIM-gb300-nvl72-" + name + "'";
        sql += std::string(run + i > 1 ? ", " : "") + "(" + std::to_string(run) + ", " + std::to_string(i) + ", '" +
               name + "', 'gpu', " + (i ? std::to_string(i / 2) : "NULL") + ", " + serial + ")";
      }
    REQUIRE(db.Exec(sql, "v7 rows").ok());
  }
  const std::string all = "SELECT run_id, id, name, kind, parent_id, serial FROM components ORDER BY run_id, id";
  std::vector<std::string> before = TopologyRows(path, all);
  REQUIRE(before.size() == 300);

  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(IntOpenOrCreate(path, "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(TopologyRows(path, all) == before);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);  // runs 1 and 2 have the same rows
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'components' AND type = 'view'") == 1);
  // The views that join components still answer.
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM event_log") == 0);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM fault_summary") == 0);
  // A new run of the same cluster shares the migrated copy (runs 1-3 are those of the rows above).
  for (int run = 1; run <= 3; ++run) REQUIRE(*store->BeginRun(t::SampleRunInfo()) == run);
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  std::vector<ComponentRow> same = *store->ReadComponents(1);
  Status added = store->AddComponents(*run, same);
  REQUIRE_MESSAGE(added.ok(), added.ToString());
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM topologies") == 2);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM components") == 400);
}

TEST_CASE("reports.topology: merging a run whose cluster the destination has shares the destination's copy") {
  TempDir dir;
  const std::string a = dir.File("a.db"), b = dir.File("b.db");
  std::vector<ComponentRow> rows = SimRackRows();
  for (const std::string& path : {a, b}) {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    RunInfo info = t::SampleRunInfo();
    info.started_wall = path == a ? "2025-01-01T00:00:00Z" : "2025-01-02T00:00:00Z";
    int64_t run = *store->BeginRun(info);
    REQUIRE(store->AddComponents(run, rows).ok());
    REQUIRE(store->FinishRun(run, "passed", 0, info.started_wall, "").ok());  // merge leaves 'running' runs out
  }
  auto dest = ReportStore::Open(a);
  REQUIRE(dest.ok());
  auto counts = MergeInto(*dest, b);
  REQUIRE_MESSAGE(counts.ok(), counts.status().ToString());
  CHECK(counts->runs_copied == 1);
  CHECK(counts->rows_copied == 1 + 200);  // the run and its components, shared or not
  CHECK(IntOpenOrCreate(a, "SELECT count(*) FROM topologies") == 1);
  CHECK(IntOpenOrCreate(a, "SELECT count(*) FROM topology_components") == 200);
  CHECK(SameComponentRows(*dest->ReadComponents(2), rows));
}

// Version 10 drops the index by parent that version 9 built (`history --rack` walks a subtree in memory,
// reports/history.cpp) and indexes names as (name, topology_id). A version 9 file with components
// migrates and its history still counts the subtree; the walk ends on a parent cycle (a damaged file) as
// the recursive query did.
TEST_CASE("reports.topology: version 10 drops the index by parent and history walks the subtree without it") {
  TempDir dir;
  const std::string path = dir.File("v9.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    REQUIRE(store->AddComponents(*store->BeginRun(t::SampleRunInfo()), SimRackRows()).ok());
  }
  {  // the same file as version 9 wrote it
    Db db = OpenOrCreate(path);
    REQUIRE(db.Exec("CREATE INDEX topology_components_by_parent ON topology_components(topology_id, parent_id);"
                    "DROP INDEX topology_components_by_name;"
                    "CREATE INDEX topology_components_by_name ON topology_components(topology_id, name);"
                    "ALTER TABLE job_events DROP COLUMN store_lost_work_us;"  // version 11's
                    "ALTER TABLE job_events DROP COLUMN store_cause_fault_id;"
                    "DROP INDEX sweep_runs_by_seed; ALTER TABLE sweep_runs DROP COLUMN seed;"  // version 14's
                    "ALTER TABLE sweep_runs DROP COLUMN wall_ms; ALTER TABLE sweep_runs DROP COLUMN cpu_ms;"
                    "CREATE INDEX sweep_runs_by_sweep ON sweep_runs(sweep, point);"
                    "ALTER TABLE job_metrics DROP COLUMN up_us;"  // version 15's
                    "ALTER TABLE job_metrics DROP COLUMN failures;"
                    "ALTER TABLE runs DROP COLUMN ledger; ALTER TABLE runs DROP COLUMN ledger_run;"  // version 16's
                    "DELETE FROM schema_history WHERE version > 9; PRAGMA user_version = 9",
                    "back to version 9")
                .ok());
  }
  auto store = ReportStore::Open(path);  // migrates it
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(IntOpenOrCreate(path, "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'topology_components_by_parent'") == 0);
  CHECK(IntOpenOrCreate(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'topology_components_by_name' AND "
                              "sql LIKE '%(name, topology_id)'") == 1);
  {  // a run's component by name is still looked up, not scanned for
    Db db = OpenOrCreate(path);
    auto plan =
        db.Prepare("EXPLAIN QUERY PLAN SELECT id FROM components WHERE run_id = 1 AND name = 'r01.c7'", "plan");
    REQUIRE(plan.ok());
    std::string steps;
    while (*plan->Step("plan")) steps += plan->Text(3) + "\n";
    CHECK_MESSAGE(steps.find("INDEX topology_components_by_name (name=? AND topology_id=?)") != std::string::npos,
                  steps);
  }
  // RK-7 is row 7 of a chain: rows 7 to 199 are under it. The walk leaves them in its TEMP table.
  auto count_under = [&](const std::string& serial) {
    auto h = ReadRackHistory(*store, serial);
    REQUIRE_MESSAGE(h.ok(), h.status().ToString());
    CHECK(h->runs.size() == 1);
    return *StoreAccess::DbOf(*store).QueryInt("SELECT count(*) FROM temp.history_subtree", "count");
  };
  CHECK(count_under("RK-7") == 193);
  CHECK(count_under("SIM-gb200-nvl72-r01.c150") == 50);
  REQUIRE(StoreAccess::DbOf(*store).Exec("UPDATE topology_components SET parent_id = 150 WHERE id = 7", "a cycle").ok());
  CHECK(count_under("RK-7") == 193);
  CHECK(count_under("SIM-gb200-nvl72-r01.c150") == 193);
}
