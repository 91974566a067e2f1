#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <span>
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

using t::IntOpenExisting;
using t::OpenExisting;

// Every row of `sql`, one string per row, columns joined by '|'.
std::vector<std::string> Rows(Db& db, const std::string& sql) {
  auto stmt = db.Prepare(sql, "test query");
  REQUIRE_MESSAGE(stmt.ok(), stmt.status().ToString());
  std::vector<std::string> rows;
  while (true) {
    auto row = stmt->Step("test query");
    REQUIRE(row.ok());
    if (!*row) break;
    rows.push_back(stmt->Text(0));
  }
  return rows;
}

// A dump of every table and view and the schema itself, in a fixed order, minus the wall-clock
// columns and the host (which legitimately differ between two runs of the same plan).
std::string Dump(const std::string& path) {
  Db db = OpenExisting(path);
  std::string out;
  for (const std::string& row : Rows(db, "SELECT type || '|' || name || '|' || coalesce(sql, '') "
                                         "FROM sqlite_schema ORDER BY name")) {
    out += row + "\n";
  }
  out += "user_version=" + std::to_string(*db.QueryInt("PRAGMA user_version", "v")) + "\n";
  for (const std::string& table :
       Rows(db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name")) {
    std::string cols, order;
    for (const std::string& col :
         Rows(db, "SELECT name FROM pragma_table_info('" + table + "') ORDER BY cid")) {
      if ((table == "runs" || table == "run_summary") &&
          (col == "started_wall" || col == "ended_wall" || col == "host")) {
        continue;
      }
      cols += (cols.empty() ? "" : " || '|' || ") + std::string("quote(") + col + ")";
      order += (order.empty() ? "" : ", ") + col;
    }
    out += "== " + table + "\n";
    for (const std::string& row : Rows(db, "SELECT " + cols + " FROM " + table + " ORDER BY " + order)) {
      out += row + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("reports.store: a new store is at the latest schema version, marked as a rackchaos report, in WAL mode") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE_MESSAGE(store.ok(), store.status().ToString());
    CHECK(store->LatestRun().status().code() == StatusCode::kNotFound);
  }
  CHECK(IntOpenExisting(path, "PRAGMA user_version") == LatestSchemaVersion());
  CHECK(IntOpenExisting(path, "PRAGMA application_id") == kReportApplicationId);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM schema_history") == LatestSchemaVersion());
  Db db = OpenExisting(path);
  CHECK(Rows(db, "PRAGMA journal_mode") == std::vector<std::string>{"wal"});
}

TEST_CASE("reports.store: a run round-trips, starts as 'running' and ends with FinishRun") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  RunInfo info = t::SampleRunInfo();
  info.seed = UINT64_MAX;  // does not fit SQLite's signed integer
  auto run = store->BeginRun(info);
  REQUIRE(run.ok());
  CHECK(*run == 1);
  auto row = store->ReadRun(*run);
  REQUIRE(row.ok());
  CHECK(row->status == "running");
  CHECK_FALSE(row->exit_code.has_value());
  CHECK(row->info.seed == UINT64_MAX);
  CHECK(row->info.plan_hash == PlanHash(info.plan_text));
  CHECK(row->info.plan_hash.size() == 16);
  CHECK(row->info.command_line == info.command_line);

  REQUIRE(store->FinishRun(*run, "failed", 1, "2025-01-02T04:00:00Z", "ttr.p95 < 10m").ok());
  row = store->ReadRun(*run);
  CHECK(row->status == "failed");
  CHECK(row->exit_code == 1);
  CHECK(row->failed_reason == "ttr.p95 < 10m");
  CHECK(store->FinishRun(*run, "great", 0, "", "").code() == StatusCode::kInvalidArgument);
  CHECK(store->FinishRun(99, "passed", 0, "", "").code() == StatusCode::kNotFound);
  CHECK(store->ReadRun(99).status().code() == StatusCode::kNotFound);
  CHECK(*store->LatestRun() == 1);
  CHECK(*store->BeginRun(info) == 2);
  CHECK(store->ListRuns()->size() == 2);
}

TEST_CASE("reports.store: a run whose process died stays visible as 'running'") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    auto run = store->BeginRun(t::SampleRunInfo());
    REQUIRE(run.ok());
    REQUIRE(store->AppendEvents(*run, t::SampleEvents()).ok());
  }  // no FinishRun
  auto store = ReportStore::OpenReadOnly(path);
  REQUIRE(store.ok());
  CHECK(store->ReadRun(1)->status == "running");
  CHECK(store->ReadEvents(1)->size() == t::SampleEvents().size());
}

TEST_CASE("reports.store: events land in the events table and in their typed tables") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
    auto events = store->ReadEvents(1);
    REQUIRE(events.ok());
    REQUIRE(events->size() == 12);
    CHECK((*events)[0].seq == 1);
    CHECK((*events)[11].seq == 12);  // seq continues across the two batches
    CHECK((*events)[1].type == "fault_injected");
    CHECK((*events)[1].component == 1);
    CHECK((*events)[1].fault == 1);
    CHECK((*events)[1].detail == "tray_pull on 'r01.tray03': graceful=false");
    CHECK((*events)[4].at == Duration::Millis(72500));
    CHECK((*events)[8].job == 0);
    CHECK((*events)[8].component == kNoComponent);
    CHECK(store->ReadEvents(1, 3)->size() == 3);
  }
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM faults") == 1);
  CHECK(IntOpenExisting(path, "SELECT injected_us FROM faults WHERE fault_id = 1") == 60'000'000);
  CHECK(IntOpenExisting(path, "SELECT reverted_us FROM faults WHERE fault_id = 1") == 600'000'000);
  CHECK(IntOpenExisting(path, "SELECT port IS NULL FROM faults") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM detections WHERE detector = 'heartbeat'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM isolations WHERE detection_ids = '1'") == 2);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM actions WHERE ok = 1") == 2);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM job_events") == 3);
  CHECK(IntOpenExisting(path, "SELECT lost_work_us FROM job_events WHERE seq = 10") == 10'000'000);
  CHECK(IntOpenExisting(path, "SELECT cause_fault_id FROM job_events WHERE state = 'hung'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM job_placements WHERE trays = '3,4' AND seq = 10") == 1);
  CHECK(IntOpenExisting(path, "SELECT step FROM checkpoints") == 64);
  CHECK(IntOpenExisting(path, "SELECT cause_fault_id FROM physics WHERE what = 'removed'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM events WHERE job_id IS NULL AND component_id IS NULL") == 1);
  // Stored once: the revert has its own row, and `events` is a view over the typed tables.
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM fault_reverts WHERE detail = 'tray reinserted'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'events' AND type = 'view'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM event_details") == 0);
}

// A store in a fresh file with one run begun: `store` and `run` as the tests below use them.
struct OneRun {
  OneRun() {
    REQUIRE(opened.ok());
    begun = opened->BeginRun(t::SampleRunInfo());
    REQUIRE(begun.ok());
  }
  TempDir dir;
  std::string path = dir.File("r.db");
  Result<ReportStore> opened = ReportStore::Open(path);
  Result<int64_t> begun = Status::Internal("not begun");
};

TEST_CASE("reports.store: events are stored once whatever the batch shape, and read back in order") {
  OneRun fresh;
  const std::string& path = fresh.path;
  auto& store = fresh.opened;
  auto& run = fresh.begun;
  // 1000 events: full many-row inserts per type, remainders, and faults and reverts in between
  // (a revert must close the injection written before it in the same batch).
  std::vector<Event> events;
  for (int i = 0; i < 1000; ++i) {
    Time at = Duration::Millis(i);
    if (i % 100 == 10) events.push_back({at, FaultInjected{static_cast<FaultId>(i / 100 + 1), "k", 1, -1, "s", ""}});
    else if (i % 100 == 60) events.push_back({at, FaultReverted{static_cast<FaultId>(i / 100 + 1), ""}});
    else if (i % 3 == 0) events.push_back({at, PhysicsChanged{1, "temp", static_cast<double>(i), kNoFault}});
    else if (i % 7 == 0) events.push_back({at, Isolated{2, "gpu", {static_cast<DetectionId>(i), 7}, "r"}});
    else events.push_back({at, JobChanged{0, JobState::kRunning, static_cast<double>(i), 1, 1, 8, {}, kNoFault, "", {static_cast<ComponentId>(i)}}});
  }
  REQUIRE(store->AppendEvents(*run, events).ok());
  REQUIRE(store->AppendEvents(*run, std::span<const Event>(events).first(70)).ok());
  auto read = store->ReadEvents(*run);
  REQUIRE(read.ok());
  REQUIRE(read->size() == 1070);
  for (size_t i = 0; i < read->size(); ++i) {
    const EventRow& e = (*read)[i];
    const Event& want = events[i % 1000];
    CAPTURE(i);
    CHECK(e.seq == static_cast<int64_t>(i + 1));
    CHECK(e.at == want.at);
    CHECK(e.type == EventTypeName(want.body));
  }
  CHECK(*store->CountEvents(*run) == 1070);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM faults WHERE reverted_us IS NULL") == 0);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM isolations WHERE detection_ids = '994,7'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM job_placements WHERE trays = '998'") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM job_placements WHERE trays = '68'") == 2);
}

TEST_CASE("reports.store: views join names so plain sqlite3 queries read well") {
  TempDir dir;
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  Db db = OpenExisting(path);
  CHECK(Rows(db, "SELECT target_kind || ' ' || target_serial || ' ' || ttd_s || ' ' || "
                 "coalesce(ttr_s, '-') || ' ' || gpus_total FROM fault_summary") ==
        std::vector<std::string>{"compute_tray TR-003 12.5 - 72"});
  CHECK(Rows(db, "SELECT component FROM event_log WHERE type = 'detected'") ==
        std::vector<std::string>{"r01.tray03"});
  CHECK(Rows(db, "SELECT job FROM event_log WHERE type = 'checkpoint'") ==
        std::vector<std::string>{"llm-train"});
  // In event order without an ORDER BY, as when the events were rows of one table.
  CHECK(Rows(db, "SELECT seq FROM event_log LIMIT 4") == std::vector<std::string>{"1", "2", "3", "4"});
  CHECK(Rows(db, "SELECT type FROM events LIMIT 3") ==
        std::vector<std::string>{"job", "fault_injected", "physics"});
  CHECK(Rows(db, "SELECT target || ' ' || reverted_s FROM fault_timeline") ==
        std::vector<std::string>{"r01.tray03 600.0"});
  CHECK(Rows(db, "SELECT ettr_pct FROM job_summary WHERE name = 'llm-train'") ==
        std::vector<std::string>{"87.3"});
  CHECK(Rows(db, "SELECT status || ' ' || faults || ' ' || precision FROM run_summary") ==
        std::vector<std::string>{"passed 1 0.5"});
}

TEST_CASE("reports.store: metrics read back exactly as written, and writing them again replaces them") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  int64_t run = t::WriteSampleRun(*store);
  REQUIRE(store->AddMetrics(run, t::SampleMetrics()).ok());
  auto m = store->ReadMetrics(run);
  REQUIRE(m.ok());
  RunMetrics want = t::SampleMetrics();
  REQUIRE(m->faults.size() == 1);
  const FaultMetrics& f = m->faults[0];
  CHECK(f.fault == 1);
  CHECK(f.target == "r01.tray03");
  CHECK(f.reverted == want.faults[0].reverted);
  CHECK(f.time_to_detect == Duration::Millis(12500));
  CHECK(f.time_to_isolate == Duration::Seconds(20));
  CHECK_FALSE(f.time_to_recover.has_value());
  CHECK(f.gpus_collateral == 68);
  CHECK(f.gpu_hours_lost == 1.2345);
  CHECK(f.rework == Duration::Seconds(10));
  CHECK(f.isolated == want.faults[0].isolated);
  REQUIRE(m->impacts.size() == 1);
  CHECK(m->impacts[0].interrupted);
  CHECK(m->impacts[0].stalled == Duration::Seconds(30));
  REQUIRE(m->jobs.size() == 2);
  CHECK(m->jobs[0].ettr == 0.8734);
  CHECK(m->jobs[0].up == Duration::Seconds(590));  // job.mttf's inputs (schema version 15)
  CHECK(m->jobs[0].failures == 2);
  CHECK(m->jobs[1].name == "eval");
  CHECK(m->isolations == 2);
  CHECK(m->correct_isolations == 1);
  CHECK(m->precision == 0.5);
  CHECK(m->false_isolations == std::vector<std::string>{"r01.tray05"});
  CHECK(m->faulty_isolations == std::vector<std::string>{"r01.tray03"});
  CHECK(m->gpus_drained == 8);
  CHECK(m->drained_gpu_hours == doctest::Approx(1.5));
  CHECK(m->missed_faults.empty());
  CHECK(store->ReadComponents(run)->size() == 4);
  CHECK(store->ReadComponents(run)->at(0).parent == kNoComponent);
  CHECK(store->ReadJobs(run)->at(0).nominal_step_s == 1.25);
}

TEST_CASE("reports.store: the same run written into two fresh files gives identical rows except wall time and host") {
  TempDir dir;
  for (const char* name : {"a.db", "b.db"}) {
    auto store = ReportStore::Open(dir.File(name));
    REQUIRE(store.ok());
    t::WriteSampleRun(*store);
  }
  {
    // Wall-clock columns and host differ between real runs; the dump must not care.
    auto b = ReportStore::Open(dir.File("b.db"));
    RunInfo other = t::SampleRunInfo();
    other.host = "elsewhere";
    other.started_wall = "2030-01-01T00:00:00Z";
    auto a = ReportStore::Open(dir.File("a.db"));
    REQUIRE(a->BeginRun(t::SampleRunInfo()).ok());
    REQUIRE(b->BeginRun(other).ok());
  }
  std::string a = Dump(dir.File("a.db")), b = Dump(dir.File("b.db"));
  CHECK(a.find("== events") != std::string::npos);
  CHECK(a.find("== event_log") != std::string::npos);
  CHECK(a.find("graceful=false") != std::string::npos);
  CHECK(a == b);
}

TEST_CASE("reports.store: a batch that fails leaves nothing of itself behind") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  REQUIRE(store->AddComponents(*run, t::SampleComponents()).ok());
  // The duplicate id violates the primary key after the first rows went in.
  Status s = store->AddComponents(*run, {{7, "r02", "rack", kNoComponent, "RK-2"}, t::SampleComponents()[0]});
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("adding components to run 1") != std::string::npos);
  CHECK(store->ReadComponents(*run)->size() == 4);
  CHECK(store->AppendEvents(42, t::SampleEvents()).code() == StatusCode::kNotFound);
  // The store is still usable after a failed batch.
  CHECK(store->AppendEvents(*run, t::SampleEvents()).ok());
}

TEST_CASE("reports.store: components go in 64 rows per statement - a duplicate deep in a batch is still named") {
  OneRun fresh;
  const std::string& path = fresh.path;
  auto& store = fresh.opened;
  auto& run = fresh.begun;
  // 200 rows: three full statements and 8 single rows; row 150 repeats the id of row 10.
  std::vector<ComponentRow> rows;
  for (uint32_t i = 0; i < 200; ++i)
    rows.push_back({i == 150 ? 10u : i, "c" + std::to_string(i), "gpu", kNoComponent, "S" + std::to_string(i)});
  Status s = store->AddComponents(*run, rows);
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("adding components to run 1 (c150) in report") == 0);
  CHECK(store->ReadComponents(*run)->empty());
  rows[150].id = 150;
  REQUIRE(store->AddComponents(*run, rows).ok());
  auto read = store->ReadComponents(*run);
  REQUIRE(read->size() == 200);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM components WHERE name = 'c' || id AND serial = 'S' || id") == 200);
}

namespace {
// Comma-separated ids as a sorted set.
std::set<ComponentId> IdSet(const std::string& text) {
  std::set<ComponentId> out;
  std::stringstream in(text);
  for (std::string id; std::getline(in, id, ',');) out.insert(static_cast<ComponentId>(std::stoul(id)));
  return out;
}
}  // namespace

// A big run's rows sit in the WAL until a checkpoint copies them into the file. FinishRun copies them as
// the run ends (before, a sweep's later seed paid for an earlier one's); a small run leaves that to SQLite.
TEST_CASE("reports.store: a run that stored many rows copies them into the file as it ends; a small run does not") {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto store = ReportStore::Open(path);
  REQUIRE(store.ok());
  auto size = [&] { return std::filesystem::file_size(path); };
  // The file's first components go around the WAL; a second cluster goes through it.
  auto first = store->BeginRun(t::SampleRunInfo());
  REQUIRE(first.ok());
  REQUIRE(store->AddComponents(*first, t::SampleComponents()).ok());
  REQUIRE(store->FinishRun(*first, "passed", 0, "2025-01-02T04:00:00Z", "").ok());
  auto big = store->BeginRun(t::SampleRunInfo());
  REQUIRE(big.ok());
  std::vector<ComponentRow> rows;
  for (ComponentId c = 0; c < 60000; ++c)
    rows.push_back({c, "c" + std::to_string(c), "gpu", kNoComponent, "SN" + std::to_string(c)});
  REQUIRE(store->AddComponents(*big, rows).ok());
  const auto before_big = size();
  REQUIRE(store->FinishRun(*big, "passed", 0, "2025-01-02T05:00:00Z", "").ok());
  CHECK(size() > before_big + 1000000);  // 60,000 rows with their indexes: several MB
  auto small = store->BeginRun(t::SampleRunInfo());
  REQUIRE(small.ok());
  const auto before_small = size();
  REQUIRE(store->FinishRun(*small, "passed", 0, "2025-01-02T06:00:00Z", "").ok());
  CHECK(size() == before_small);
  // Whatever was copied when, every run reads back.
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM runs WHERE status = 'passed'") == 3);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM components WHERE run_id = " + std::to_string(*big)) == 60000);
}

TEST_CASE("reports.store: a restart that swaps a few trays is stored as the difference - every list rebuilds") {
  OneRun fresh;
  const std::string& path = fresh.path;
  auto& store = fresh.opened;
  auto& run = fresh.begun;
  // 40 placements of 100 trays, each swapping one tray for a new one, then one on other trays.
  std::vector<std::vector<ComponentId>> lists;
  std::vector<ComponentId> trays;
  for (ComponentId t = 0; t < 100; ++t) trays.push_back(10 * t);
  std::vector<Event> events;
  for (int k = 0; k < 41; ++k) {
    if (k > 0 && k < 40) {
      trays.erase(trays.begin() + k);
      trays.push_back(5000 + static_cast<ComponentId>(k));
    }
    if (k == 40) for (ComponentId& t : trays) t += 1;
    lists.push_back(trays);
    TrayList placed = trays;  // two events share one placement
    events.push_back({Duration::Minutes(2 * k), JobChanged{0, JobState::kRunning, 0, 1, 1, 400, {}, kNoFault, "", placed}});
    events.push_back({Duration::Minutes(2 * k + 1), JobChanged{0, JobState::kHung, 0, 0, 0, 400, {}, kNoFault, "", placed}});
  }
  REQUIRE(store->AppendEvents(*run, events).ok());
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM placements") == 41);
  // Placement 1 is whole; 2-13 are differences of one tray each (24 ids: a 13th would bring the chain's
  // ids to a quarter of the 100-tray list); 14 is whole again, and so are 27 and 40; 41 (every tray
  // changed) is whole.
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  REQUIRE(db.ok());
  auto rows = db->Prepare("SELECT id, base_id, trays, added, removed FROM placements ORDER BY id", "read");
  REQUIRE(rows.ok());
  std::map<int64_t, std::set<ComponentId>> rebuilt;
  std::vector<int64_t> whole;
  while (*rows->Step("read")) {
    int64_t id = rows->Int(0);
    if (rows->IsNull(1)) {
      whole.push_back(id);
      rebuilt[id] = IdSet(rows->Text(2));
      continue;
    }
    CHECK(rows->Text(2).empty());
    CHECK(IdSet(rows->Text(3)).size() == 1);
    CHECK(IdSet(rows->Text(4)).size() == 1);
    std::set<ComponentId> s = rebuilt.at(rows->Int(1));
    for (ComponentId t : IdSet(rows->Text(4))) CHECK(s.erase(t) == 1);
    for (ComponentId t : IdSet(rows->Text(3))) CHECK(s.insert(t).second);
    rebuilt[id] = s;
  }
  CHECK(whole == std::vector<int64_t>{1, 14, 27, 40, 41});
  REQUIRE(rebuilt.size() == lists.size());
  for (size_t k = 0; k < lists.size(); ++k) {
    CAPTURE(k);
    CHECK(rebuilt[static_cast<int64_t>(k + 1)] == std::set<ComponentId>(lists[k].begin(), lists[k].end()));
  }
  // Both events of a placement refer to its row.
  CHECK(IntOpenExisting(path, "SELECT count(DISTINCT placement_id) FROM job_events") == 41);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM job_events WHERE placement_id IS NULL") == 0);
}

TEST_CASE("reports.store: a big job's list is whole again after 1,024 differences, and every list reads back") {
  OneRun fresh;
  const std::string& path = fresh.path;
  // 1,100 restarts of a 10,000-tray job, each swapping one tray: the chain's ids stay under a quarter
  // of the list (2,200 < 2,500), so the row bound is what starts a whole list again.
  std::vector<ComponentId> trays;
  for (ComponentId t = 0; t < 10000; ++t) trays.push_back(2 * t);
  std::vector<std::vector<ComponentId>> lists;
  std::vector<Event> events;
  for (int k = 0; k <= 1100; ++k) {
    if (k > 0) {
      trays.erase(trays.begin() + k);
      trays.push_back(100000 + static_cast<ComponentId>(k));
    }
    lists.push_back(trays);
    events.push_back({Duration::Minutes(k), JobChanged{0, JobState::kRunning, 0, 1, 1, 40000, {}, kNoFault, "", trays}});
  }
  REQUIRE(fresh.opened->AppendEvents(*fresh.begun, events).ok());
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM placements") == 1101);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM placements WHERE base_id IS NULL") == 2);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM placements WHERE base_id IS NULL AND id = 1026") == 1);
  CHECK(IntOpenExisting(path, "SELECT count(*) FROM placements WHERE base_id IS NOT NULL AND base_id != id - 1") == 0);
  // The store's own reader rebuilds each list.
  auto read = fresh.opened->ReadRunEvents(*fresh.begun);
  REQUIRE(read.ok());
  size_t k = 0;
  for (const Event& e : *read) {
    const auto* job = std::get_if<JobChanged>(&e.body);
    if (job == nullptr) continue;
    REQUIRE(k < lists.size());
    std::vector<ComponentId> want = lists[k++];
    std::sort(want.begin(), want.end());
    CHECK(job->trays.ids() == want);
  }
  CHECK(k == lists.size());
}
