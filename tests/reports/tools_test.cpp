// compare, merge and history: the cross-run tools, on hand-built runs in temporary databases.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/compare.h"
#include "reports/history.h"
#include "reports/merge.h"
#include "reports/store.h"
#include "reports/topology_store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

// The sample run with its one fault's TTR set (or absent) and its own start time.
// With `derived_prefix`, the components' serials are that prefix followed by their names (stored as NULL).
// `backend` "ssh" makes it a run on real racks, whose unexplained isolations are lemon evidence.
int64_t AddRun(ReportStore& store, std::optional<Duration> ttr, const std::string& started,
               double precision = 0.5, std::optional<std::string_view> derived_prefix = std::nullopt,
               const std::string& backend = "sim") {
  RunInfo info = t::SampleRunInfo();
  info.started_wall = started;
  info.backend = backend;
  auto run = store.BeginRun(info);
  REQUIRE(run.ok());
  const std::vector<ComponentRow> rows = t::SampleComponents();
  std::vector<ComponentRef> refs = RefsTo(rows);
  for (ComponentRef& c : refs) c.serial = {};
  REQUIRE((derived_prefix ? store.AddComponents(*run, refs, *derived_prefix) : store.AddComponents(*run, rows)).ok());
  REQUIRE(store.AddJobs(*run, t::SampleJobs()).ok());
  REQUIRE(store.AppendEvents(*run, t::SampleEvents()).ok());
  RunMetrics m = t::SampleMetrics();
  m.faults[0].time_to_recover = ttr;
  m.precision = precision;
  REQUIRE(store.AddMetrics(*run, m).ok());
  REQUIRE(store.AddGates(*run, t::SampleGates()).ok());
  REQUIRE(store.FinishRun(*run, ttr ? "passed" : "failed", ttr ? 0 : 1, started, "").ok());
  return *run;
}

const MetricChange& Change(const Comparison& c, const std::string& name) {
  for (const MetricChange& ch : c.changes) {
    if (ch.a.name == name) return ch;
  }
  FAIL("no metric " << name);
  return c.changes.front();
}

Comparison Compare(ReportStore& store, int64_t a, int64_t b, const std::string& fail_on) {
  auto thresholds = ParseThresholds(fail_on);
  REQUIRE_MESSAGE(thresholds.ok(), thresholds.status().ToString());
  return CompareMetrics(a, *RunMetricValues(store, a), b, *RunMetricValues(store, b), *thresholds);
}

int64_t CountRows(const std::string& path, const std::string& table) {
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  REQUIRE(db.ok());
  return *db->QueryInt("SELECT count(*) FROM " + table, "count");
}

// The tables with rows in a sample run (event_details stays empty in a file written by this build).
const char* const kTables[] = {"runs", "components", "jobs", "faults", "fault_reverts", "detections",
                               "isolations", "actions", "job_events", "checkpoints", "physics",
                               "fault_metrics", "job_impacts", "job_metrics", "run_metrics",
                               "run_metric_items", "faulty_isolations", "gates", "placements"};

}  // namespace

TEST_CASE("reports.compare: deltas have a direction and thresholds fail only past their allowance") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  int64_t a = AddRun(*store, Duration::Seconds(100), "2025-01-01T00:00:00Z", 1.0);
  int64_t b = AddRun(*store, Duration::Seconds(109), "2025-01-02T00:00:00Z", 0.5);
  Comparison c = Compare(*store, a, b, "ttr.p95=+10%");
  CHECK(Change(c, "ttr.p95").delta == doctest::Approx(9));
  CHECK(Change(c, "ttr.p95").verdict == -1);
  CHECK(Change(c, "precision").verdict == -1);  // higher is better, and it went down
  CHECK(Change(c, "blast.gpus").verdict == 0);
  CHECK(c.regressions == 0);  // +9% is within +10%
  CHECK(Compare(*store, a, b, "ttr.p95=+8%").regressions == 1);
  CHECK(Compare(*store, a, b, "ttr.max=+5s").regressions == 1);
  CHECK(Compare(*store, a, b, "ttr.max=+10s").regressions == 0);
  CHECK(Compare(*store, a, b, "precision=-0.4").regressions == 1);
  CHECK(Compare(*store, b, a, "precision=-0.4,ttr.p95=+0%").regressions == 0);  // a is better than b
  std::string text = RenderComparison(Compare(*store, a, b, "precision=-0.4"));
  CHECK(text.find("FAIL  precision regressed: 1 -> 0.5 exceeds precision=-0.4") != std::string::npos);
}

TEST_CASE("reports.compare: a fault that no longer recovers is infinitely worse - bad thresholds are refused") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  int64_t a = AddRun(*store, Duration::Seconds(100), "2025-01-01T00:00:00Z");
  int64_t b = AddRun(*store, std::nullopt, "2025-01-02T00:00:00Z");
  Comparison c = Compare(*store, a, b, "ttr.max=+1000%");
  CHECK(std::isinf(Change(c, "ttr.max").b.value));
  CHECK(Change(c, "faults.unrecovered").delta == 1);
  CHECK(c.regressions == 1);
  CHECK(ParseThresholds("ttr.p95").status().code() == StatusCode::kInvalidArgument);
  CHECK(ParseThresholds("tttr.p95=+1%").status().message().find("known: ttr.p50") != std::string::npos);
  CHECK(ParseThresholds("precision=+0.1").status().message().find("goes down; write -0.1") != std::string::npos);
  CHECK(ParseThresholds("ttr.max=+5 parsecs").status().code() == StatusCode::kInvalidArgument);
  CHECK(ParseThresholds("ettr.min=-abc").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("reports.merge: every row of every table arrives once, under new run ids - a second merge adds nothing") {
  TempDir dir;
  std::string pa = dir.File("a.db"), pb = dir.File("b.db"), out = dir.File("all.db");
  {
    auto a = ReportStore::Open(pa);
    auto b = ReportStore::Open(pb);
    REQUIRE((a.ok() && b.ok()));
    AddRun(*a, Duration::Seconds(100), "2025-01-01T00:00:00Z");
    AddRun(*a, std::nullopt, "2025-01-01T01:00:00Z");
    AddRun(*b, Duration::Seconds(50), "2025-01-02T00:00:00Z");
  }
  auto dest = ReportStore::Open(out);
  REQUIRE(dest.ok());
  auto ca = MergeInto(*dest, pa);
  REQUIRE_MESSAGE(ca.ok(), ca.status().ToString());
  auto cb = MergeInto(*dest, pb);
  REQUIRE_MESSAGE(cb.ok(), cb.status().ToString());
  CHECK(ca->runs_copied == 2);
  CHECK(cb->runs_copied == 1);
  int64_t total = 0;
  for (const char* table : kTables) {
    CAPTURE(table);
    CHECK(CountRows(pa, table) > 0);
    CHECK(CountRows(out, table) == CountRows(pa, table) + CountRows(pb, table));
    total += CountRows(out, table);
  }
  CHECK(ca->rows_copied + cb->rows_copied == total);
  CHECK(CountRows(out, "events") == CountRows(pa, "events") + CountRows(pb, "events"));
  CHECK(dest->ReadRun(3)->info.started_wall == "2025-01-02T00:00:00Z");  // b's run 1 is now run 3
  CHECK(dest->ReadEvents(3)->size() == 12);
  CHECK(dest->ReadGates(3)->size() == 2);

  auto again = MergeInto(*dest, pa);
  REQUIRE(again.ok());
  CHECK(again->runs_copied == 0);
  CHECK(again->runs_skipped == 2);
  CHECK(CountRows(out, "events") == CountRows(pa, "events") + CountRows(pb, "events"));
}

TEST_CASE("reports.merge: a run still 'running' is left out and counted, and arrives once it finished (issue 26)") {
  TempDir dir;
  std::string src = dir.File("src.db"), out = dir.File("all.db");
  int64_t open_run = 0;
  {
    auto s = ReportStore::Open(src);
    REQUIRE(s.ok());
    AddRun(*s, Duration::Seconds(100), "2025-01-01T00:00:00Z");
    RunInfo info = t::SampleRunInfo();
    info.started_wall = "2025-01-01T01:00:00Z";
    open_run = *s->BeginRun(info);  // a killed run: its row stays 'running'
  }
  auto dest = ReportStore::Open(out);
  REQUIRE(dest.ok());
  auto first = MergeInto(*dest, src);
  REQUIRE_MESSAGE(first.ok(), first.status().ToString());
  CHECK(first->runs_copied == 1);
  CHECK(first->runs_running == 1);
  CHECK(*StoreAccess::DbOf(*dest).QueryInt("SELECT count(*) FROM runs WHERE status = 'running'", "running") == 0);
  {
    auto s = ReportStore::Open(src);
    REQUIRE(s.ok());
    REQUIRE(s->FinishRun(open_run, "passed", 0, "2025-01-01T02:00:00Z", "").ok());
  }
  auto second = MergeInto(*dest, src);  // the finished run is not kept out by a frozen copy of itself
  REQUIRE(second.ok());
  CHECK(second->runs_copied == 1);
  CHECK(second->runs_skipped == 1);
  CHECK(second->runs_running == 0);
}

TEST_CASE("reports.merge: an older source is merged through a migrated copy and left as it was") {
  TempDir dir;
  std::string v2 = dir.File("v2.db");
  t::LoadDump(t::DataFile("v2_quickstart.sql"), v2);
  auto dest = ReportStore::Open(dir.File("all.db"));
  REQUIRE(dest.ok());
  auto counts = MergeInto(*dest, v2);
  REQUIRE_MESSAGE(counts.ok(), counts.status().ToString());
  CHECK(counts->runs_copied == 2);
  CHECK(CountRows(dir.File("all.db"), "events") == 140);
  CHECK(CountRows(dir.File("all.db"), "fault_reverts") == 6);
  CHECK(dest->ReadEvents(2)->at(3).detail == "reverted: orphan");
  // The source is still version 2, with its events table.
  auto src = Db::Open(v2, SQLITE_OPEN_READONLY);
  REQUIRE(src.ok());
  CHECK(*src->QueryInt("PRAGMA user_version", "version") == 2);
  CHECK(*src->QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'events' AND type = 'table'", "t") == 1);
  CHECK(MergeInto(*dest, v2)->runs_skipped == 2);
}

// A large topology merged into an empty file is that file's first: StoreTopology indexes it after its
// rows (dropping the indexes inside the merge's transaction), and a second run of it shares the copy.
TEST_CASE("reports.merge: topologies arrive through the store's own path, a large first one included") {
  TempDir dir;
  const std::string src = dir.File("src.db"), out = dir.File("all.db");
  std::vector<ComponentRow> rows;
  for (uint32_t i = 0; i < 12000; ++i)
    rows.push_back({i, "r" + std::to_string(i / 100) + ".p" + std::to_string(i % 100), "gpu",
                    i % 100 ? i - 1 : kNoComponent, "SN" + std::to_string(i)});
  {
    auto s = ReportStore::Open(src);
    REQUIRE(s.ok());
    for (const char* wall : {"2025-01-01T00:00:00Z", "2025-01-01T01:00:00Z"}) {
      RunInfo info = t::SampleRunInfo();
      info.started_wall = wall;
      auto run = s->BeginRun(info);
      REQUIRE(run.ok());
      REQUIRE(s->AddComponents(*run, rows).ok());
      REQUIRE(s->FinishRun(*run, "passed", 0, wall, "").ok());  // merge leaves 'running' runs out
    }
  }
  auto dest = ReportStore::Open(out);
  REQUIRE(dest.ok());
  auto counts = MergeInto(*dest, src);
  REQUIRE_MESSAGE(counts.ok(), counts.status().ToString());
  CHECK(counts->runs_copied == 2);
  CHECK(*StoreAccess::DbOf(*dest).QueryInt("SELECT count(*) FROM topologies", "count") == 1);
  CHECK(*StoreAccess::DbOf(*dest).QueryInt("SELECT count(*) FROM topology_components", "count") == 12000);
  CHECK(TopologyDigest(*dest->ReadComponents(2)) == TopologyDigest(rows));
  CHECK(*StoreAccess::DbOf(*dest).QueryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND "
                             "tbl_name = 'topology_components' AND sql IS NOT NULL", "indexes") >= 2);
  CHECK(*StoreAccess::DbOf(*dest).QueryInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'", "ok") == 0);
}

TEST_CASE("reports.merge: refuses itself, absent files and foreign databases, and leaves the source untouched") {
  TempDir dir;
  auto dest = ReportStore::Open(dir.File("all.db"));
  REQUIRE(dest.ok());
  CHECK(MergeInto(*dest, dir.File("all.db")).status().code() == StatusCode::kInvalidArgument);
  CHECK(MergeInto(*dest, dir.File("missing.db")).status().code() == StatusCode::kNotFound);
  {
    auto other = Db::Open(dir.File("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    REQUIRE(other.ok());
    REQUIRE(other->Exec("CREATE TABLE customers(name TEXT)", "setup").ok());
  }
  CHECK(MergeInto(*dest, dir.File("other.db")).status().code() == StatusCode::kInvalidArgument);
  CHECK(dest->ListRuns()->empty());
}

TEST_CASE("reports.history: runs that touched a serial, counts under it, lemons") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  AddRun(*store, Duration::Seconds(100), "2025-01-01T00:00:00Z", 0.5, std::nullopt, "ssh");
  AddRun(*store, Duration::Seconds(40), "2025-01-02T00:00:00Z", 0.5, std::nullopt, "ssh");
  auto h = ReadRackHistory(*store, "RK-001");
  REQUIRE(h.ok());
  REQUIRE(h->runs.size() == 2);
  CHECK(h->runs[0].faults == 1);       // the tray_pull on r01.tray03, under the rack
  CHECK(h->runs[0].isolations == 2);   // r01.tray03 and r01.tray05
  CHECK(*h->runs[1].ttr_max_s == 40);
  // r01.tray03 was isolated in both runs for the tray_pull injected into it: not a lemon. r01.tray05 was
  // isolated in both with no injected fault to explain it: on real racks, that is a lemon.
  REQUIRE(h->offenders.size() == 1);
  CHECK(h->offenders[0].name == "r01.tray05");
  CHECK(h->offenders[0].runs == std::vector<int64_t>{1, 2});
  std::string text = RenderHistory(*h);
  CHECK(text.find("    worst TTR on this rack: 100.0s (run 1) -> 40.0s (run 2): improving") != std::string::npos);
  CHECK(text.find("  r01.tray05 (TR-005): 2 runs (1, 2)\n") != std::string::npos);
  CHECK(ReadRackHistory(*store, "RK-001", 3)->offenders.empty());
  CHECK(RenderHistory(*ReadRackHistory(*store, "RK-001", 3)).ends_with("Lemons: none\n"));
  // The database-wide list, and per run.
  auto lemons = ReadLemons(*store, 2);
  REQUIRE(lemons.ok());
  REQUIRE(lemons->size() == 1);
  CHECK(ReadLemons(*store, 2, 1)->size() == 1);
  CHECK(ReadLemons(*store, 3)->empty());
  // A tray serial narrows it: r01.tray05 had no fault but was isolated.
  auto tray = ReadRackHistory(*store, "TR-005");
  REQUIRE(tray.ok());
  CHECK(tray->runs[0].faults == 0);
  CHECK(tray->runs[0].isolations == 1);
  CHECK(tray->offenders.size() == 1);
  CHECK(ReadRackHistory(*store, "TR-003")->offenders.empty());
  CHECK(ReadRackHistory(*store, "NOPE")->runs.empty());
}

// The walk goes down each topology once and meets the runs after: runs of two topologies, one with its
// serials derived from a prefix (stored as NULL), each found by its own serials only.
TEST_CASE("reports.history: serials derived from a topology's prefix and runs of two topologies") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  AddRun(*store, Duration::Seconds(100), "2025-01-01T00:00:00Z", 0.5, std::nullopt, "ssh");
  AddRun(*store, Duration::Seconds(30), "2025-01-02T00:00:00Z", 0.5, "SIM-x-", "ssh");
  AddRun(*store, std::nullopt, "2025-01-03T00:00:00Z", 0.5, "SIM-x-", "ssh");
  CHECK(*StoreAccess::DbOf(*store).QueryInt("SELECT count(*) FROM topologies", "count") == 2);
  auto rack = ReadRackHistory(*store, "SIM-x-r01");
  REQUIRE(rack.ok());
  REQUIRE(rack->runs.size() == 2);
  CHECK(rack->runs[0].run == 2);
  CHECK(rack->runs[1].run == 3);
  CHECK(rack->runs[0].faults == 1);
  CHECK(rack->runs[0].isolations == 2);
  CHECK(rack->runs[0].unrecovered == 0);
  CHECK(rack->runs[1].unrecovered == 1);
  CHECK(*rack->runs[0].ttr_max_s == 30);
  CHECK_FALSE(rack->runs[1].ttr_max_s);
  REQUIRE(rack->offenders.size() == 1);
  CHECK(rack->offenders[0].serial == "SIM-x-r01.tray05");
  CHECK(rack->offenders[0].runs == std::vector<int64_t>{2, 3});
  auto spelled = ReadRackHistory(*store, "RK-001", 1);
  REQUIRE(spelled.ok());
  REQUIRE(spelled->runs.size() == 1);
  CHECK(spelled->runs[0].run == 1);
  REQUIRE(spelled->offenders.size() == 1);
  CHECK(spelled->offenders[0].serial == "TR-005");
  auto tray = ReadRackHistory(*store, "SIM-x-r01.tray05");
  REQUIRE(tray.ok());
  REQUIRE(tray->runs.size() == 2);
  CHECK(tray->runs[1].faults == 0);
  CHECK(tray->runs[1].isolations == 1);
  CHECK(ReadRackHistory(*store, "SIM-x-r01.tray03.gpu2")->runs.size() == 2);
  CHECK(ReadRackHistory(*store, "SIM-y-r01")->runs.empty());
  CHECK(ReadRackHistory(*store, "SIM-x-")->runs.empty());
}
