// Renderers of one stored run. Each reads only the store (through LoadRunReport and the typed
// readers) and returns the whole document as a string; the CLI decides where it goes.
//
// Determinism: the same database gives the same bytes. The only wall-clock values shown are those
// stored in the run (started_wall, ended_wall); nothing reads a clock while rendering.
// Errors: the store's Status (kNotFound for an unknown run), never an exception.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reports/run_report.h"
#include "reports/store.h"

namespace rackchaos::reports {

enum class Format { kText, kJson, kMarkdown, kJunit, kPrometheus, kHtml };

// "text", "json", "markdown" (or "md"), "junit", "prometheus" (or "prom"), "html";
// kInvalidArgument listing the names otherwise.
Result<Format> ParseFormat(std::string_view name);
const char* FormatName(Format format);

// Renders run `run` of `store` in `format` (text is RenderSummary plus the expectations).
Result<std::string> Render(const ReportStore& store, int64_t run, Format format);

// JSON object, keys in a fixed order: schema, run, events, faults (with metrics and job impacts),
// jobs, healer, spare_rack_moves (only when the scheduler moved a job to a spare rack: t_s, detail),
// expectations, verdict. Times are seconds (numbers); absent ones are null. Events
// themselves are not included, only their count (query the database for them).
std::string RenderJson(const RunReport& report);
// GitHub-flavoured Markdown: a run table, then faults, jobs, healer and expectations tables; past 40
// faults or 30 jobs cut as the text summary is (reports/summary.h), with the faults by kind and by rack.
std::string RenderMarkdown(const RunReport& report);
// Prometheus text exposition format 0.0.4: every family a gauge with # HELP and # TYPE, samples
// labelled run="ID" (and fault, kind, target / job / expectation), no timestamps. Absent times
// (a fault never detected or recovered) have no sample; rackchaos_fault_recovered says 0.
std::string RenderPrometheus(const RunReport& report);
// JUnit XML (the Jenkins junit-10 shape): <testsuites> with one <testsuite> for the run, a
// <testcase> per expectation and per fault's recovery; a run that ended in error or was
// interrupted adds an errored "run completed" case.
std::string RenderJunit(const RunReport& report);
// A self-contained HTML page (inline CSS and SVG, no scripts or external resources) of one run, the
// whole document as a string (`rackchaos report -f html` writes it to a file; a web UI can serve it as
// a page): header, timeline per component, job throughput against the 1.0 line with fault windows
// shaded, time to recover, the faults with detect / isolate / recover and blast radius, the jobs with
// ETTR, the healer (precision, recall, false isolations, missed faults), spare-rack moves (only when
// there were any), expectations; hover titles carry the times on the run's clock. Of bounded size for
// any run (reports/html_page.h): past 100 faults the worst are listed and every fault is counted by kind
// and by rack, charts merge or aggregate, and each section says what it left out. Needs the typed
// event rows too, hence the store.
Result<std::string> RenderHtml(const ReportStore& store, int64_t run);

}  // namespace rackchaos::reports
