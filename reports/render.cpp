#include "reports/render.h"

#include "reports/escape.h"
#include "reports/summary.h"

namespace rackchaos::reports {
namespace {

struct NamedFormat {
  const char* name;
  Format format;
};
constexpr NamedFormat kFormats[] = {
    {"text", Format::kText},   {"json", Format::kJson},       {"markdown", Format::kMarkdown},
    {"md", Format::kMarkdown}, {"junit", Format::kJunit},     {"prometheus", Format::kPrometheus},
    {"prom", Format::kPrometheus}, {"html", Format::kHtml},
};

// The terminal summary followed by the stored expectations, as `rackchaos run` prints them.
Result<std::string> RenderText(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(std::string text, RenderSummary(store, run));
  RC_ASSIGN_OR_RETURN(std::vector<GateRow> gates, store.ReadGates(run));
  if (gates.empty()) return text;
  text += "\nExpectations\n";
  for (const GateRow& g : gates) text += std::string("  ") + (g.passed ? "pass  " : "FAIL  ") + TerminalText(g.message) + "\n";
  return text;
}

}  // namespace

Result<Format> ParseFormat(std::string_view name) {
  for (const NamedFormat& f : kFormats) {
    if (name == f.name) return f.format;
  }
  return Status::Invalid("unknown report format '" + std::string(name) +
                         "'; known formats: text, json, markdown, junit, prometheus, html");
}

const char* FormatName(Format format) {
  for (const NamedFormat& f : kFormats) {
    if (f.format == format) return f.name;
  }
  return "?";
}

Result<std::string> Render(const ReportStore& store, int64_t run, Format format) {
  if (format == Format::kText) return RenderText(store, run);
  if (format == Format::kHtml) return RenderHtml(store, run);
  RC_ASSIGN_OR_RETURN(RunReport report, LoadRunReport(store, run));
  switch (format) {
    case Format::kJson: return RenderJson(report);
    case Format::kMarkdown: return RenderMarkdown(report);
    case Format::kJunit: return RenderJunit(report);
    case Format::kPrometheus: return RenderPrometheus(report);
    default: return Status::Internal("unhandled report format");
  }
}

}  // namespace rackchaos::reports
