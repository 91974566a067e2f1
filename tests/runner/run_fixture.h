// Shared by the tests that run whole simulated plans through the runner (healer_run_test,
// attribution_run_test): a temporary directory, one validated run into a database, one number from it.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "runner/plan/plan_loader.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner::testing {

// A directory under the system temp dir named after the test and the process, removed on destruction.
struct TempDir {
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("rackchaos-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

// Loads, validates (with `seed` and the `healer` policy override, "" = the plan's) and runs the plan at
// `plan_path` into the database `db`. The test fails if the plan does not load or validate.
inline RunOutcome RunPlanFile(const std::string& plan_path, const std::string& db, uint64_t seed,
                              const std::string& healer = "") {
  auto plan = LoadPlan(plan_path);
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  auto spec = ValidatePlan(*plan, {seed, healer});
  REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());
  RunOptions opt;
  opt.db_path = db;
  return ExecuteRun(*plan, *spec, opt);
}

// The first column of the first row of `sql` on the database at `db_path`, as a number.
inline double QueryNumber(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sql);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const double v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

}  // namespace rackchaos::runner::testing
