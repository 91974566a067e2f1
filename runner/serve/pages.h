// serve's HTML pages, each a pure function of the data the reports/ queries return (reports/web_queries.h),
// so that tests can render them without a server. Links are rooted at /db/<db>/ of the database they show.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/compare.h"
#include "reports/web_queries.h"

namespace rackchaos::serve {

// One database on the index page: its overview, or why it cannot be read.
struct DbCard {
  int index = 0;
  std::string path;
  std::optional<reports::DbOverview> overview;
  std::string error;  // when no overview
};

// "/db/<db>": where the pages of database `db` start.
inline std::string DbBase(int db) { return "/db/" + std::to_string(db); }

std::string IndexPage(const std::vector<DbCard>& dbs);
std::string ErrorPage(int status, const std::string& title, const std::string& message, int db = -1);

// pages_runs.cpp
std::string RunsPage(int db, const std::string& path, const reports::RunFilter& filter,
                     const reports::RunListPage& page, const std::vector<std::string>& plans);
// The stored run's HTML report (reports::RenderHtml) with serve's navigation added at the top.
std::string RunReportPage(int db, int64_t run, const std::string& report_html);
// A running run: its events so far, and /static/live.js appending new ones as they are stored.
std::string LiveRunPage(int db, const reports::RunRow& run, const std::vector<reports::EventLogRow>& events);
// /static/live.js
const char* LiveScript();

// pages_rack.cpp
std::string RacksPage(int db, const std::vector<std::string>& serials);
std::string RackPage(int db, const reports::RackPage& page);
std::string QualificationsPage(int db, const std::vector<reports::QualificationDetail>& records);
std::string SweepsPage(int db, const std::vector<reports::SweepListRow>& sweeps);
std::string SweepPage(int db, const reports::SweepPage& page);
// `comparison` absent: the form only.
std::string ComparePage(int db, int db_b, const std::optional<reports::Comparison>& comparison,
                        const std::string& a_label, const std::string& b_label);

}  // namespace rackchaos::serve
