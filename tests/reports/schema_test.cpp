// Migrations, refusal of files we must not touch, and every SQLite failure turned into a Status.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <fstream>
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

TEST_CASE("reports.schema: a version-1 database reopens intact and is not migrated again") {
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
  CHECK(Int(path, "PRAGMA user_version") == 1);
  CHECK(Int(path, "SELECT count(*) FROM schema_history") == 1);
}

TEST_CASE("reports.schema: a further migration step upgrades a version-1 database and keeps its data") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  std::vector<Migration> steps(SchemaMigrations().begin(), SchemaMigrations().end());
  steps.push_back({2, "rack notes", &AddRackNotes});
  {
    Db db = Raw(path);
    REQUIRE(Migrate(db, steps).ok());
    auto version = CheckSchemaVersion(db, steps);
    REQUIRE(version.ok());
    CHECK(*version == 2);
  }
  CHECK(Int(path, "PRAGMA user_version") == 2);
  CHECK(Int(path, "SELECT count(*) FROM rack_notes") == 0);
  CHECK(Int(path, "SELECT count(*) FROM events") == 12);
  CHECK(Int(path, "SELECT max(version) FROM schema_history") == 2);

  // This build only knows version 1: it must refuse the upgraded file, not touch it.
  auto store = ReportStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kNotSupported);
  CHECK(Mentions(store.status(), "schema version 2"));
  CHECK(Mentions(store.status(), path));
  CHECK(ReportStore::OpenReadOnly(path).status().code() == StatusCode::kNotSupported);
  CHECK(Int(path, "PRAGMA user_version") == 2);
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
