// A brand-new report file's first components are written around the WAL, in rollback-journal mode,
// inside AddComponents (reports/store.cpp): the journal mode between calls, and a writer killed in that
// transaction.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/sqlite_db.h"
#include "reports/store.h"
#include "reports/topology_store.h"
#include "tests/reports/killed_writer.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

// Named apart from the other reports tests' helpers: the unity build compiles them in one unit.
std::string FreshJournalMode(const std::string& path) {
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  auto stmt = db->Prepare("PRAGMA journal_mode", "test query");
  REQUIRE_MESSAGE(stmt.ok(), stmt.status().ToString());
  auto row = stmt->Step("test query");
  REQUIRE_MESSAGE(row.ok(), row.status().ToString());
  REQUIRE(*row);
  return stmt->Text(0);
}

// The secondary indexes of topology_components, by name with their SQL.
std::string FreshIndexes(Db& db) {
  auto stmt = db.Prepare("SELECT name || ': ' || sql FROM sqlite_schema WHERE type = 'index' AND "
                         "tbl_name = 'topology_components' AND sql IS NOT NULL ORDER BY name", "indexes");
  REQUIRE_MESSAGE(stmt.ok(), stmt.status().ToString());
  std::string out;
  for (;;) {
    auto row = stmt->Step("indexes");
    REQUIRE(row.ok());
    if (!*row) return out;
    out += stmt->Text(0) + "\n";
  }
}

const std::string kFreshIndexes =
    "topology_components_by_name: CREATE INDEX topology_components_by_name ON topology_components(name, topology_id)\n"
    "topology_components_by_serial: CREATE INDEX topology_components_by_serial ON topology_components(serial) "
    "WHERE serial IS NOT NULL\n";

}  // namespace

// A file's first topology is indexed after its rows (reports/topology_store.cpp): the same indexes in the
// end, with every row in them, whether the rows came first or not.
TEST_CASE("reports.store: a new file's first topology is indexed after its rows, with the same indexes") {
  TempDir dir;
  std::vector<ComponentRow> rows = t::ChainedRows(20000);
  for (ComponentRow& c : rows) c.serial = "SN" + std::to_string(c.id);  // stored as given: all in the serial index
  auto first = ReportStore::Open(dir.File("first.db"));
  REQUIRE(first.ok());
  REQUIRE(first->BeginRun(t::SampleRunInfo()).ok());
  REQUIRE(first->AddComponents(1, rows).ok());
  auto later = ReportStore::Open(dir.File("later.db"));
  REQUIRE(later.ok());
  for (int i = 0; i < 2; ++i) REQUIRE(later->BeginRun(t::SampleRunInfo()).ok());
  REQUIRE(later->AddComponents(1, t::SampleComponents()).ok());
  REQUIRE(later->AddComponents(2, rows).ok());  // not the file's first topology: indexes kept throughout
  CHECK(FreshIndexes(StoreAccess::DbOf(*first)) == kFreshIndexes);
  CHECK(FreshIndexes(StoreAccess::DbOf(*later)) == kFreshIndexes);
  for (const char* sql : {"SELECT count(*) FROM topology_components INDEXED BY topology_components_by_name "
                          "WHERE topology_id = 1 AND name > ''",
                          "SELECT count(*) FROM topology_components INDEXED BY topology_components_by_serial "
                          "WHERE serial IS NOT NULL"}) {
    CAPTURE(sql);
    CHECK(*StoreAccess::DbOf(*first).QueryInt(sql, "count") == 20000);
  }
  CHECK(first->ReadComponents(1)->size() == rows.size());
  // Every first topology takes that path, however small: two DROP INDEX and two CREATE INDEX each bump the
  // schema cookie. A later topology keeps the indexes.
  auto small = ReportStore::Open(dir.File("small.db"));
  REQUIRE(small.ok());
  for (int i = 0; i < 2; ++i) REQUIRE(small->BeginRun(t::SampleRunInfo()).ok());
  const int64_t cookie = *StoreAccess::DbOf(*small).QueryInt("PRAGMA schema_version", "cookie");
  REQUIRE(small->AddComponents(1, t::SampleComponents()).ok());
  CHECK(*StoreAccess::DbOf(*small).QueryInt("PRAGMA schema_version", "cookie") == cookie + 4);
  REQUIRE(small->AddComponents(2, rows).ok());
  CHECK(*StoreAccess::DbOf(*small).QueryInt("PRAGMA schema_version", "cookie") == cookie + 4);
  CHECK(FreshIndexes(StoreAccess::DbOf(*small)) == kFreshIndexes);
  // SQLite drops no index while a statement of the connection is reading: the first topology is refused
  // whole, and stored once the statement is done.
  auto busy = ReportStore::Open(dir.File("busy.db"));
  REQUIRE(busy.ok());
  REQUIRE(busy->BeginRun(t::SampleRunInfo()).ok());
  auto reading = StoreAccess::DbOf(*busy).Prepare("SELECT id FROM runs", "reading");
  REQUIRE(reading.ok());
  REQUIRE(*reading->Step("reading"));
  CHECK(busy->AddComponents(1, t::SampleComponents()).code() == StatusCode::kUnavailable);
  reading->Reset();
  CHECK(busy->ReadComponents(1)->empty());
  CHECK(FreshIndexes(StoreAccess::DbOf(*busy)) == kFreshIndexes);
  REQUIRE(busy->AddComponents(1, t::SampleComponents()).ok());
  CHECK(busy->ReadComponents(1)->size() == t::SampleComponents().size());
  CHECK(TopologyDigest(*first->ReadComponents(1)) == TopologyDigest(*later->ReadComponents(2)));
  CHECK(*StoreAccess::DbOf(*first).QueryInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'", "ok") == 0);
}

uintmax_t FreshWalSize(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path + "-wal", ec);
  return ec ? 0 : size;
}

TEST_CASE("reports.store: a brand-new file is in WAL mode between calls and its first components go around the WAL") {
  TempDir dir;
  const std::vector<ComponentRow> rows = t::ChainedRows(20000);  // about 1 MB of pages
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(FreshJournalMode(path) == "wal");
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  CHECK(FreshJournalMode(path) == "wal");
  Status added = store->AddComponents(*run, rows);
  REQUIRE_MESSAGE(added.ok(), added.ToString());
  CHECK(FreshJournalMode(path) == "wal");
  // Written once, into the file: the WAL holds none of the rows' pages.
  CHECK(FreshWalSize(path) < 64 * 1024);
  CHECK(std::filesystem::file_size(path) > 512 * 1024);
  CHECK(store->ReadComponents(*run)->size() == rows.size());
  // A later topology of the file goes through the WAL like every other write.
  auto second = store->BeginRun(t::SampleRunInfo());
  REQUIRE(second.ok());
  std::vector<ComponentRow> other = rows;
  other.back().serial = "SN-other";
  REQUIRE(store->AddComponents(*second, other).ok());
  CHECK(FreshWalSize(path) > 512 * 1024);

  // With another connection open the file cannot leave WAL mode: the rows go through the WAL.
  const std::string shared = dir.File("s.db");
  auto writer = ReportStore::Open(shared);
  REQUIRE(writer.ok());
  auto reader = ReportStore::OpenReadOnly(shared);
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  auto srun = writer->BeginRun(t::SampleRunInfo());
  REQUIRE(srun.ok());
  REQUIRE(writer->AddComponents(*srun, rows).ok());
  CHECK(FreshJournalMode(shared) == "wal");
  CHECK(FreshWalSize(shared) > 512 * 1024);
  CHECK(reader->ReadComponents(*srun)->size() == rows.size());
}

TEST_CASE("reports.store: a writer killed while storing a new file's first components leaves a readable report") {
  TempDir dir;
  // Killed as soon as the transaction has written its journal, and later (about a third of the way).
  for (int delay_ms : {0, 150}) {
    CAPTURE(delay_ms);
    const std::string path = dir.File("k" + std::to_string(delay_ms) + ".db");
    const std::string journal = path + "-journal";
    REQUIRE(t::KillFirstTopologyWriter(path, delay_ms));

    // Read-only, the journal cannot be rolled back: the store says so instead of reading around it.
    auto ro = ReportStore::OpenReadOnly(path);
    CHECK(ro.status().code() == StatusCode::kInvalidArgument);
    CHECK(ro.status().message().find("-journal") != std::string::npos);
    // Read-write rolls it back: the run is there, 'running', without half of its components.
    auto rw = ReportStore::Open(path);
    REQUIRE_MESSAGE(rw.ok(), rw.status().ToString());
    CHECK_FALSE(std::filesystem::exists(journal));
    auto runs = rw->ListRuns();
    REQUIRE(runs.ok());
    REQUIRE(runs->size() == 1);
    CHECK(runs->front().status == "running");
    CHECK(rw->ReadComponents(1)->empty());
    CHECK(*StoreAccess::DbOf(*rw).QueryInt("SELECT count(*) FROM topology_components", "count") == 0);
    CHECK(*StoreAccess::DbOf(*rw).QueryInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'", "ok") == 0);
    // The secondary indexes dropped for the first topology's rows came back with the rollback.
    CHECK(FreshIndexes(StoreAccess::DbOf(*rw)) == kFreshIndexes);
    CHECK(FreshJournalMode(path) == "wal");
    // And the rest of the run can still be stored.
    CHECK(rw->AddComponents(1, t::SampleComponents()).ok());
  }
}

TEST_CASE("reports.store: OpenForReading rolls back a killed writer's journal and reads what was committed") {
  TempDir dir;
  const std::string path = dir.File("k.db");
  // A finished run without components first: the file's first topology is then the killed one's.
  auto finished_run = [](ReportStore& s) {
    auto run = s.BeginRun(t::SampleRunInfo());
    return run.ok() && s.AppendEvents(*run, t::SampleEvents()).ok() && s.FinishRun(*run, "passed", 0, "", "").ok();
  };
  REQUIRE(t::KillFirstTopologyWriter(path, 0, finished_run));
  CHECK(ReportStore::OpenReadOnly(path).status().code() == StatusCode::kInvalidArgument);
  auto store = ReportStore::OpenForReading(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
  auto runs = store->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  CHECK(runs->at(0).status == "passed");
  CHECK(*store->CountEvents(1) == static_cast<int64_t>(t::SampleEvents().size()));
  CHECK(runs->at(1).status == "running");
  CHECK(store->ReadComponents(2)->empty());
}
