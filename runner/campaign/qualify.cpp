#include "runner/campaign/qualify.h"

#include <algorithm>
#include <filesystem>

#include "core/wall_time.h"
#include "reports/qualification_store.h"
#include "reports/store.h"

namespace rackchaos::runner {
namespace fs = std::filesystem;
namespace {

std::vector<fs::path> Sorted(const fs::path& dir, bool dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    // In a stage, every *.yaml is a plan: one that is a directory, FIFO, device or dangling link is refused
    // by LoadPlan (core/user_file.h), not skipped without a word.
    if (dirs ? e.is_directory(ec) : e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The verdict of one plan that ran: the run row's status, so 'aborted' and 'failed' stay apart.
QualifiedPlan PlanVerdict(const SuitePlan& sp, const RunOutcome& out, const std::string& db) {
  QualifiedPlan q{sp, std::nullopt, "error", ""};
  if (out.run_id) q.run_id = out.run_id;
  if (out.code == ExitCode::kRuntimeError) {
    q.reason = out.error;
    return q;
  }
  auto store = reports::ReportStore::OpenForReading(db);
  auto row = store.ok() ? store->ReadRun(out.run_id) : Result<reports::RunRow>(store.status());
  if (!row.ok()) {
    q.reason = row.status().ToString();
    return q;
  }
  q.verdict = row->status;
  q.reason = row->failed_reason;
  return q;
}

Status Finish(reports::QualificationStore& store, const Qualification& q, ExitCode code, const std::string& reason) {
  std::vector<reports::QualificationPlanRow> rows;
  for (const QualifiedPlan& p : q.plans) rows.push_back({p.plan.stage, p.plan.path, p.run_id, p.verdict, p.reason});
  return store.Finish(q.id, rows, q.verdict, ToInt(code), WallStampNow(), reason);
}

}  // namespace

Result<Suite> LoadSuite(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": no such suite directory");
  Suite suite;
  suite.name = fs::path(dir).lexically_normal().filename().string();
  if (suite.name.empty()) suite.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  for (const fs::path& stage : Sorted(dir, true)) {
    std::vector<fs::path> plans = Sorted(stage, false);
    if (plans.empty()) continue;
    suite.stages.push_back(stage.filename().string());
    for (const fs::path& p : plans) suite.plans.push_back({suite.stages.back(), p.string()});
  }
  if (suite.plans.empty())
    return Status::Invalid(dir + ": no stage with a plan; a suite is a directory of stage directories in run "
                                 "order (e.g. 1-tray/, 2-rack/, 3-multi-rack/), each holding plan files (*.yaml)");
  return suite;
}

Result<Qualification> Qualify(const Suite& suite, const QualifyRecord& record, const RunSuitePlan& run,
                              const std::function<void(const QualifiedPlan&)>& on_plan) {
  // The record first, then the stages in order; a stage that is not reached is recorded as skipped.
  RC_ASSIGN_OR_RETURN(reports::QualificationStore store, reports::QualificationStore::Open(record.db));
  RC_ASSIGN_OR_RETURN(int64_t id, store.Begin(record.rack, suite.name, WallStampNow(), record.command_line));
  Qualification q{id, record.rack, suite.name, "passed", {}, ExitCode::kPass, ""};
  std::string blocked;  // why later plans are skipped
  for (size_t i = 0; i < suite.plans.size(); ++i) {
    const SuitePlan& sp = suite.plans[i];
    const bool new_stage = i == 0 || suite.plans[i - 1].stage != sp.stage;
    if (new_stage && blocked.empty() && q.verdict != "passed") blocked = "an earlier stage did not pass";
    QualifiedPlan p = blocked.empty() ? PlanVerdict(sp, run(i), record.db) : QualifiedPlan{sp, std::nullopt, "skipped", blocked};
    if (p.verdict == "interrupted" || StopRequested()) blocked = "the qualification was interrupted";
    if (p.verdict == "error" && q.verdict != "interrupted") q.verdict = "error";
    else if (p.verdict == "interrupted") q.verdict = "interrupted";
    else if ((p.verdict == "failed" || p.verdict == "aborted") && q.verdict == "passed") q.verdict = "failed";
    if (on_plan) on_plan(p);
    q.plans.push_back(std::move(p));
  }
  // The verdict, with the first plan that did not pass, stored.
  q.code = q.verdict == "passed" ? ExitCode::kPass : q.verdict == "failed" ? ExitCode::kExpectationFailed
           : q.verdict == "interrupted" ? ExitCode::kInterrupted : ExitCode::kRuntimeError;
  for (const QualifiedPlan& p : q.plans)
    if (q.reason.empty() && p.verdict != "passed" && p.verdict != "skipped")
      q.reason = fs::path(p.plan.path).filename().string() + " " + p.verdict + (p.reason.empty() ? "" : ": " + p.reason);
  RC_RETURN_IF_ERROR(Finish(store, q, q.code, q.reason));
  return q;
}

}  // namespace rackchaos::runner
