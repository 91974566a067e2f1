// Many writers opening one report at once (issue 26): creating the schema, migrating and switching the
// file to WAL wait for one another instead of failing with "database is locked". Threads here, each with
// its own connection as a sweep's workers have; tests/cli/concurrent_runs.sh does the same with processes.
#include <doctest/doctest.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "reports/store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

// One whole run, as `rackchaos run` stores it; the first failure's message, or "".
std::string StoreOneRun(const std::string& path, uint64_t seed) {
  auto store = ReportStore::Open(path);
  if (!store.ok()) return store.status().ToString();
  RunInfo info = t::SampleRunInfo();
  info.seed = seed;
  auto run = store->BeginRun(info);
  if (!run.ok()) return run.status().ToString();
  for (Status s : {store->AddComponents(*run, t::SampleComponents()), store->AddJobs(*run, t::SampleJobs()),
                   store->AppendEvents(*run, t::SampleEvents()), store->AddMetrics(*run, t::SampleMetrics()),
                   store->FinishRun(*run, "passed", 0, "", "")}) {
    if (!s.ok()) return s.ToString();
  }
  return "";
}

}  // namespace

TEST_CASE("reports.concurrent: eight writers opening one new file at once all store their run") {
  constexpr int kWriters = 8;
  TempDir dir;
  // Several new files: the race is between the first opener's schema and WAL switch and the others'.
  for (int round = 0; round < 5; ++round) {
    const std::string path = dir.File("new" + std::to_string(round) + ".db");
    std::vector<std::string> errors(kWriters);
    std::latch start(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        start.arrive_and_wait();
        errors[w] = StoreOneRun(path, static_cast<uint64_t>(w + 1));
      });
    }
    for (std::thread& th : writers) th.join();
    for (int w = 0; w < kWriters; ++w) {
      CHECK_MESSAGE(errors[w].empty(), "round " << round << " writer " << w << ": " << errors[w]);
    }
    CHECK(t::IntOf(t::OpenExisting(path), "SELECT count(*) FROM runs WHERE status = 'passed'") == kWriters);
    CHECK(t::IntOf(t::OpenExisting(path),
                   "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'") == 0);
    // The file ends in WAL mode, whoever switched it.
    Db db = t::OpenExisting(path);
    auto mode = db.Prepare("PRAGMA journal_mode", "mode");
    REQUIRE(mode.ok());
    REQUIRE(*mode->Step("mode"));
    CHECK(mode->Text(0) == "wal");
  }
}
