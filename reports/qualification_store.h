// The rack qualification records of a report database (schema version 5): one row per `rackchaos
// qualify` of a rack in `qualifications`, and every plan of its suite with its stage, run and verdict in
// `qualification_plans`. What a qualification is and how its verdict is reached: runner/campaign/qualify.h.
//
// Not per-run tables: `rackchaos report merge` leaves them out (their run ids belong to the file they
// were written in). Errors, threading and ownership as ReportStore's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

// One plan of a qualification and how it came out.
struct QualificationPlanRow {
  std::string stage;  // the stage directory's name, "1-tray"
  std::string plan_path;
  std::optional<int64_t> run_id;  // absent when skipped or refused
  std::string verdict;            // passed | failed | aborted | error | interrupted | skipped
  std::string reason;
  int64_t seq = 0;  // its place in the suite (as read back; Finish numbers plans in the order given)
};

struct QualificationRow {
  int64_t id = 0;
  std::string rack;
  std::string suite;
  std::string started_wall;
  std::string ended_wall;        // "" while running
  std::string verdict;           // running | passed | failed | error | interrupted
  std::optional<int> exit_code;  // absent while running
  std::string reason;
  std::string command_line;
  std::vector<QualificationPlanRow> plans;  // in suite order; empty while running
};

class QualificationStore {
 public:
  // Opens or creates the report database at `path` for writing (ReportStore::Open).
  static Result<QualificationStore> Open(const std::string& path, const OpenOptions& options = {});
  // Opens it for reading only (ReportStore::OpenForReading); the writers then fail with kIoError.
  static Result<QualificationStore> OpenForReading(const std::string& path, const OpenOptions& options = {});

  QualificationStore(QualificationStore&&) noexcept = default;
  QualificationStore& operator=(QualificationStore&&) noexcept = default;

  const std::string& path() const { return runs_.path(); }

  // Records a qualification of `rack` as 'running' and returns its id (ids increase within a file).
  Result<int64_t> Begin(const std::string& rack, const std::string& suite, const std::string& started_wall,
                        const std::string& command_line);
  // Stores every plan's outcome and the verdict, in one transaction. `verdict` is passed | failed |
  // error | interrupted (kInvalidArgument otherwise); kNotFound when `id` is not a qualification here.
  Status Finish(int64_t id, const std::vector<QualificationPlanRow>& plans, const std::string& verdict, int exit_code,
                const std::string& ended_wall, const std::string& reason);

  // One qualification with its plans (kNotFound when absent).
  Result<QualificationRow> Read(int64_t id);
  // Every qualification of `rack` (of every rack when empty), oldest first, without their plans.
  Result<std::vector<QualificationRow>> List(const std::string& rack = "");

 private:
  explicit QualificationStore(ReportStore runs) : runs_(std::move(runs)) {}
  ReportStore runs_;
};

// The newest `limit` qualifications of `rack` (of every rack when empty), newest first, each with its
// plans, read in one snapshot through an open store (serve's read-only stores use it).
Result<std::vector<QualificationRow>> ReadRecentQualifications(const ReportStore& store, const std::string& rack,
                                                               int limit = 200);

}  // namespace rackchaos::reports
