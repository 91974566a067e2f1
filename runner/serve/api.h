// serve's JSON API (/api/...): the same data as the pages, documented in docs/serve.md. Each function is
// pure and returns one JSON document (reports::JsonWriter: keys in a fixed order, '\n' at the end).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/compare.h"
#include "reports/web_queries.h"
#include "runner/serve/pages.h"

namespace rackchaos::serve {

std::string DbsJson(const std::vector<DbCard>& dbs);
std::string RunsJson(const reports::RunListPage& page);
std::string EventsJson(int64_t run, const std::string& status, int64_t after,
                       const std::vector<reports::EventLogRow>& events);
std::string RackJson(const reports::RackPage& page);
std::string RacksJson(const std::vector<std::string>& serials);
std::string SweepsJson(const std::vector<reports::SweepListRow>& sweeps);
std::string SweepJson(const reports::SweepPage& page);
std::string QualificationsJson(const std::vector<reports::QualificationDetail>& records);
std::string CompareJson(const reports::Comparison& comparison);
// {"error": {"status": 404, "message": "..."}}
std::string ErrorJson(int status, const std::string& message);

}  // namespace rackchaos::serve
