// serve without sockets: the reports/ queries behind its pages, and ServeApp::Handle on a fleet database
// (routes, filters, escaping, read-only, broken and locked databases).
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "reports/web_queries.h"
#include "runner/serve/app.h"
#include "runner/site/ledger.h"
#include "tests/serve/serve_fixture.h"

namespace rackchaos::serve {
namespace {

using reports::testing::TempDir;

HttpResponse Get(ServeApp& app, const std::string& target) { return app.Handle({"GET", target, 0}); }

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("runs list: newest first, filters by plan, status, backend, rack and date, pages by id") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 7, false);
  auto store = reports::ReportStore::OpenReadOnly(db);
  REQUIRE(store.ok());
  reports::RunFilter all;
  auto page = reports::ListRunsPage(*store, all);
  REQUIRE(page.ok());
  REQUIRE(page->runs.size() == 7);
  CHECK(page->runs.front().id == 7);
  CHECK(page->runs.front().status == "running");
  CHECK(page->runs[1].ttr_max_s == doctest::Approx(160));  // run 6: 100 + 10 * 6 s
  CHECK(page->matching == 7);
  CHECK_FALSE(page->next_before);

  reports::RunFilter f;
  f.plan = "tray-pull";  // the odd runs
  f.status = "passed";   // runs 1 and 4 (7 is still running): of those only 1 is tray-pull
  page = reports::ListRunsPage(*store, f);
  REQUIRE(page.ok());
  REQUIRE(page->runs.size() == 1);
  CHECK(page->runs[0].id == 1);

  f = {};
  f.backend = "ssh";  // runs 3 and 6
  page = reports::ListRunsPage(*store, f);
  REQUIRE(page->runs.size() == 2);
  CHECK(page->runs[0].id == 6);

  f = {};
  f.since = "2025-01-03";
  f.until = "2025-01-05";  // inclusive of the whole day
  page = reports::ListRunsPage(*store, f);
  REQUIRE(page->runs.size() == 3);
  CHECK(page->runs[0].id == 5);
  CHECK(page->runs[2].id == 3);

  f = {};
  f.rack = "RK-001";
  CHECK(reports::ListRunsPage(*store, f)->matching == 7);
  f.rack = "TR-003";  // a tray's serial: runs whose cluster has it
  CHECK(reports::ListRunsPage(*store, f)->matching == 7);
  f.rack = "NO-SUCH";
  CHECK(reports::ListRunsPage(*store, f)->matching == 0);

  f = {};
  f.limit = 3;
  page = reports::ListRunsPage(*store, f);
  REQUIRE(page->runs.size() == 3);
  REQUIRE(page->next_before);
  CHECK(*page->next_before == 5);
  f.before = *page->next_before;
  page = reports::ListRunsPage(*store, f);
  CHECK(page->runs.front().id == 4);

  f = {};
  f.status = "exploded";
  CHECK(reports::ListRunsPage(*store, f).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("rack page: every run that touched it, the chart's points oldest first, parts, lemons, qualification") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 5, false);
  auto store = reports::ReportStore::OpenReadOnly(db);
  REQUIRE(store.ok());
  auto page = reports::ReadRackPage(*store, "RK-001");
  REQUIRE(page.ok());
  CHECK(page->runs_total == 5);
  REQUIRE(page->runs.size() == 5);
  CHECK(page->runs.front().run == 1);
  CHECK(page->runs[0].faults == 1);
  CHECK(page->runs[0].isolations == 2);
  CHECK(page->runs[0].ttd_max_s == doctest::Approx(1));
  CHECK(page->runs[3].ttr_max_s == doctest::Approx(140));
  CHECK_FALSE(page->runs[4].ttr_max_s);  // still running: not scored
  REQUIRE_FALSE(page->isolated.empty());
  CHECK(page->isolated[0].isolations == 5);
  REQUIRE(page->lemons.size() == 1);  // r01.tray03: a fault explains its isolation in runs 1..4
  CHECK(page->lemons[0].name == "r01.tray03");
  CHECK(page->lemons[0].runs.size() == 4);
  REQUIRE(page->qualifications.size() == 1);
  CHECK(page->qualifications[0].plans.size() == 2);

  auto newest = reports::ReadRackPage(*store, "RK-001", 2);
  REQUIRE(newest->runs.size() == 2);
  CHECK(newest->runs[0].run == 4);
  // Parts and lemons over the runs shown: r01.tray03 isolated in runs 4 and 5, explained only in 4 (5 runs).
  REQUIRE_FALSE(newest->isolated.empty());
  CHECK(newest->isolated[0].isolations == 2);
  CHECK(newest->lemons.empty());
  CHECK(reports::ReadRackPage(*store, "NO-SUCH")->runs_total == 0);
}

TEST_CASE("sweeps and events after a sequence number") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 5, false);
  auto store = reports::ReportStore::OpenReadOnly(db);
  auto sweeps = reports::ListSweeps(*store);
  REQUIRE(sweeps.ok());
  REQUIRE(sweeps->size() == 1);
  CHECK((*sweeps)[0].runs == 4);
  CHECK((*sweeps)[0].points == 2);
  CHECK((*sweeps)[0].not_passed == 2);
  auto sweep = reports::ReadSweepPage(*store, "abc123");
  REQUIRE(sweep.ok());
  REQUIRE(sweep->points.size() == 2);
  CHECK(sweep->points[0].point == "healer=aggressive");  // runs 2 and 4: ttr 120 s and 140 s
  CHECK(sweep->points[0].metrics[0].metric == "ttr.max");
  CHECK(sweep->points[0].metrics[0].mean == doctest::Approx(130));
  CHECK(reports::ReadSweepPage(*store, "nope").status().code() == StatusCode::kNotFound);

  auto events = reports::ReadEventsAfter(*store, 5, 10, 100);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 2);
  CHECK(events->front().seq == 11);
  CHECK(events->front().type == "checkpoint");
  CHECK(reports::ReadEventsAfter(*store, 99, 0, 10).status().code() == StatusCode::kNotFound);
}

TEST_CASE("serve: every page and API document answers, unknown ones 404, bad parameters 400") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 5, false);
  reports::LiveMetrics metrics;
  ServeApp app({db}, metrics);
  for (const char* page : {"/",
                           "/db/0/runs",
                           "/db/0/runs?status=failed&plan=tray-pull",
                           "/db/0/runs/1",
                           "/db/0/runs/5",
                           "/db/0/runs/1/live",
                           "/db/0/racks",
                           "/db/0/racks/RK-001",
                           "/db/0/sweeps",
                           "/db/0/sweeps/abc123",
                           "/db/0/qualifications",
                           "/db/0/compare",
                           "/db/0/compare?a=1&b=2",
                           "/api/dbs",
                           "/api/db/0/runs",
                           "/api/db/0/runs/1",
                           "/api/db/0/runs/1/events?after=3",
                           "/api/db/0/racks/RK-001",
                           "/api/db/0/sweeps",
                           "/api/db/0/sweeps/abc123",
                           "/api/db/0/compare?a=1&b=2",
                           "/metrics",
                           "/static/live.js"}) {
    CAPTURE(page);
    const HttpResponse r = Get(app, page);
    CHECK(r.status == 200);
    CHECK_FALSE(r.body.empty());
  }
  // A running run's page is its live event list with the script; a finished one's is its report.
  CHECK(Get(app, "/db/0/runs/5").body.find("/static/live.js") != std::string::npos);
  CHECK(Get(app, "/db/0/runs/1").body.find("class=\"tl-bar tl-fault\"") != std::string::npos);
  // The rack chart has a point per run with a value: the four scored runs (the fifth is still running).
  const std::string rack = Get(app, "/db/0/racks/RK-001").body;
  CHECK(Count(rack, "<circle class=\"pt ttr\"") == 4);
  CHECK(Count(rack, "<circle class=\"pt ttd\"") == 4);
  CHECK(Get(app, "/db/0/racks?serial=RK-001").body == rack);
  CHECK(Get(app, "/db/0/runs/99").status == 404);
  CHECK(Get(app, "/db/7/runs").status == 404);
  CHECK(Get(app, "/api/db/0/nothing").status == 404);
  CHECK(Get(app, "/db/0/runs?status=exploded").status == 400);
  CHECK(Get(app, "/db/0/runs?limit=100000").status == 400);
  CHECK(Get(app, "/db/0/runs?since=%3Cscript%3E").status == 400);
  CHECK(Get(app, "/api/db/0/runs/1/events?wait=999").status == 400);
  CHECK(Get(app, "/db/0/runs?plan=a&plan=b").status == 400);
  CHECK(Get(app, "/db/0/runs?plan=" + std::string(600, 'x')).status == 400);
  // JSON errors for the API, HTML pages with a CSP for the rest.
  CHECK(Get(app, "/api/db/0/runs/99").content_type == "application/json");
  bool csp = false;
  for (const auto& [name, value] : Get(app, "/db/0/runs").headers) csp |= name == "Content-Security-Policy";
  CHECK(csp);
}

TEST_CASE("serve: path traversal, encoded or not, is refused before any file is touched") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 2, false);
  reports::LiveMetrics metrics;
  ServeApp app({db}, metrics);
  for (const char* target :
       {"/db/0/../../etc/passwd", "/db/0/%2e%2e/%2e%2e/etc/passwd", "/static/..%2f..%2fetc", "/db/0/runs/%2E%2E",
        "/static/%5c..%5cx", "/db/0/racks/a%00b", "/db/0/runs/%zz", "relative/path"}) {
    CAPTURE(target);
    CHECK(Get(app, target).status == 400);
  }
}

TEST_CASE("serve: database text is escaped on every page and in JSON") {
  TempDir dir;
  const std::string db = dir.File("hostile.db");
  testing::WriteFleet(db, 4, true);
  reports::LiveMetrics metrics;
  ServeApp app({db}, metrics);
  const std::string serial = UrlEncode(testing::Hostile("serial"));
  for (const std::string& page : std::vector<std::string>{
           "/", "/db/0/runs", "/db/0/runs/1", "/db/0/runs/4", "/db/0/runs/1/live", "/db/0/racks",
           "/db/0/racks?serial=" + serial, "/db/0/sweeps", "/db/0/sweeps/abc123", "/db/0/qualifications",
           "/db/0/compare?a=1&b=2", "/db/0/runs?plan=" + UrlEncode(testing::Hostile("plan"))}) {
    CAPTURE(page);
    const HttpResponse r = Get(app, page);
    REQUIRE(r.status == 200);
    CHECK(r.body.find("<script>document") == std::string::npos);
    CHECK(r.body.find("<img src=x") == std::string::npos);
    CHECK(r.body.find('\x01') == std::string::npos);
    CHECK(r.body.find('\x1b') == std::string::npos);
  }
  CHECK(Get(app, "/db/0/runs").body.find("&lt;script&gt;document.documentElement") != std::string::npos);
  const std::string json = Get(app, "/api/db/0/runs/4/events").body;
  CHECK(json.find("\\u0001") != std::string::npos);
  CHECK(json.find("\x01") == std::string::npos);
}

TEST_CASE("serve: read-only, and a broken or locked database is a page that says so") {
  TempDir dir;
  const std::string good = dir.File("fleet.db"), junk = dir.File("junk.db"), absent = dir.File("absent.db"),
                    locked = dir.File("locked.db");
  testing::WriteFleet(good, 3, false);
  std::ofstream(junk) << "this is not a database, just text long enough to fill a header page............";
  // A rollback-journal database whose writer holds its exclusive lock: readers wait, then give up.
  testing::WriteFleet(locked, 2, false);
  testing::Exec(locked, "PRAGMA journal_mode=DELETE");
  reports::LiveMetrics metrics;
  ServeApp app({good, junk, absent, locked}, metrics);
  struct stat before {};
  REQUIRE(stat(good.c_str(), &before) == 0);
  for (const char* page : {"/db/0/runs", "/db/0/runs/1", "/db/0/racks/RK-001", "/db/0/sweeps/abc123", "/metrics"})
    CHECK(Get(app, page).status == 200);
  struct stat after {};
  REQUIRE(stat(good.c_str(), &after) == 0);
  CHECK(after.st_size == before.st_size);
  CHECK(after.st_mtime == before.st_mtime);
  CHECK_FALSE(std::filesystem::exists(good + ".ledger"));

  const HttpResponse j = Get(app, "/db/1/runs");
  CHECK(j.status == 500);
  CHECK(j.body.find("junk.db") != std::string::npos);
  CHECK(Get(app, "/db/2/runs").status == 404);
  CHECK(Get(app, "/").status == 200);  // the index lists every database, broken ones with why

  sqlite3* writer = nullptr;
  REQUIRE(sqlite3_open(locked.c_str(), &writer) == SQLITE_OK);
  REQUIRE(sqlite3_exec(writer, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
  const HttpResponse l = Get(app, "/db/3/runs");
  CHECK(l.status == 503);
  CHECK(l.body.find("locked") != std::string::npos);
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  CHECK(Get(app, "/db/3/runs").status == 200);
}

TEST_CASE("serve's /metrics: the fault ledger next to a database, its runs by status and racks' recoveries") {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  testing::WriteFleet(db, 3, false);
  {
    auto ledger = runner::Ledger::Open(runner::DefaultLedgerPath(db));  // what a real run writes
    REQUIRE(ledger.ok());
    auto run = ledger->BeginRun(db, 1);
    REQUIRE(run.ok());
    runner::LedgerEntry entry;
    entry.run = *run;
    entry.fault = 1;
    entry.action = "link_down";
    entry.target = "r01.tray03.nic1";
    REQUIRE(ledger->Record(entry).ok());
    REQUIRE(ledger->Record(entry).ok());
    entry.fault = kNoFault;  // a tray the healer drained: open, but no fault applied
    entry.action = "drain";
    entry.target = "r01.tray03";
    REQUIRE(ledger->Record(entry).ok());
  }
  reports::LiveMetrics metrics;
  ServeApp app({db}, metrics);
  const std::string text = Get(app, "/metrics").body;
  CHECK(text.find("rackchaos_ledger_entries_open{ledger=\"0\"} 2\n") != std::string::npos);
  const size_t at = text.find("rackchaos_ledger_oldest_open_timestamp_seconds{ledger=\"0\"} ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(text.substr(text.find('}', at) + 2)) > 1.7e9);  // opened now, in Unix seconds
  CHECK(text.find("rackchaos_stored_runs{db=\"0\",status=\"running\"} 1\n") != std::string::npos);
  CHECK(text.find("rackchaos_stored_runs{db=\"0\",status=\"passed\"} 1\n") != std::string::npos);
  // Runs 1 and 2 recovered their one fault on r01, in 110 s and 120 s.
  CHECK(text.find("rackchaos_rack_recoveries_total{db=\"0\",rack=\"r01\"} 2\n") != std::string::npos);
  CHECK(text.find("rackchaos_rack_recovery_seconds_total{db=\"0\",rack=\"r01\"} 230\n") != std::string::npos);
  CHECK(text.find("rackchaos_serve_requests_total") != std::string::npos);
}

}  // namespace
}  // namespace rackchaos::serve
