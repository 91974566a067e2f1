// Migrations, refusal of files we must not touch, and every SQLite failure turned into a Status.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <iterator>
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

Db Raw(const std::string& path) {
  auto db = Db::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  return std::move(db).value();
}

int64_t Int(const std::string& path, const std::string& sql) {
  Db db = Raw(path);
  auto v = db.QueryInt(sql, "test query");
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return *v;
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// A stand-in for a future step: what adding schema version 2 looks like.
Status AddRackNotes(Db& db) {
  return db.Exec("CREATE TABLE rack_notes(run_id INTEGER NOT NULL, note TEXT NOT NULL)", "v2");
}

}  // namespace

TEST_CASE("reports.schema: a current database reopens intact and is not migrated again") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(store->ReadRun(1)->status == "passed");
  CHECK(store->ReadEvents(1)->size() == 12);
  CHECK(store->ReadMetrics(1)->faults.size() == 1);
  CHECK(Int(path, "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(Int(path, "SELECT count(*) FROM schema_history") == LatestSchemaVersion());
}

TEST_CASE("reports.schema: a further migration step upgrades a current database and keeps its data") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  std::vector<Migration> steps(SchemaMigrations().begin(), SchemaMigrations().end());
  const int next = LatestSchemaVersion() + 1;
  steps.push_back({next, "rack notes", &AddRackNotes});
  {
    Db db = Raw(path);
    REQUIRE(Migrate(db, steps).ok());
    auto version = CheckSchemaVersion(db, steps);
    REQUIRE(version.ok());
    CHECK(*version == next);
  }
  CHECK(Int(path, "PRAGMA user_version") == next);
  CHECK(Int(path, "SELECT count(*) FROM rack_notes") == 0);
  CHECK(Int(path, "SELECT count(*) FROM events") == 12);
  CHECK(Int(path, "SELECT max(version) FROM schema_history") == next);

  // This build does not know step `next`: it must refuse the upgraded file, not touch it.
  auto store = ReportStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kNotSupported);
  CHECK(Mentions(store.status(), "schema version " + std::to_string(next)));
  CHECK(Mentions(store.status(), path));
  CHECK(ReportStore::OpenReadOnly(path).status().code() == StatusCode::kNotSupported);
  CHECK(Int(path, "PRAGMA user_version") == next);
}

TEST_CASE("reports.schema: a newer database is refused without being modified") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    Db db = Raw(path);  // rollback journal, version 99: Open must switch neither
    REQUIRE(db.Exec("CREATE TABLE future(x); INSERT INTO future VALUES (1); "
                    "PRAGMA application_id = " + std::to_string(kReportApplicationId) +
                    "; PRAGMA user_version = 99", "setup").ok());
  }
  auto store = ReportStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kNotSupported);
  CHECK(Mentions(store.status(), "newer than this rackchaos knows"));
  CHECK(Int(path, "PRAGMA user_version") == 99);
  CHECK(Int(path, "SELECT count(*) FROM future") == 1);
  Db db = Raw(path);
  auto mode = db.Prepare("PRAGMA journal_mode", "mode");
  REQUIRE(mode.ok());
  REQUIRE(*mode->Step("mode"));
  CHECK(mode->Text(0) == "delete");
}

TEST_CASE("reports.schema: another program's SQLite database is refused") {
  TempDir dir;
  std::string path = dir.File("other.db");
  REQUIRE(Raw(path).Exec("CREATE TABLE customers(name TEXT)", "setup").ok());
  auto store = ReportStore::Open(path);
  CHECK(store.status().code() == StatusCode::kInvalidArgument);
  CHECK(Mentions(store.status(), "not a rackchaos report"));
}

TEST_CASE("reports.schema: a path in a directory that does not exist is an I/O error naming the path") {
  TempDir dir;
  std::string path = dir.File("no/such/dir/r.db");
  auto store = ReportStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kIoError);
  CHECK(Mentions(store.status(), path));
  CHECK(Mentions(store.status(), "does not exist"));
}

TEST_CASE("reports.schema: a file that is not a database is reported as corrupt, naming the file") {
  TempDir dir;
  std::string path = dir.File("junk.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 512; ++i) out << "this is not an SQLite file ";
  }
  auto store = ReportStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kCorrupt);
  CHECK(Mentions(store.status(), path));
  CHECK(Mentions(store.status(), "not a database"));
  CHECK(ReportStore::OpenReadOnly(path).status().code() == StatusCode::kCorrupt);
}

TEST_CASE("reports.schema: a write lock held by another connection gives kUnavailable after the busy timeout") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    REQUIRE(store->BeginRun(t::SampleRunInfo()).ok());
  }
  Db holder = Raw(path);
  REQUIRE(holder.Exec("BEGIN EXCLUSIVE; INSERT INTO jobs VALUES (1, 9, 'x', 1, 1.0)", "lock").ok());

  // WAL lets the second connection open and read, but not write.
  auto store = ReportStore::Open(path, OpenOptions{.busy_timeout_ms = 50});
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(store->ReadRun(1).ok());
  auto run = store->BeginRun(t::SampleRunInfo());
  CHECK(run.status().code() == StatusCode::kUnavailable);
  Status append = store->AppendEvents(1, t::SampleEvents());
  CHECK(append.code() == StatusCode::kUnavailable);
  CHECK(Mentions(append, "appending events to run 1"));
  CHECK(Mentions(append, path));

  REQUIRE(holder.Exec("COMMIT", "unlock").ok());
  CHECK(store->AppendEvents(1, t::SampleEvents()).ok());
}

TEST_CASE("reports.schema: opening a database locked in rollback mode gives kUnavailable") {
  TempDir dir;
  std::string path = dir.File("r.db");
  Db holder = Raw(path);
  REQUIRE(holder.Exec("CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)", "lock").ok());
  auto store = ReportStore::Open(path, OpenOptions{.busy_timeout_ms = 50});
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kUnavailable);
  CHECK(Mentions(store.status(), "busy timeout"));
}

TEST_CASE("reports.schema: read-only stores read, refuse writes, and need an existing report") {
  TempDir dir;
  std::string path = dir.File("r.db");
  auto absent = ReportStore::OpenReadOnly(path);
  CHECK(absent.status().code() == StatusCode::kNotFound);
  CHECK(Mentions(absent.status(), path));
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  auto store = ReportStore::OpenReadOnly(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(store->ReadMetrics(1)->jobs.size() == 2);
  auto run = store->BeginRun(t::SampleRunInfo());
  CHECK(run.status().code() == StatusCode::kIoError);
  CHECK(Mentions(run.status(), "readonly"));
  CHECK(store->AppendEvents(1, t::SampleEvents()).code() == StatusCode::kIoError);
  CHECK(store->ReadEvents(1)->size() == 12);

  // The same through a URI, as a renderer handed "file:...?mode=ro" would open it.
  auto uri = ReportStore::Open("file:" + path + "?mode=ro");
  REQUIRE_MESSAGE(uri.ok(), uri.status().ToString());
  CHECK(uri->BeginRun(t::SampleRunInfo()).status().code() == StatusCode::kIoError);
}

TEST_CASE("reports.schema: read-only refuses an empty file: it is not a report yet") {
  TempDir dir;
  std::string path = dir.File("empty.db");
  { std::ofstream touch(path); }
  auto store = ReportStore::OpenReadOnly(path);
  CHECK(store.status().code() == StatusCode::kInvalidArgument);
  CHECK(Mentions(store.status(), "not a rackchaos report"));
}

namespace {

// Builds a database from a SQL text file (a checked-in dump).
void LoadDump(const std::string& sql_file, const std::string& db_path) {
  std::ifstream in(sql_file);
  REQUIRE_MESSAGE(in, "cannot read " << sql_file);
  std::string sql((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Db db = Raw(db_path);
  Status s = db.Exec(sql, "loading " + sql_file);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + " ";
  return out;
}

// "table=rows" for every table of the database, in name order.
std::vector<std::string> RowCounts(const std::string& path) {
  Db db = Raw(path);
  std::vector<std::string> tables;
  auto list = db.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", "list");
  REQUIRE(list.ok());
  while (*list->Step("list")) tables.push_back(list->Text(0));
  std::vector<std::string> counts;
  for (const std::string& t : tables) {
    counts.push_back(t + "=" + std::to_string(*db.QueryInt("SELECT count(*) FROM " + t, "count")));
  }
  return counts;
}

}  // namespace

TEST_CASE("reports.schema: a database written by schema version 1 migrates to the latest with nothing lost") {
  TempDir dir;
  std::string path = dir.File("v1.db");
  LoadDump(std::string(RACKCHAOS_SOURCE_DIR) + "/tests/reports/data/v1_quickstart.sql", path);
  REQUIRE(Int(path, "PRAGMA user_version") == 1);
  std::vector<std::string> before = RowCounts(path);
  CHECK(before.size() == 17);  // the v1 tables; no gates table

  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(Int(path, "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(Int(path, "SELECT max(version) FROM schema_history") == LatestSchemaVersion());
  std::vector<std::string> after = RowCounts(path);
  // Every row kept; the migration adds the empty gates table and its own history rows.
  std::vector<std::string> expected = before;
  expected.push_back("gates=0");
  std::replace(expected.begin(), expected.end(), std::string("schema_history=1"),
               "schema_history=" + std::to_string(LatestSchemaVersion()));
  std::sort(expected.begin(), expected.end());
  CHECK_MESSAGE(after == expected, Join(after) << " vs " << Join(expected));
  // The old rows read back through the current readers.
  auto metrics = store->ReadMetrics(1);
  REQUIRE(metrics.ok());
  CHECK(metrics->faults.size() == 4);
  CHECK(store->ReadRun(1)->info.plan_name == "quickstart");
  CHECK(store->ReadGates(1)->empty());
  CHECK(*store->CountEvents(1) == 115);
  // And the migrated file takes new gates.
  CHECK(store->AddGates(1, t::SampleGates()).ok());
  CHECK(store->ReadGates(1)->size() == 2);
}
