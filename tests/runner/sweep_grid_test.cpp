// Sweep grids over plan keys and healer thresholds, and a sweep run twice into one database.
#include <doctest/doctest.h>
#include <unistd.h>

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "runner/plan/plan_loader.h"
#include "runner/campaign/sweep.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

const char* kTrayPull = R"(name: grid
duration: 2h
cluster: {model: gb200-nvl72, racks: 1, spare_trays: 2}
workload:
  jobs:
    - {name: j, gpus: 32, step_time: 5s}
faults:
  - {at: 10m, kind: tray_pull, target: r01.tray02, for: 30m}
)";

const runner::SweepStat& Stat(const runner::SweepResult& r, const std::string& point, const std::string& metric) {
  for (const auto& s : r.stats)
    if (s.point == point && s.metric == metric) return s;
  FAIL("no stat " << point << " " << metric);
  return r.stats.front();
}

}  // namespace

TEST_CASE("sweep grid: keys are checked by type and unknown keys name the known ones") {
  CHECK(runner::ParseGridAxis("spares=0,2")->values == std::vector<std::string>{"0", "2"});
  CHECK(runner::ParseGridAxis("healer.mad_threshold=4.5,6").ok());
  CHECK(runner::ParseGridAxis("checkpoint.interval=10m,1h").ok());
  CHECK_FALSE(runner::ParseGridAxis("spares=-1").ok());
  CHECK_FALSE(runner::ParseGridAxis("checkpoint.interval=0s").ok());
  CHECK_FALSE(runner::ParseGridAxis("healer.missed_beats=0").ok());
  CHECK_FALSE(runner::ParseGridAxis("healer.temperature_c=hot").ok());
  auto unknown = runner::ParseGridAxis("sparez=1");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find(runner::GridKeyList()) != std::string::npos);
  auto plan = runner::ParsePlan(kTrayPull, "grid.yaml");
  REQUIRE(plan.ok());
  REQUIRE(runner::ApplyGridToPlan(*plan, "spares", "4").ok());
  REQUIRE(runner::ApplyGridToPlan(*plan, "checkpoint.interval", "7m").ok());
  CHECK(plan->cluster.spare_trays == 4);
  CHECK(plan->jobs[0].checkpoint_interval == Duration::Minutes(7));
  CHECK_FALSE(runner::ApplyGridToPlan(*plan, "chaos.scale", "2").ok());  // no chaos: section
  healer::Policy policy;
  runner::ApplyGridToPolicy(policy, "healer.missed_beats", "7");
  runner::ApplyGridToPolicy(policy, "healer.recheck", "3m");
  runner::ApplyGridToPolicy(policy, "healer.burn_in", "2h");
  REQUIRE(runner::ParseGridAxis("healer.burn_in=0s,2h").ok());  // no burn-in is a value, not an error
  CHECK_FALSE(runner::ParseGridAxis("healer.recheck=0s").ok());
  CHECK(policy.heartbeat_missed_beats == 7);
  CHECK(policy.recheck == Duration::Minutes(3));
  CHECK(policy.burn_in == Duration::Hours(2));
}

TEST_CASE("sweep grid: values keep the bounds of the plan or policy key they set, and say the range (issue 26)") {
  const auto message = [](const std::string& text) {
    auto axis = runner::ParseGridAxis(text);
    return axis.ok() ? std::string("(accepted)") : axis.status().message();
  };
  CHECK(message("checkpoint.interval=10m,1ms") ==
        "--grid 'checkpoint.interval=10m,1ms': checkpoint.interval '1ms' is out of range; expected a duration from 1s "
        "to 365d with a unit (ms, s, m, h, d, w)");
  CHECK(message("spares=0,1001") ==
        "--grid 'spares=0,1001': spares '1001' is out of range; expected an integer from 0 to 1000");
  CHECK(message("healer.mad_threshold=6,1e9") ==
        "--grid 'healer.mad_threshold=6,1e9': healer.mad_threshold '1e9' is out of range; expected a number from 0.5 "
        "to 1000");
  CHECK(message("healer.temperature_c=85,200") ==
        "--grid 'healer.temperature_c=85,200': healer.temperature_c '200' is out of range; expected a number from 20 "
        "to 150");
  CHECK(message("healer.missed_beats=3,5000") ==
        "--grid 'healer.missed_beats=3,5000': healer.missed_beats '5000' is out of range; expected a whole number "
        "from 1 to 1000");
  CHECK(message("healer.recheck=10m,2d") ==
        "--grid 'healer.recheck=10m,2d': healer.recheck '2d' is out of range; expected a duration from 1s to 1d");
  CHECK(message("healer.burn_in=0s,31d").ends_with("expected a duration from 0s to 30d"));
  CHECK(message("healer.correlation_window=20s,2h").ends_with("expected a duration from 0s to 1h"));
  CHECK(message("healer.straggler_window=5m,2d").ends_with("expected a duration from 1s to 1d"));
  // The edges themselves are values.
  CHECK(message("healer.recheck=1s,1d") == "(accepted)");
  CHECK(message("checkpoint.interval=1s,365d") == "(accepted)");
}

TEST_CASE("sweep grid: a healer threshold and the checkpoint interval change the results they should") {
  fs::path dir = fs::temp_directory_path() / ("rackchaos-grid-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto plan = runner::ParsePlan(kTrayPull, "grid.yaml");
  REQUIRE(plan.ok());
  runner::SweepOptions opt;
  opt.seeds = 2;
  opt.db_path = (dir / "g.db").string();
  opt.grid = {*runner::ParseGridAxis("healer.correlation_window=5s,115s"), *runner::ParseGridAxis("checkpoint.interval=5m,1h")};
  auto r = runner::RunSweep(*plan, opt);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->runs == 8);
  CHECK(r->stored == 8);
  CHECK(r->threads == 1);
  // Each run's wall and CPU time, in milliseconds (a run of this plan takes a few ms; CPU is one thread's).
  {
    auto sweeps = reports::SweepStore::OpenForReading(opt.db_path);
    REQUIRE(sweeps.ok());
    int timed = 0;
    REQUIRE(sweeps->ForEachRun(r->sweep_id, [&](const reports::SweepRunRow& row) {
                     timed += row.tag.wall_ms.has_value() && row.tag.cpu_ms.has_value() && *row.tag.wall_ms >= 0 &&
                              *row.tag.cpu_ms >= 0 && *row.tag.cpu_ms <= *row.tag.wall_ms + 10;
                     return Status::Ok();
                   })
                .ok());
    CHECK(timed == 8);
  }
  // Points by their values, not as text (where 1h comes before 5m).
  CHECK(r->points == std::vector<std::string>{"healer.correlation_window=5s,checkpoint.interval=5m",
                                              "healer.correlation_window=5s,checkpoint.interval=1h",
                                              "healer.correlation_window=115s,checkpoint.interval=5m",
                                              "healer.correlation_window=115s,checkpoint.interval=1h"});
  CHECK(r->stats.size() == 4 * runner::DefaultSweepMetrics().size());
  CHECK(r->stats[runner::DefaultSweepMetrics().size()].point == r->points[1]);
  // A 115 s correlation window isolates the pulled tray (seen at once by its NIC links) 110 s later than 5 s.
  double fast = Stat(*r, "healer.correlation_window=5s,checkpoint.interval=5m", "ttr.p95").mean;
  double slow = Stat(*r, "healer.correlation_window=115s,checkpoint.interval=5m", "ttr.p95").mean;
  CHECK(slow - fast == doctest::Approx(110).epsilon(0.2));
  // Checkpointing every hour throws away more work than every 5 minutes.
  CHECK(Stat(*r, "healer.correlation_window=5s,checkpoint.interval=1h", "gpu_hours_lost.total").mean >
        Stat(*r, "healer.correlation_window=5s,checkpoint.interval=5m", "gpu_hours_lost.total").mean);

  // The same sweep again: nothing runs, nothing is tagged twice.
  auto again = runner::RunSweep(*plan, opt);
  REQUIRE(again.ok());
  CHECK(again->skipped == 8);
  CHECK(again->stored == 0);
  CHECK(again->runs == 8);
  fs::remove_all(dir);
}

// A sweep's workers and its tag connection wait for a write lock held longer than the store's default 5 s
// (another worker storing a large cluster's topology on a loaded machine; here another connection): the
// sweep finishes instead of failing with "database is locked".
TEST_CASE("sweep: its workers wait out a write lock longer than the store's default wait") {
  const fs::path dir = fs::temp_directory_path() / ("rackchaos-sweep-lock-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto plan = runner::ParsePlan(kTrayPull, "lock.yaml");
  REQUIRE(plan.ok());
  runner::SweepOptions opt;
  opt.seeds = 2;
  opt.threads = 2;
  opt.db_path = (dir / "l.db").string();
  auto first = runner::RunSweep(*plan, opt);  // the file exists, in WAL mode, with its schema
  REQUIRE_MESSAGE(first.ok(), first.status().message());
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(opt.db_path.c_str(), &h) == SQLITE_OK);
  REQUIRE(sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  std::thread holder([h] {
    std::this_thread::sleep_for(std::chrono::milliseconds(6500));
    sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr);
  });
  opt.seeds = 4;  // two new runs, stored while the lock is held
  const auto start = std::chrono::steady_clock::now();
  auto r = runner::RunSweep(*plan, opt);
  holder.join();
  sqlite3_close(h);
  CHECK_MESSAGE(r.ok(), r.status().message());
  if (r.ok()) CHECK(r->stored == 4);  // another sweep (other seeds): all four runs
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(6));  // it did wait for the lock
  fs::remove_all(dir);
}
