// The healer through whole simulated runs: the circuit breaker under a correlated failure, and lemons
// (parts isolated as really faulty in several runs) across runs stored in one database.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "reports/history.h"
#include "reports/store.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

using runner::testing::TempDir;

runner::RunOutcome Run(const std::string& plan_file, const std::string& db, uint64_t seed,
                       const std::string& healer = "") {
  return runner::testing::RunPlanFile(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/" + plan_file, db, seed, healer);
}

int64_t Count(const std::string& db_path, const std::string& sql) {
  return static_cast<int64_t>(runner::testing::QueryNumber(db_path, sql));
}

}  // namespace

TEST_CASE("healer run: 16 trays down at once - the breaker alerts instead of draining the fleet") {
  TempDir dir("healer-run-test");
  for (uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    std::string db = (dir.path / ("c" + std::to_string(seed) + ".db")).string();
    auto out = Run("correlated_failure.yaml", db, seed);
    CHECK(out.code == rackchaos::ExitCode::kPass);
    auto store = reports::ReportStore::OpenReadOnly(db);
    REQUIRE(store.ok());
    auto m = store->ReadMetrics(out.run_id);
    REQUIRE(m.ok());
    CHECK(m->gpus_drained <= 57);  // 20% of 288 GPUs
    CHECK(m->false_isolations.empty());
    CHECK(Count(db, "SELECT count(*) FROM actions WHERE action = 'alert' AND detail LIKE 'circuit breaker open:%'") >= 1);
    // Trays pulled: 64 GPUs lost service; the ones the breaker kept the healer from isolating are missed.
    CHECK_FALSE(m->missed_faults.empty());
  }
}

// Issue 27: every part a plan breaks on purpose is isolated in every run of it; that makes no lemon
// (reports/lemons.h), and a simulated run makes none at all.
TEST_CASE("healer run: the parts two runs of the quickstart isolated for its injected faults are no lemons") {
  TempDir dir("healer-run-test");
  std::string db = (dir.path / "q.db").string();
  auto first = Run("quickstart.yaml", db, 42);
  REQUIRE(first.code == rackchaos::ExitCode::kPass);
  auto second = Run("quickstart.yaml", db, 42);
  REQUIRE(second.code == rackchaos::ExitCode::kPass);
  auto store = reports::ReportStore::OpenReadOnly(db);
  REQUIRE(store.ok());
  CHECK(store->ReadMetrics(second.run_id)->faulty_isolations.size() == 4);  // one part per fault, each explained
  CHECK(reports::ReadLemons(*store, 2)->empty());
  CHECK(reports::ReadLemons(*store, 1)->empty());
}

TEST_CASE("healer run: trays whose GPUs shut down while the CDU was off are rebooted after its repair and return") {
  TempDir dir("healer-run-test");
  for (uint64_t seed : {11, 12}) {
    CAPTURE(seed);
    std::string db = (dir.path / ("cdu" + std::to_string(seed) + ".db")).string();
    REQUIRE(Run("cdu_failure.yaml", db, seed).code == rackchaos::ExitCode::kPass);
    auto distinct = [&](const char* action) {
      return Count(db, std::string("SELECT count(DISTINCT component_id) FROM actions WHERE action = '") + action + "'");
    };
    REQUIRE(distinct("drain") == 18);
    CHECK(distinct("resume") == 18);  // every tray of the rack is back in service by the end
    // The CDU is repaired at 40m + 1h: each tray is rebooted once after that, with the coolant flowing...
    CHECK(Count(db, "SELECT count(*) FROM actions WHERE action = 'reboot' AND t_us >= 6000000000") == 18);
    CHECK(Count(db, "SELECT count(*) FROM actions WHERE action = 'reboot' AND t_us >= 6000000000 AND detail LIKE "
                    "'diagnostic failed (%not on the bus) with the coolant flowing; diagnostic in 10m'") == 18);
    // ...and never more than twice in all (the early reboot while the CDU was off, then that one).
    CHECK(Count(db, "SELECT max(n) FROM (SELECT count(*) AS n FROM actions WHERE action = 'reboot' "
                    "GROUP BY component_id)") <= 2);
    // The rack's switch trays shut down after most GPUs: a GPU already off reports no port going down.
    REQUIRE(Count(db, "SELECT count(*) FROM physics p JOIN components c ON c.run_id = p.run_id AND "
                      "c.id = p.component_id WHERE c.kind = 'switch_tray' AND p.what = 'thermal_shutdown'") > 0);
    CHECK(Count(db, "SELECT count(*) FROM detections d JOIN physics p ON p.run_id = d.run_id AND "
                    "p.component_id = d.component_id AND p.what = 'thermal_shutdown' AND p.t_us < d.t_us "
                    "WHERE d.detector = 'link_state'") == 0);
  }
}

TEST_CASE("healer run: a switch tray's valve at 20% is seen hot on that switch tray, before it shuts down") {
  TempDir dir("healer-run-test");
  for (const char* policy : {"", "aggressive"})
    for (uint64_t seed : {1, 2, 3}) {
      CAPTURE(policy);
      CAPTURE(seed);
      std::string db = (dir.path / ("sw" + std::string(policy) + std::to_string(seed) + ".db")).string();
      const auto run = Run("switch_tray_heat.yaml", db, seed, policy);
      if (!*policy) CHECK(run.code == rackchaos::ExitCode::kPass);  // the plan's gates hold for its default policy
      const std::string sw = "(SELECT id FROM components WHERE name = 'r01.switch3')";
      auto first = [&](const std::string& table, const std::string& where) {
        return Count(db, "SELECT min(t_us) FROM " + table + " WHERE component_id = " + sw + " AND " + where);
      };
      const int64_t injected = Count(db, "SELECT injected_us FROM fault_metrics");
      const int64_t detected = first("detections", "detector = 'thermal'");
      const int64_t shutdown = first("physics", "what = 'thermal_shutdown'");
      CHECK(detected > injected);
      CHECK(detected < shutdown);  // its own temperature, not its ports going down at the shutdown
      CHECK(Count(db, "SELECT count(*) FROM detections WHERE detector = 'link_state' AND t_us <= " +
                      std::to_string(detected)) == 0);
      CHECK(Count(db, "SELECT ttd_us FROM fault_metrics") == detected - injected);  // the report's time to detect
      // Taken out of the fabric one correlation window after; adaptive mode: no compute tray drained.
      const int64_t out = first("actions", "action = 'take_out'");
      CHECK(out == detected + (*policy ? 5 : 20) * int64_t{1000000});
      CHECK(Count(db, "SELECT count(*) FROM actions WHERE action = 'drain'") == 0);
      if (*policy) {
        CHECK(out < shutdown);  // the aggressive policy's 5 s window always makes it
        continue;
      }
      // From its slowdown until it was taken out the job ran throttled.
      const int64_t slowdown = first("physics", "what = 'thermal_slowdown'");
      CHECK(slowdown < out);
      CHECK(Count(db, "SELECT count(*) FROM job_events WHERE t_us = " + std::to_string(slowdown)) == 1);
    }
}

TEST_CASE("healer run: an elastic job shrinks when tray pulls outrun the spare and grows back - ETTR above waiting") {
  TempDir dir("healer-run-test");
  for (uint64_t seed : {1, 2}) {
    CAPTURE(seed);
    std::string shrink_db = (dir.path / ("s" + std::to_string(seed) + ".db")).string();
    std::string wait_db = (dir.path / ("w" + std::to_string(seed) + ".db")).string();
    auto shrink = Run("elastic_shrink.yaml", shrink_db, seed);  // its policy: policies/shrink.yaml
    auto wait = Run("elastic_shrink.yaml", wait_db, seed, "default");
    CHECK(shrink.code == rackchaos::ExitCode::kPass);
    auto ettr = [](const std::string& db, int64_t run) {
      auto store = reports::ReportStore::OpenReadOnly(db);
      REQUIRE(store.ok());
      auto m = store->ReadMetrics(run);
      REQUIRE(m.ok());
      REQUIRE(m->jobs.size() == 1);
      return m->jobs[0].ettr;
    };
    double with = ettr(shrink_db, shrink.run_id), without = ettr(wait_db, wait.run_id);
    CAPTURE(with);
    CAPTURE(without);
    CHECK(with > without + 0.1);  // the job ran shrunk for the ~2 h it would have waited queued
    CHECK(Count(shrink_db, "SELECT count(*) FROM actions WHERE action = 'shrink' AND detail LIKE "
                           "'shrunk to 60 of 64 GPUs, placed on 15 trays%'") == 1);
    CHECK(Count(shrink_db, "SELECT count(*) FROM actions WHERE action = 'grow' AND detail LIKE "
                           "'grown back to 64 GPUs on 16 trays (was 60)%'") == 1);
    CHECK(Count(wait_db, "SELECT count(*) FROM actions WHERE action IN ('shrink', 'grow')") == 0);
  }
}
