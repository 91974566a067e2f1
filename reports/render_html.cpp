// RenderHtml: one self-contained page (inline CSS and SVG, no script, no external resource) that a
// burn-in engineer opens offline the morning after a run.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "reports/escape.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace {

constexpr double kWidth = 1000, kLabel = 220, kRow = 22;
constexpr size_t kMaxTimelineRows = 200;
constexpr size_t kMaxPointsPerJob = 2000;

struct Page {
  RunReport report;
  std::vector<FaultRow> faults;
  std::vector<DetectionRow> detections;
  std::vector<IsolationRow> isolations;
  std::vector<JobEventRow> job_events;
  std::map<ComponentId, std::string> names;
  double end_s = 1;  // the time axis: the last thing that happened
};

constexpr const char* kCss = R"css(
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.pass{color:#186a1b}.fail{color:#b00020;font-weight:bold}
svg{display:block;margin:8px 0 20px;background:#fcfcfc;border:1px solid #ddd}
.tl-fault{fill:#e57373}.tl-recovered{fill:#81c784}.tl-detected{fill:#1565c0}.tl-isolated{fill:#6a1b9a}
.fault-window{fill:#e57373;opacity:.18}.ttr-bar{fill:#42a5f5}.axis{stroke:#999}.lbl{font-size:11px}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 14px;vertical-align:middle}
)css";

double X(const Page& p, double t_s) { return kLabel + (kWidth - kLabel - 10) * std::clamp(t_s / p.end_s, 0.0, 1.0); }

std::string Rect(double x, double y, double w, double h, const std::string& cls, const std::string& title) {
  return "<rect class=\"" + cls + "\" x=\"" + Fixed(x, 1) + "\" y=\"" + Fixed(y, 1) + "\" width=\"" +
         Fixed(std::max(w, 2.0), 1) + "\" height=\"" + Fixed(h, 1) + "\"><title>" + XmlEscape(title) +
         "</title></rect>";
}

std::string Text(double x, double y, const std::string& text, const std::string& anchor = "start") {
  return "<text class=\"lbl\" x=\"" + Fixed(x, 1) + "\" y=\"" + Fixed(y, 1) + "\" text-anchor=\"" + anchor +
         "\">" + XmlEscape(text) + "</text>";
}

std::string Axis(const Page& p, double y) {
  std::string out = "<line class=\"axis\" x1=\"" + Fixed(kLabel, 1) + "\" y1=\"" + Fixed(y, 1) + "\" x2=\"" +
                    Fixed(kWidth - 10, 1) + "\" y2=\"" + Fixed(y, 1) + "\"/>";
  for (int i = 0; i <= 5; ++i) {
    double t = p.end_s * i / 5;
    out += Text(X(p, t), y + 14, FormatDurationShort(Duration::FromSecondsF(t)), i == 5 ? "end" : "middle");
  }
  return out;
}

std::string Svg(double height, const std::string& body, const std::string& cls) {
  return "<svg class=\"" + cls + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fixed(kWidth, 0) +
         "\" height=\"" + Fixed(height, 0) + "\" viewBox=\"0 0 " + Fixed(kWidth, 0) + " " + Fixed(height, 0) +
         "\">" + body + "</svg>\n";
}

// Components worth a row: fault targets first, then whatever was detected on or isolated.
std::vector<ComponentId> TimelineRows(const Page& p) {
  std::vector<ComponentId> rows;
  std::set<ComponentId> seen;
  auto add = [&](ComponentId id) {
    if (id != kNoComponent && rows.size() < kMaxTimelineRows && seen.insert(id).second) rows.push_back(id);
  };
  for (const FaultRow& f : p.faults) add(f.target);
  for (const IsolationRow& i : p.isolations) add(i.component);
  for (const DetectionRow& d : p.detections) add(d.component);
  return rows;
}

std::string Timeline(const Page& p) {
  std::vector<ComponentId> rows = TimelineRows(p);
  std::map<ComponentId, double> y;
  std::string body;
  for (size_t i = 0; i < rows.size(); ++i) {
    y[rows[i]] = 10 + kRow * static_cast<double>(i);
    body += Text(4, y[rows[i]] + 14, p.names.count(rows[i]) ? p.names.at(rows[i]) : "#" + std::to_string(rows[i]));
  }
  for (const FaultRow& f : p.faults) {
    if (!y.count(f.target)) continue;
    double end = f.reverted ? f.reverted->Seconds() : p.end_s;
    body += Rect(X(p, f.injected.Seconds()), y[f.target] + 2, X(p, end) - X(p, f.injected.Seconds()), 8,
                 "tl-bar tl-fault", "fault #" + std::to_string(f.fault) + " " + f.kind);
    for (const FaultMetrics& m : p.report.metrics.faults) {
      if (m.fault != f.fault || !m.time_to_recover) continue;
      double at = f.injected.Seconds(), rec = at + m.time_to_recover->Seconds();
      body += Rect(X(p, at), y[f.target] + 11, X(p, rec) - X(p, at), 6, "tl-bar tl-recovered",
                   "fault #" + std::to_string(f.fault) + " recovered after " + FormatDurationShort(*m.time_to_recover));
    }
  }
  for (const DetectionRow& d : p.detections) {
    if (y.count(d.component)) body += Rect(X(p, d.at.Seconds()), y[d.component], 3, 18, "tl-bar tl-detected", d.detector + ": " + d.symptom);
  }
  for (const IsolationRow& i : p.isolations) {
    if (y.count(i.component)) body += Rect(X(p, i.at.Seconds()), y[i.component], 5, 18, "tl-bar tl-isolated", "isolated " + i.domain + ": " + i.reason);
  }
  double height = 10 + kRow * static_cast<double>(rows.size()) + 24;
  body += Axis(p, height - 22);
  return "<h2>Timeline per component</h2>\n<p class=\"legend\"><span style=\"background:#e57373\"></span>fault"
         "<span style=\"background:#1565c0\"></span>detected<span style=\"background:#6a1b9a\"></span>isolated"
         "<span style=\"background:#81c784\"></span>recovered (injection to full speed)</p>\n" +
         Svg(height, body, "timeline");
}

// Speed over time per job, as a step line; long runs are bucketed (the slowest point per bucket is
// kept, so dips stay visible). Fault windows are shaded behind.
std::string Throughput(const Page& p) {
  constexpr double kTop = 10, kHeight = 160;
  std::string body;
  for (const FaultRow& f : p.faults) {
    double end = f.reverted ? f.reverted->Seconds() : p.end_s;
    body += Rect(X(p, f.injected.Seconds()), kTop, X(p, end) - X(p, f.injected.Seconds()), kHeight,
                 "fault-window", "fault #" + std::to_string(f.fault) + " " + f.kind);
  }
  std::map<JobId, std::vector<std::pair<double, double>>> buckets;  // bucket -> (t, min speed)
  for (const JobEventRow& e : p.job_events) {
    auto& pts = buckets[e.job];
    double speed = e.state == "running" ? e.speed : 0;
    size_t b = static_cast<size_t>(e.at.Seconds() / p.end_s * (kMaxPointsPerJob - 1));
    if (pts.size() <= b) pts.resize(b + 1, {-1, 0});
    if (pts[b].first < 0 || speed < pts[b].second) pts[b] = {e.at.Seconds(), speed};
  }
  for (auto& [job, pts] : buckets) {
    std::string points;
    double last = 0;
    for (const auto& [t, speed] : pts) {
      if (t < 0) continue;
      double yv = kTop + kHeight * (1 - std::clamp(speed, 0.0, 1.2) / 1.2);
      points += Fixed(X(p, t), 1) + "," + Fixed(kTop + kHeight * (1 - std::clamp(last, 0.0, 1.2) / 1.2), 1) + " " +
                Fixed(X(p, t), 1) + "," + Fixed(yv, 1) + " ";
      last = speed;
    }
    const JobRow* row = FindJob(p.report, job);
    body += "<polyline class=\"job-line\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\" points=\"" + points +
            "\"><title>" + XmlEscape(row ? row->name : "job") + "</title></polyline>";
  }
  body += Text(4, kTop + 10, "speed 1.2x") + Text(4, kTop + kHeight, "0") + Axis(p, kTop + kHeight + 4);
  return "<h2>Job throughput (speed vs nominal; fault windows shaded)</h2>\n" + Svg(kTop + kHeight + 26, body, "throughput");
}

std::string TtrChart(const Page& p) {
  const auto& faults = p.report.metrics.faults;
  double max_s = 1;
  for (const FaultMetrics& f : faults) max_s = std::max(max_s, f.time_to_recover ? f.time_to_recover->Seconds() : 0);
  std::string body;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultMetrics& f = faults[i];
    double y = 10 + kRow * static_cast<double>(i);
    body += Text(4, y + 14, "#" + std::to_string(f.fault) + " " + f.kind);
    if (!f.time_to_recover) {
      body += Text(kLabel, y + 14, "never recovered");
      continue;
    }
    double w = (kWidth - kLabel - 80) * f.time_to_recover->Seconds() / max_s;
    body += Rect(kLabel, y + 3, w, 14, "ttr-bar", f.target) + Text(kLabel + w + 6, y + 14, FormatDurationShort(*f.time_to_recover));
  }
  return "<h2>Time to recover</h2>\n" + Svg(20 + kRow * static_cast<double>(faults.size()), body, "ttr");
}

std::string Cell(const std::string& v, bool num = false) { return std::string(num ? "<td class=\"num\">" : "<td>") + XmlEscape(v) + "</td>"; }

std::string Tables(const RunReport& r) {
  std::string out = "<h2>Blast radius</h2>\n<table class=\"blast\"><tr><th>#</th><th>kind</th><th>target</th><th>GPUs direct</th>"
                    "<th>GPUs collateral</th><th>jobs</th><th>interrupted</th><th>GPU-h lost</th><th>isolated</th></tr>\n";
  for (const FaultMetrics& f : r.metrics.faults) {
    std::string iso;
    for (const std::string& n : f.isolated) iso += (iso.empty() ? "" : ", ") + n;
    out += "<tr>" + Cell(std::to_string(f.fault), true) + Cell(f.kind) + Cell(f.target) + Cell(std::to_string(f.gpus_direct), true) +
           Cell(std::to_string(f.gpus_collateral), true) + Cell(std::to_string(f.jobs_touched), true) +
           Cell(std::to_string(f.jobs_interrupted), true) + Cell(Fixed(f.gpu_hours_lost, 2), true) + Cell(iso) + "</tr>\n";
  }
  out += "</table>\n";
  if (!r.spare_rack_moves.empty()) {  // only when the scheduler moved a job to a spare rack
    out += "<h2>Spare racks</h2>\n<table class=\"spare-racks\"><tr><th>at</th><th>move</th></tr>\n";
    for (const ActionRow& a : r.spare_rack_moves)
      out += "<tr>" + Cell(FormatDurationShort(a.at)) + Cell(a.detail) + "</tr>\n";
    out += "</table>\n";
  }
  out += "<h2>Expectations</h2>\n";
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

Result<std::string> RenderHtml(const ReportStore& store, int64_t run) {
  Page p;
  RC_ASSIGN_OR_RETURN(p.report, LoadRunReport(store, run));
  RC_ASSIGN_OR_RETURN(p.faults, store.ReadFaults(run));
  RC_ASSIGN_OR_RETURN(p.detections, store.ReadDetections(run));
  RC_ASSIGN_OR_RETURN(p.isolations, store.ReadIsolations(run));
  RC_ASSIGN_OR_RETURN(p.job_events, store.ReadJobEvents(run));
  for (const ComponentRow& c : p.report.components) p.names[c.id] = c.name;
  p.end_s = EndOfRun(p);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rackchaos run " + std::to_string(run) +
         "</title>\n<style>" + kCss + "</style></head><body>\n" + Header(p.report) + Timeline(p) + Throughput(p) +
         TtrChart(p) + Tables(p.report) + "</body></html>\n";
}

}  // namespace rackchaos::reports
