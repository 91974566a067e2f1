// The qualification records (reports/qualification_store.h): begun as running, finished with every
// plan's verdict in one transaction, read back whole and listed by rack.
#include "reports/qualification_store.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;

TEST_CASE("reports.qualification_store: a qualification is running until finished, then holds its plans") {
  TempDir dir;
  const std::string path = dir.File("q.db");
  auto store = QualificationStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  auto first = store->Begin("RACK-1", "strict", "2025-01-02T03:04:05Z", "rackchaos qualify strict --rack RACK-1");
  auto second = store->Begin("RACK-2", "strict", "2025-01-02T04:00:00Z", "rackchaos qualify strict --rack RACK-2");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*second > *first);

  auto running = store->Read(*first);
  REQUIRE(running.ok());
  CHECK(running->verdict == "running");
  CHECK_FALSE(running->exit_code.has_value());
  CHECK(running->ended_wall.empty());
  CHECK(running->plans.empty());

  const std::vector<QualificationPlanRow> plans = {
      {"1-tray", "s/1-tray/a.yaml", 1, "passed", ""},
      {"2-rack", "s/2-rack/b.yaml", 2, "failed", "ttd.max < 1s: 3s"},
      {"3-multi", "s/3-multi/c.yaml", std::nullopt, "skipped", "an earlier stage did not pass"}};
  CHECK(store->Finish(*first, plans, "running", 1, "", "").code() == StatusCode::kInvalidArgument);
  CHECK(store->Finish(99, plans, "failed", 1, "", "").code() == StatusCode::kNotFound);
  REQUIRE(store->Finish(*first, plans, "failed", 1, "2025-01-02T03:30:00Z", "b.yaml failed").ok());

  auto done = store->Read(*first);
  REQUIRE(done.ok());
  CHECK(done->rack == "RACK-1");
  CHECK(done->suite == "strict");
  CHECK(done->verdict == "failed");
  CHECK(done->exit_code == 1);
  CHECK(done->ended_wall == "2025-01-02T03:30:00Z");
  CHECK(done->reason == "b.yaml failed");
  REQUIRE(done->plans.size() == 3);
  CHECK(done->plans[1].stage == "2-rack");
  CHECK(done->plans[1].run_id == 2);
  CHECK(done->plans[1].reason == "ttd.max < 1s: 3s");
  CHECK_FALSE(done->plans[2].run_id.has_value());
  CHECK(done->plans[2].verdict == "skipped");

  CHECK(store->List()->size() == 2);
  auto rack2 = store->List("RACK-2");
  REQUIRE(rack2->size() == 1);
  CHECK(rack2->at(0).verdict == "running");
  CHECK(store->Read(42).status().code() == StatusCode::kNotFound);

  auto reading = QualificationStore::OpenForReading(path);
  REQUIRE(reading.ok());
  CHECK(reading->Read(*first)->plans.size() == 3);
  CHECK(reading->Begin("RACK-3", "s", "", "").status().code() == StatusCode::kIoError);
}
