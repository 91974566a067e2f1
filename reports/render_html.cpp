// RenderHtml: one self-contained page (inline CSS and SVG, no script, no external resource) that a
// burn-in engineer opens offline the morning after a run. It holds what the text summary holds (per
// fault detect / isolate / recover, the jobs with ETTR, the healer's precision, recall and misses) and
// stays of bounded size for any run: past kHtmlLimits the tables list the worst and count the rest by
// kind and by rack, the charts merge or aggregate (reports/html_page.h), and every cut is said.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/strings.h"
#include "reports/escape.h"
#include "reports/html_page.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace html {

constexpr size_t kIsolatedNames = 20;
constexpr size_t kSpareRackMoves = 50;

constexpr const char* kCss = R"css(
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px;font-size:14px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.pass{color:#186a1b}.fail{color:#b00020;font-weight:bold}
svg{display:block;margin:8px 0 4px;background:#fcfcfc;border:1px solid #ddd}
.tl-fault{fill:#e57373}.tl-recovered{fill:#81c784}.tl-detected{fill:#1565c0}.tl-isolated{fill:#6a1b9a}
.fault-window{fill:#e57373;opacity:.18}.ttr-bar{fill:#42a5f5}.ttr-never{fill:#e57373}.axis{stroke:#999}.lbl{font-size:11px}
.nominal{stroke:#2e7d32;stroke-width:1;stroke-dasharray:5 3}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 14px;vertical-align:middle}
p.more{color:#555;font-style:italic;margin:2px 0 20px}p.cut{background:#fff8e1;border:1px solid #ffe082;padding:6px 10px}
td[title]{text-decoration:underline dotted #999}
)css";

std::string Page::NameOf(ComponentId id) const {
  auto it = names.find(id);
  return it != names.end() ? it->second : "#" + std::to_string(id);
}

double X(const Page& p, double t_s) { return kLabel + (kWidth - kLabel - 10) * std::clamp(t_s / p.end_s, 0.0, 1.0); }

std::string Rect(double x, double y, double w, double h, const std::string& cls, const std::string& title) {
  return "<rect class=\"" + cls + "\" x=\"" + Fixed(x, 1) + "\" y=\"" + Fixed(y, 1) + "\" width=\"" +
         Fixed(std::max(w, 2.0), 1) + "\" height=\"" + Fixed(h, 1) + "\"><title>" + XmlEscape(title) +
         "</title></rect>";
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor) {
  return "<text class=\"lbl\" x=\"" + Fixed(x, 1) + "\" y=\"" + Fixed(y, 1) + "\" text-anchor=\"" + anchor +
         "\">" + XmlEscape(text) + "</text>";
}

std::string Svg(double height, const std::string& body, const std::string& cls) {
  return "<svg class=\"" + cls + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fixed(kWidth, 0) +
         "\" height=\"" + Fixed(height, 0) + "\" viewBox=\"0 0 " + Fixed(kWidth, 0) + " " + Fixed(height, 0) +
         "\">" + body + "</svg>\n";
}

std::string More(const std::string& text) { return text.empty() ? "" : "<p class=\"more\">" + XmlEscape(text) + "</p>\n"; }

std::string At(Time t) { return FormatDuration(t); }

namespace {

std::string Cell(const std::string& v, bool num = false, const std::string& title = "") {
  std::string open = num ? "<td class=\"num\"" : "<td";
  if (!title.empty()) open += " title=\"" + XmlEscape(title) + "\"";
  return open + ">" + XmlEscape(v) + "</td>";
}

std::string Head(const std::vector<const char*>& names, const std::string& cls) {
  std::string out = "<table class=\"" + cls + "\"><tr>";
  for (const char* n : names) out += std::string("<th>") + n + "</th>";
  return out + "</tr>\n";
}

// A cell with a time since injection, its hover title the time on the run's clock.
std::string TimeCell(const std::optional<Duration>& d, Time injected, const std::string& what, const std::string& never) {
  return Cell(ShortOrDash(d), true, d ? what + " at " + At(injected + *d) + " (" + FormatDuration(*d) + " after injection)" : never);
}

std::string FaultTable(const Page& p) {
  const FaultDigest& d = p.digest;
  std::string out = "<h2>Faults: detect, isolate, recover and blast radius</h2>\n";
  if (d.total == 0) return out + "<p>No fault was injected.</p>\n";
  if (d.cut())
    out += More(Thousands(d.total) + " faults: " + CutFaultsSentence(d) + " below. Every fault: rackchaos report " + std::to_string(p.report.run.id) +
                " --format json, or the fault_summary view of the database.");
  out += Head({"#", "kind", "target", "injected", "detect", "isolate", "recover", "GPUs (direct+collateral)",
               "jobs (interrupted)", "GPU-h lost", "rework", "isolated"},
              "faults");
  for (const FaultMetrics* f : d.listed) {
    out += "<tr>" + Cell(std::to_string(f->fault), true) + Cell(f->kind) + Cell(f->target) +
           Cell(FormatDurationShort(f->injected), true, "injected at " + At(f->injected) +
                                                           (f->reverted ? ", reverted at " + At(*f->reverted) : "")) +
           TimeCell(f->time_to_detect, f->injected, "detected", "never detected") +
           TimeCell(f->time_to_isolate, f->injected, "isolated", "never isolated") +
           TimeCell(f->time_to_recover, f->injected, "back to full speed", "never recovered before the run ended") +
           Cell(std::to_string(f->gpus_direct) + "+" + std::to_string(f->gpus_collateral), true) +
           Cell(std::to_string(f->jobs_touched) + " (" + std::to_string(f->jobs_interrupted) + ")", true) +
           Cell(Fixed(f->gpu_hours_lost, 2), true) + Cell(FormatDurationShort(f->rework), true) +
           Cell(JoinCut(f->isolated, kIsolatedNames, "nothing")) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string NeverOr(const std::optional<Duration>& d) { return d ? FormatDurationShort(*d) : "never"; }

std::string GroupTable(const std::string& first, const std::vector<FaultGroup>& groups, const std::string& cls) {
  std::string out = Head({first.c_str(), "faults", "detected", "isolated", "recovered", "TTD p50", "TTR p50", "TTR p95",
                          "TTR max", "GPUs", "GPU-h lost"},
                         cls);
  for (const FaultGroup& g : groups)
    out += "<tr>" + Cell(g.name) + Cell(std::to_string(g.faults), true) + Cell(std::to_string(g.detected), true) +
           Cell(std::to_string(g.isolated), true) + Cell(std::to_string(g.recovered), true) + Cell(NeverOr(g.ttd_p50), true) +
           Cell(NeverOr(g.ttr_p50), true) + Cell(NeverOr(g.ttr_p95), true) + Cell(NeverOr(g.ttr_max), true) +
           Cell(std::to_string(g.gpus), true) + Cell(Fixed(g.gpu_hours_lost, 2), true) + "</tr>\n";
  return out + "</table>\n";
}

// Only when the fault table is cut: then these are the only place every fault is counted.
std::string GroupTables(const Page& p) {
  const FaultDigest& d = p.digest;
  if (!d.cut()) return "";
  std::string out = "<h2>Faults by kind</h2>\n" + GroupTable("kind", d.by_kind, "by-kind");
  out += "<h2>Faults by rack</h2>\n" + GroupTable("rack", d.by_rack, "by-rack");
  if (d.by_rack.size() < d.racks)
    out += More(Thousands(d.racks - d.by_rack.size()) + " more racks with " + Thousands(d.faults_in_other_racks) +
                " faults are not listed (the " + std::to_string(d.by_rack.size()) + " with the most faults are).");
  return out;
}

std::string JobTable(const RunReport& r) {
  const RunMetrics& m = r.metrics;
  std::string out = "<h2>Jobs</h2>\n";
  if (m.jobs.empty()) return out + "<p>No job.</p>\n";
  const std::vector<const JobMetrics*> listed = ListedJobs(m, kHtmlLimits);
  if (listed.size() < m.jobs.size())
    out += More(Thousands(m.jobs.size()) + " jobs: the " + std::to_string(listed.size()) + " with the lowest ETTR are listed.");
  out += Head({"job", "GPUs", "ETTR", "goodput", "interruptions", "kept steps"}, "jobs");
  for (const JobMetrics* j : listed)
    out += "<tr>" + Cell(j->name) + Cell(std::to_string(j->gpus), true) +
           Cell(Percent(j->ettr), true, "productive " + FormatDuration(j->productive) + " of " + FormatDuration(j->wall)) +
           Cell(Percent(j->goodput), true) + Cell(std::to_string(j->interruptions), true) + Cell(Fixed(j->steps, 0), true) +
           "</tr>\n";
  return out + "</table>\n";
}

std::string HealerTable(const RunMetrics& m) {
  const size_t names = kHtmlLimits.names;
  std::string out = "<h2>Healer</h2>\n<table class=\"healer\">";
  out += "<tr><th>isolations</th>" + Cell(std::to_string(m.isolations) + " (" + std::to_string(m.correct_isolations) + " correct)") + "</tr>";
  out += "<tr><th>precision</th>" + Cell(Percent(m.precision), false, "isolations that hit a faulty component") + "</tr>";
  out += "<tr><th>recall</th>" + Cell(Percent(m.recall), false, "faults that needed isolating and were") + "</tr>";
  out += "<tr><th>false isolations</th>" + Cell(JoinCut(m.false_isolations, names, "none")) + "</tr>";
  out += "<tr><th>missed faults</th>" + Cell(JoinCut(m.missed_faults, names, "none")) + "</tr>";
  out += "<tr><th>GPUs drained</th>" + Cell(std::to_string(m.gpus_drained) + " (" + Fixed(m.drained_gpu_hours, 2) + " GPU-h)") + "</tr>";
  return out + "</table>\n";
}

std::string SpareRacks(const RunReport& r) {
  if (r.spare_rack_moves.empty()) return "";  // only when the scheduler moved a job to a spare rack
  std::string out = "<h2>Spare racks</h2>\n<table class=\"spare-racks\"><tr><th>at</th><th>move</th></tr>\n";
  for (size_t i = 0; i < r.spare_rack_moves.size() && i < kSpareRackMoves; ++i)
    out += "<tr>" + Cell(FormatDurationShort(r.spare_rack_moves[i].at)) + Cell(r.spare_rack_moves[i].detail) + "</tr>\n";
  out += "</table>\n";
  if (r.spare_rack_moves.size() > kSpareRackMoves)
    out += More(Thousands(r.spare_rack_moves.size() - kSpareRackMoves) + " more moves are not listed.");
  return out;
}

std::string Gates(const RunReport& r) {
  std::string out = "<h2>Expectations</h2>\n";
  if (r.gates.empty()) return out + "<p>None stored.</p>\n";
  out += "<table class=\"gates\"><tr><th>result</th><th>expectation</th><th>detail</th></tr>\n";
  for (const GateRow& g : r.gates) {
    out += std::string("<tr><td class=\"") + (g.passed ? "pass\">pass" : "fail\">FAIL") + "</td>" + Cell(g.text) + Cell(g.message) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string Header(const RunReport& r) {
  const RunRow& run = r.run;
  return "<h1>rackchaos run " + std::to_string(run.id) + ": " + XmlEscape(run.info.plan_name) + "</h1>\n<table class=\"run\">" +
         "<tr><th>status</th>" + Cell(run.status + (run.failed_reason.empty() ? "" : ": " + run.failed_reason)) + "</tr>" +
         "<tr><th>seed</th>" + Cell(std::to_string(run.info.seed)) + "</tr><tr><th>backend / version</th>" +
         Cell(run.info.backend + " / " + run.info.version) + "</tr><tr><th>started / ended</th>" +
         Cell(run.info.started_wall + " / " + run.ended_wall) + "</tr><tr><th>plan</th>" +
         Cell(run.info.plan_path + " (" + run.info.plan_hash + ")") + "</tr><tr><th>healer</th>" +
         Cell("precision " + Percent(r.metrics.precision) + ", recall " + Percent(r.metrics.recall)) + "</tr></table>\n";
}

// Said once at the top when anything below is cut, so nobody reads a digest as the whole run.
std::string CutNotice(const Page& p) {
  if (!p.digest.cut()) return "";
  std::unordered_set<std::string> targets;
  for (const FaultMetrics& f : p.report.metrics.faults) targets.insert(f.target);
  return "<p class=\"cut\">" + Thousands(p.digest.total) + " faults on " + Thousands(targets.size()) +
         " components: too many for a row each. The charts merge what would overlap and the tables list the worst, "
         "counting the rest by kind and by rack; each section says what it leaves out.</p>\n";
}

double EndOfRun(const Page& p) {
  double end = 1;
  for (const FaultRow& f : p.faults) end = std::max(end, f.reverted ? f.reverted->Seconds() : f.injected.Seconds());
  for (const FaultMetrics& m : p.report.metrics.faults) {
    if (m.time_to_recover) end = std::max(end, (m.injected + *m.time_to_recover).Seconds());
  }
  if (!p.job_events.empty()) end = std::max(end, p.job_events.back().at.Seconds());
  for (const JobMetrics& j : p.report.metrics.jobs) end = std::max(end, j.wall.Seconds());
  return end;
}

}  // namespace
}  // namespace html

Result<std::string> RenderHtml(const ReportStore& store, int64_t run) {
  html::Page p;
  RC_ASSIGN_OR_RETURN(p.report, LoadRunReport(store, run));
  RC_ASSIGN_OR_RETURN(p.faults, store.ReadFaults(run));
  RC_ASSIGN_OR_RETURN(p.detections, store.ReadDetections(run));
  RC_ASSIGN_OR_RETURN(p.isolations, store.ReadIsolations(run));
  RC_ASSIGN_OR_RETURN(p.job_events, store.ReadJobEvents(run));
  p.names.reserve(p.report.components.size());
  for (const ComponentRow& c : p.report.components) p.names[c.id] = c.name;
  p.digest = DigestFaults(p.report.metrics, kHtmlLimits);
  p.end_s = html::EndOfRun(p);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rackchaos run " + std::to_string(run) +
         "</title>\n<style>" + html::kCss + "</style></head><body>\n" + html::Header(p.report) + html::CutNotice(p) +
         html::TimelineChart(p) + html::ThroughputChart(p) + html::TtrChart(p) + html::FaultTable(p) +
         html::GroupTables(p) + html::JobTable(p.report) + html::HealerTable(p.report.metrics) + html::SpareRacks(p.report) +
         html::Gates(p.report) + "</body></html>\n";
}

}  // namespace rackchaos::reports
