#include "runner/cli/report_cmd.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "reports/compare.h"
#include "reports/escape.h"
#include "reports/history.h"
#include "reports/merge.h"
#include "reports/render.h"
#include "reports/store.h"
#include "core/exit_code.h"
#include "runner/cli/cli_exit.h"

namespace rackchaos::runner {
namespace {

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

// Why a run's rows cannot be read as a result ("" when it finished): a 'running' row is a run in progress
// or one whose process died, an 'error' row a run that stopped on an error part way. Their gates and
// metrics cover only what happened before that, so a gate line that says "pass" is no pass.
std::string Unfinished(const reports::RunRow& run) {
  const std::string id = "run " + std::to_string(run.id);
  if (run.status == "running") return id + " has no verdict: it is still running, or its process died";
  if (run.status != "error") return "";
  return id + " ended in error" + (run.failed_reason.empty() ? "" : " (" + reports::TerminalText(run.failed_reason) + ")") +
         ": its metrics cover only the part before the error";
}

// The run's verdict as the run itself exited with it (core/exit_code.h), from its stored status.
ExitCode VerdictOf(const reports::RunRow& run) {
  if (run.status == "passed") return ExitCode::kPass;
  if (run.status == "failed" || run.status == "aborted") return ExitCode::kExpectationFailed;
  if (run.status == "interrupted") return ExitCode::kInterrupted;
  if (std::string why = Unfinished(run); !why.empty()) std::fprintf(stderr, "rackchaos: %s\n", why.c_str());
  return ExitCode::kRuntimeError;
}

// Text, Markdown and HTML open with the warning, so a reader of the file (not only of stderr) sees it
// before any gate line; JSON, JUnit and Prometheus carry the status itself.
void FlagUnfinished(const reports::RunRow& run, reports::Format format, std::string& text) {
  const std::string why = Unfinished(run);
  if (why.empty()) return;
  const std::string rest = "; the gates below are not a result.";
  if (format == reports::Format::kText) text = "NO VERDICT: " + why + rest + "\n\n" + text;
  if (format == reports::Format::kMarkdown) text = "> **No verdict:** " + why + rest + "\n\n" + text;
  const size_t body = text.find("<body>\n");
  if (format == reports::Format::kHtml && body != std::string::npos)
    text.insert(body + 7, "<p><strong>No verdict:</strong> " + reports::XmlEscape(why + rest) + "</p>\n");
}

// compare reads final metrics: a run without them would make a regression or an improvement up.
Status RequireFinished(const reports::RunRow& run) {
  const std::string why = Unfinished(run);
  if (why.empty()) return Status::Ok();
  return Status::Invalid(why + "; compare needs two finished runs");
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
  FlagUnfinished(*row, *format, *text);
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
  for (const reports::RunRow* row : {&*row_a, &*row_b})
    if (Status finished = RequireFinished(*row); !finished.ok()) return FailWith(finished);
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
    if (counts->runs_running > 0)
      std::fprintf(stderr, "rackchaos: %s: %d run(s) still 'running' (in progress, or their process died) left out\n",
                   input.c_str(), counts->runs_running);
  }
  return ToInt(ExitCode::kPass);
}

}  // namespace rackchaos::runner
