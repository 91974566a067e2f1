#include "runner/cli/report_cmd.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "reports/compare.h"
#include "reports/history.h"
#include "reports/merge.h"
#include "reports/render.h"
#include "reports/store.h"
#include "core/exit_code.h"

namespace rackchaos::runner {
namespace {

int Fail(ExitCode code, const std::string& message) {
  std::fprintf(stderr, "rackchaos: %s\n", message.c_str());
  return ToInt(code);
}

// Unknown runs and bad arguments are the user's input; everything else is infrastructure.
int FailWith(const Status& s) {
  bool input = s.code() == StatusCode::kNotFound || s.code() == StatusCode::kInvalidArgument;
  return Fail(input ? ExitCode::kBadInput : ExitCode::kRuntimeError, s.message());
}

Result<int64_t> PickRun(const reports::ReportStore& store, std::optional<int64_t> run) {
  if (run) return *run;
  return store.LatestRun();
}

// Writes `text` to `path` ("" or "-" for stdout). The file is written whole or reported as failed.
Status WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("writing the report to stdout failed");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Status::IoError("cannot write report file '" + path + "'");
  return Status::Ok();
}

// The run's verdict as the run itself exited with it (core/exit_code.h), from its stored status.
ExitCode VerdictOf(const reports::RunRow& run) {
  if (run.status == "passed") return ExitCode::kPass;
  if (run.status == "failed" || run.status == "aborted") return ExitCode::kExpectationFailed;
  if (run.status == "interrupted") return ExitCode::kInterrupted;
  if (run.status == "running")
    std::fprintf(stderr, "rackchaos: run %lld has no verdict: it is still running, or its process died\n",
                 static_cast<long long>(run.id));
  return ExitCode::kRuntimeError;
}

}  // namespace

const char* const kReportExitHelp =
    "Exit codes of report: the run's verdict, as the run exited: 0 passed, 1 failed (an expectation) or aborted,\n"
    "3 error, 4 interrupted; 3 also for a run with no verdict (still running, or its process died).\n"
    "2 for an unknown run or format, 3 when the database or the output file fails.\n";

int CmdReportRender(const ReportArgs& args) {
  auto format = reports::ParseFormat(args.format);
  if (!format.ok()) return FailWith(format.status());
  auto store = reports::ReportStore::OpenForReading(args.db);
  if (!store.ok()) return FailWith(store.status());
  auto run = PickRun(*store, args.run);
  if (!run.ok()) return FailWith(run.status());
  auto row = store->ReadRun(*run);
  if (!row.ok()) return FailWith(row.status());
  auto text = reports::Render(*store, *run, *format);
  if (!text.ok()) return FailWith(text.status());
  if (*format == reports::Format::kText) {  // parts of this run that keep failing across runs
    auto lemons = reports::ReadLemons(*store, args.lemon_runs, *run);
    if (!lemons.ok()) return FailWith(lemons.status());
    if (!lemons->empty()) *text += "\n" + reports::RenderLemons(*lemons, args.lemon_runs);
  }
  Status written = WriteOutput(args.output, *text);
  if (!written.ok()) return Fail(ExitCode::kRuntimeError, written.message());
  if (!args.quiet && !args.output.empty() && args.output != "-")
    std::printf("wrote %s (%s report of run %lld, %zu bytes)\n", args.output.c_str(), reports::FormatName(*format),
                static_cast<long long>(*run), text->size());
  return ToInt(VerdictOf(*row));
}

int CmdCompare(const CompareArgs& args) {
  auto thresholds = reports::ParseThresholds(args.fail_on);
  if (!thresholds.ok()) return FailWith(thresholds.status());
  auto store_a = reports::ReportStore::OpenForReading(args.db);
  if (!store_a.ok()) return FailWith(store_a.status());
  auto a = reports::RunMetricValues(*store_a, args.run_a);
  if (!a.ok()) return FailWith(a.status());
  auto store_b = reports::ReportStore::OpenForReading(args.db_b.empty() ? args.db : args.db_b);
  if (!store_b.ok()) return FailWith(store_b.status());
  auto b = reports::RunMetricValues(*store_b, args.run_b);
  if (!b.ok()) return FailWith(b.status());
  auto row_a = store_a->ReadRun(args.run_a);
  if (!row_a.ok()) return FailWith(row_a.status());
  auto row_b = store_b->ReadRun(args.run_b);
  if (!row_b.ok()) return FailWith(row_b.status());
  reports::Comparison c = reports::CompareMetrics(args.run_a, *a, args.run_b, *b, *thresholds);
  c.plan_warning = reports::PlanDifference(*row_a, *row_b);
  std::cout << reports::RenderComparison(c);
  return ToInt(c.regressions > 0 ? ExitCode::kExpectationFailed : ExitCode::kPass);
}

int CmdHistory(const std::string& db, const std::string& serial, int lemon_runs) {
  auto store = reports::ReportStore::OpenForReading(db);
  if (!store.ok()) return FailWith(store.status());
  auto history = reports::ReadRackHistory(*store, serial, lemon_runs);
  if (!history.ok()) return FailWith(history.status());
  std::cout << reports::RenderHistory(*history);
  return ToInt(ExitCode::kPass);
}

int CmdReportMerge(const std::vector<std::string>& inputs, const std::string& output) {
  if (output.empty()) return Fail(ExitCode::kBadInput, "report merge needs -o OUT.db");
  auto dest = reports::ReportStore::Open(output);
  if (!dest.ok()) return FailWith(dest.status());
  for (const std::string& input : inputs) {
    auto counts = reports::MergeInto(*dest, input);
    if (!counts.ok()) return FailWith(counts.status());
    std::cout << input << ": " << counts->runs_copied << " run(s) copied, " << counts->runs_skipped
              << " already in " << output << " skipped, " << counts->rows_copied << " rows\n";
  }
  return ToInt(ExitCode::kPass);
}

}  // namespace rackchaos::runner
