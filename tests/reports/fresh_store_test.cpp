// A brand-new report file is written in rollback-journal mode until its first components are stored,
// then switched to WAL (reports/store.cpp): the journal mode at each step, and a writer killed in that
// first phase.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "reports/sqlite_db.h"
#include "reports/store.h"
#include "reports/topology_store.h"
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

std::vector<ComponentRow> FreshRows(uint32_t n) {
  std::vector<ComponentRow> rows;
  rows.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string name = "r" + std::to_string(i / 500) + ".p" + std::to_string(i % 500);
    rows.push_back({i, name, "gpu", i % 500 ? i - 1 : kNoComponent, "SIM-x-" + name});
  }
  return rows;
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
  std::vector<ComponentRow> rows = FreshRows(20000);
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
  CHECK(FreshIndexes(first->db()) == kFreshIndexes);
  CHECK(FreshIndexes(later->db()) == kFreshIndexes);
  for (const char* sql : {"SELECT count(*) FROM topology_components INDEXED BY topology_components_by_name "
                          "WHERE topology_id = 1 AND name > ''",
                          "SELECT count(*) FROM topology_components INDEXED BY topology_components_by_serial "
                          "WHERE serial IS NOT NULL"}) {
    CAPTURE(sql);
    CHECK(*first->db().QueryInt(sql, "count") == 20000);
  }
  CHECK(first->ReadComponents(1)->size() == rows.size());
  // Every first topology takes that path, however small: two DROP INDEX and two CREATE INDEX each bump the
  // schema cookie. A later topology keeps the indexes.
  auto small = ReportStore::Open(dir.File("small.db"));
  REQUIRE(small.ok());
  for (int i = 0; i < 2; ++i) REQUIRE(small->BeginRun(t::SampleRunInfo()).ok());
  const int64_t cookie = *small->db().QueryInt("PRAGMA schema_version", "cookie");
  REQUIRE(small->AddComponents(1, t::SampleComponents()).ok());
  CHECK(*small->db().QueryInt("PRAGMA schema_version", "cookie") == cookie + 4);
  REQUIRE(small->AddComponents(2, rows).ok());
  CHECK(*small->db().QueryInt("PRAGMA schema_version", "cookie") == cookie + 4);
  CHECK(FreshIndexes(small->db()) == kFreshIndexes);
  // SQLite drops no index while a statement of the connection is reading: the first topology is refused
  // whole, and stored once the statement is done.
  auto busy = ReportStore::Open(dir.File("busy.db"));
  REQUIRE(busy.ok());
  REQUIRE(busy->BeginRun(t::SampleRunInfo()).ok());
  auto reading = busy->db().Prepare("SELECT id FROM runs", "reading");
  REQUIRE(reading.ok());
  REQUIRE(*reading->Step("reading"));
  CHECK(busy->AddComponents(1, t::SampleComponents()).code() == StatusCode::kUnavailable);
  reading->Reset();
  CHECK(busy->ReadComponents(1)->empty());
  CHECK(FreshIndexes(busy->db()) == kFreshIndexes);
  REQUIRE(busy->AddComponents(1, t::SampleComponents()).ok());
  CHECK(busy->ReadComponents(1)->size() == t::SampleComponents().size());
  CHECK(TopologyDigest(*first->ReadComponents(1)) == TopologyDigest(*later->ReadComponents(2)));
  CHECK(*first->db().QueryInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'", "ok") == 0);
}

TEST_CASE("reports.store: a brand-new file switches to WAL once its first components are stored") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(FreshJournalMode(path) == "delete");
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  CHECK(FreshJournalMode(path) == "delete");
  Status added = store->AddComponents(*run, t::SampleComponents());
  REQUIRE_MESSAGE(added.ok(), added.ToString());
  CHECK(FreshJournalMode(path) == "wal");
  CHECK(std::filesystem::exists(path + "-wal"));
  CHECK(store->ReadComponents(*run)->size() == t::SampleComponents().size());

  // A file that has a schema opens in WAL mode at once; so does a new file at its first write that is
  // not BeginRun or AddComponents.
  const std::string other = dir.File("o.db");
  { REQUIRE(ReportStore::Open(other).ok()); }
  CHECK(FreshJournalMode(other) == "wal");
  const std::string events = dir.File("e.db");
  auto plain = ReportStore::Open(events);
  REQUIRE(plain.ok());
  auto erun = plain->BeginRun(t::SampleRunInfo());
  REQUIRE(erun.ok());
  REQUIRE(plain->AppendEvents(*erun, t::SampleEvents()).ok());
  CHECK(FreshJournalMode(events) == "wal");
}

TEST_CASE("reports.store: a writer killed while storing a new file's first components leaves a readable report") {
  TempDir dir;
  const std::vector<ComponentRow> rows = FreshRows(400000);
  // Killed as soon as the transaction has written its journal, and later (about a third of the way).
  for (int delay_ms : {0, 150}) {
    CAPTURE(delay_ms);
    const std::string path = dir.File("k" + std::to_string(delay_ms) + ".db");
    const std::string journal = path + "-journal";
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(ready[0]);
      auto store = ReportStore::Open(path);
      auto run = store.ok() ? store->BeginRun(t::SampleRunInfo()) : Result<int64_t>(store.status());
      if (!run.ok() || write(ready[1], "c", 1) != 1) _exit(1);
      (void)store->AddComponents(*run, rows);
      _exit(0);
    }
    close(ready[1]);
    char byte = 0;
    const bool started = read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    // The journal appears with the first page the components' transaction writes.
    bool seen = false;
    for (int i = 0; i < 5000 && !seen; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::error_code ec;
      seen = std::filesystem::exists(journal, ec) && std::filesystem::file_size(path, ec) > 0 &&
             std::filesystem::file_size(journal, ec) > 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(started);
    CHECK(seen);
    // Killed inside the transaction (400,000 rows take longer than the delay): its journal is left.
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    REQUIRE(std::filesystem::exists(journal));

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
    CHECK(*rw->db().QueryInt("SELECT count(*) FROM topology_components", "count") == 0);
    CHECK(*rw->db().QueryInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'", "ok") == 0);
    // The secondary indexes dropped for the first topology's rows came back with the rollback.
    CHECK(FreshIndexes(rw->db()) == kFreshIndexes);
    CHECK(FreshJournalMode(path) == "wal");
    // And the rest of the run can still be stored.
    CHECK(rw->AddComponents(1, t::SampleComponents()).ok());
  }
}
