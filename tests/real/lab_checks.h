// What the real-mode tests on the loopback lab share: a started lab (the test stops when it cannot
// start), and the one run a test's report database holds.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>

#include "reports/store.h"
#include "tests/real/lab.h"

namespace rackchaos::runner::testing {

inline std::unique_ptr<Lab> StartLab() {
  auto lab = Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  return std::move(lab).value();
}

inline reports::RunRow OnlyRun(const std::string& db) {
  auto store = reports::ReportStore::Open(db);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  auto runs = store->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  return runs->back();
}

}  // namespace rackchaos::runner::testing
