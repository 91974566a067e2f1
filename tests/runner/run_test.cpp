// The whole pipeline: plan -> validation -> simulated run -> report database, and its determinism.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "reports/store.h"
#include "runner/plan/plan_loader.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

fs::path TempDir() {
  fs::path dir = fs::temp_directory_path() / ("rackchaos-run-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

runner::RunOutcome RunQuickstart(const std::string& db, uint64_t seed, std::optional<Time> interrupt_at = {}) {
  auto plan = runner::LoadPlan(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {seed, ""});
  REQUIRE(spec.ok());
  runner::RunOptions opt;
  opt.db_path = db;
  opt.interrupt_at = interrupt_at;
  return runner::ExecuteRun(*plan, *spec, opt);
}

// Every row of every table, in key order, except the run row's wall-clock and host columns.
std::string DumpWithoutWallClock(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::string out;
  auto query = [&](const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sql);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const unsigned char* text = sqlite3_column_text(st, i);
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(st);
  };
  std::vector<std::string> tables;
  {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
  }
  CHECK(tables.size() > 10);
  for (const auto& t : tables) {
    out += "== " + t + "\n";
    if (t == "runs") query("SELECT id, plan_name, plan_hash, seed, version, backend, status, exit_code FROM runs ORDER BY id");
    else query("SELECT * FROM " + t);  // natural (insertion or key) order
  }
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("quickstart runs end to end and passes its expectations") {
  fs::path dir = TempDir();
  auto out = RunQuickstart((dir / "a.db").string(), 42);
  CHECK(out.code == rackchaos::ExitCode::kPass);
  CHECK(out.run_id == 1);
  CHECK(out.gates.size() == 5);
  for (const auto& g : out.gates) CHECK_MESSAGE(g.passed, g.message);
  // The summary is rendered from the store and names every fault kind.
  for (const char* kind : {"link_down", "gpu_throttle", "valve_fail", "tray_pull"})
    CHECK(out.summary.find(kind) != std::string::npos);
  auto store = reports::ReportStore::OpenReadOnly((dir / "a.db").string());
  REQUIRE(store.ok());
  auto metrics = store->ReadMetrics(1);
  REQUIRE(metrics.ok());
  REQUIRE(metrics->faults.size() == 4);
  for (const auto& f : metrics->faults) {
    CAPTURE(f.kind);
    CHECK(f.time_to_detect.has_value());
    CHECK(f.time_to_isolate.has_value());
    CHECK(f.time_to_recover.has_value());
    CHECK(f.jobs_interrupted == 1);
    CHECK(f.gpus_direct >= 1);
  }
  CHECK(metrics->precision == doctest::Approx(1));
  CHECK(metrics->recall == doctest::Approx(1));
  fs::remove_all(dir);
}

TEST_CASE("same plan and seed give the same database, byte for byte outside wall-clock columns") {
  fs::path dir = TempDir();
  auto a = RunQuickstart((dir / "a.db").string(), 7);
  auto b = RunQuickstart((dir / "b.db").string(), 7);
  auto c = RunQuickstart((dir / "c.db").string(), 8);
  REQUIRE(a.code == rackchaos::ExitCode::kPass);
  REQUIRE(b.code == rackchaos::ExitCode::kPass);
  std::string da = DumpWithoutWallClock((dir / "a.db").string());
  std::string db = DumpWithoutWallClock((dir / "b.db").string());
  std::string dc = DumpWithoutWallClock((dir / "c.db").string());
  CHECK(da.size() > 10000);
  CHECK(da == db);
  CHECK(da != dc);  // another seed moves heartbeat phases, jitter and so detection times
  fs::remove_all(dir);
}

// A sweep's seeds (runner/campaign/sweep.cpp) validate against one built topology and find the stored rows
// by a digest computed once: the database must be the one of seeds validated and stored one by one.
TEST_CASE("seeds sharing one built topology give the database of seeds validated alone") {
  fs::path dir = TempDir();
  auto plan = runner::LoadPlan(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  REQUIRE(plan.ok());
  runner::TopologyCache cache;
  auto run_seeds = [&](const std::string& db, runner::TopologyCache* topologies) {
    std::vector<runner::RunSpec> specs;
    for (uint64_t seed : {7, 8, 7}) {
      auto spec = runner::ValidatePlan(*plan, {seed, "", topologies});
      REQUIRE(spec.ok());
      runner::RunOptions opt;
      opt.db_path = db;
      CHECK(runner::ExecuteRun(*plan, *spec, opt).run_id > 0);
      specs.push_back(std::move(*spec));
    }
    return specs;
  };
  const auto shared = run_seeds((dir / "shared.db").string(), &cache);
  const auto alone = run_seeds((dir / "alone.db").string(), nullptr);
  CHECK(&*shared[0].topology == &*shared[1].topology);
  CHECK(&*shared[0].topology == &*shared[2].topology);
  CHECK(&*alone[0].topology != &*alone[1].topology);
  const std::string dump = DumpWithoutWallClock((dir / "shared.db").string());
  CHECK(dump.size() > 10000);
  CHECK(dump == DumpWithoutWallClock((dir / "alone.db").string()));
  // Three runs, one stored copy of the cluster's rows.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2((dir / "shared.db").string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    const int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  CHECK(count("SELECT count(*) FROM topologies") == 1);
  CHECK(count("SELECT count(DISTINCT run_id) FROM run_topologies") == 3);
  sqlite3_close(db);

  // Another cluster gets its own topology; the first stays cached beside it.
  runner::Plan bigger = *plan;
  bigger.cluster.racks = 2;
  auto two = runner::ValidatePlan(bigger, {7, "", &cache});
  REQUIRE(two.ok());
  CHECK(two->topology->racks().size() == 2);
  CHECK(&*two->topology != &*shared[0].topology);
  auto again = runner::ValidatePlan(*plan, {9, "", &cache});
  REQUIRE(again.ok());
  CHECK(&*again->topology == &*shared[0].topology);
  fs::remove_all(dir);
}

TEST_CASE("a stop request ends the run as interrupted with every fault reverted") {
  fs::path dir = TempDir();
  // 2h50m: the valve fault (2h40m, for 45m) is applied and the link fault was reverted on time.
  auto out = RunQuickstart((dir / "s.db").string(), 1, Duration::Minutes(170));
  CHECK(out.code == rackchaos::ExitCode::kInterrupted);
  auto store = reports::ReportStore::OpenReadOnly((dir / "s.db").string());
  REQUIRE(store.ok());
  auto run = store->ReadRun(out.run_id);
  REQUIRE(run.ok());
  CHECK(run->status == "interrupted");
  CHECK(run->exit_code == 4);
  auto events = store->ReadEvents(out.run_id);
  REQUIRE(events.ok());
  int injected = 0, reverted = 0;
  bool interrupted_revert = false;
  for (const auto& e : *events) {
    injected += e.type == "fault_injected";
    reverted += e.type == "fault_reverted";
    interrupted_revert = interrupted_revert || (e.type == "fault_reverted" && e.detail.find("interrupted") != std::string::npos);
    CHECK(e.at <= Duration::Minutes(170));
  }
  CHECK(injected == 3);
  CHECK(reverted == 3);
  CHECK(interrupted_revert);
  fs::remove_all(dir);
}
