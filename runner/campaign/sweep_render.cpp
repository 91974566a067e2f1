#include "runner/campaign/sweep_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "reports/escape.h"
#include "reports/text_table.h"
#include "runner/spec/expect.h"

namespace rackchaos::runner {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Full precision for the CSV: plotting tools read it back exactly.
std::string Exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string CsvCell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Unit(const std::string& metric) { return IsTimeMetric(metric) ? " (s)" : ""; }

// "highest" or "lowest": which end of a metric is its optimum.
const char* BestEnd(const std::string& metric) { return HigherIsBetter(metric) ? "highest" : "lowest"; }

// The x label of a point in a plot: the values alone ("10m" or "10m, aggressive").
std::string PointValues(const std::string& point) {
  std::string out;
  for (const auto& [key, value] : PointAxes(point)) out += (out.empty() ? "" : ", ") + value;
  return out;
}

// Mean against grid point with 95% CI bars. Points are evenly spaced, in the result's order (by value).
std::string Plot(const SweepResult& result, const std::string& metric) {
  std::vector<const SweepStat*> stats;
  for (const SweepStat& s : result.stats)
    if (s.metric == metric) stats.push_back(&s);
  double lo = INFINITY, hi = -INFINITY;
  for (const SweepStat* s : stats)
    if (s->n > 0) {
      lo = std::min(lo, s->ci_low);
      hi = std::max(hi, s->ci_high);
    }
  if (!(lo <= hi)) lo = 0, hi = 1;
  if (hi - lo < 1e-12) lo -= std::max(1.0, std::fabs(lo) * 0.1), hi += std::max(1.0, std::fabs(hi) * 0.1);
  const double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  const int w = 720, h = 300, left = 70, right = 20, top = 20, bottom = 60;
  const double plot_w = w - left - right, plot_h = h - top - bottom;
  auto y = [&](double v) { return top + plot_h * (hi - v) / (hi - lo); };
  auto x = [&](size_t i) { return left + plot_w * (static_cast<double>(i) + 0.5) / static_cast<double>(stats.size()); };
  char buf[512];  // the longest format (a point with its CI bars) is about 330 bytes
  std::string svg = "<svg class=\"sweep-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) +
                    "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " +
                    std::to_string(h) + "\" role=\"img\" aria-label=\"" + reports::XmlEscape(metric) +
                    " by grid point\">";
  std::snprintf(buf, sizeof buf, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", left, top, left,
                h - bottom);
  svg += buf;
  std::snprintf(buf, sizeof buf, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", left, h - bottom,
                w - right, h - bottom);
  svg += buf;
  for (int t = 0; t <= 4; ++t) {  // five y ticks
    const double v = lo + (hi - lo) * t / 4;
    std::snprintf(buf, sizeof buf,
                  "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                  "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                  left, y(v), w - right, y(v), left - 6, y(v) + 4);
    svg += buf + Num(v) + "</text>";
  }
  for (size_t i = 0; i < stats.size(); ++i) {
    const SweepStat& s = *stats[i];
    std::snprintf(buf, sizeof buf, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x(i),
                  h - bottom + 18);
    svg += buf + reports::XmlEscape(PointValues(s.point)) + "</text>";
    if (s.n == 0) continue;
    const std::string title = "<title>" + reports::XmlEscape(s.point) + ": mean " + Num(s.mean) + ", 95% CI [" +
                              Num(s.ci_low) + ", " + Num(s.ci_high) + "], n " + std::to_string(s.n) +
                              (s.best ? std::string(" (best: ") + BestEnd(s.metric) + " mean)" : "") + "</title>";
    std::snprintf(buf, sizeof buf,
                  "<g class=\"point\"><line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                  "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                  "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                  "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\">",
                  x(i), y(s.ci_low), x(i), y(s.ci_high), x(i) - 6, y(s.ci_low), x(i) + 6, y(s.ci_low), x(i) - 6,
                  y(s.ci_high), x(i) + 6, y(s.ci_high), s.best ? "mean best" : "mean", x(i), y(s.mean), s.best ? 6 : 4);
    svg += buf + title + "</circle></g>";
  }
  std::string axis_name;
  for (const auto& [key, value] : PointAxes(stats.empty() ? "-" : stats.front()->point))
    axis_name += (axis_name.empty() ? "" : ", ") + key;
  std::snprintf(buf, sizeof buf, "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                left + plot_w / 2, h - 12);
  svg += buf + reports::XmlEscape(axis_name.empty() ? "grid point" : axis_name) + "</text>";
  std::snprintf(buf, sizeof buf, "<text class=\"label\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                "text-anchor=\"middle\">", top + plot_h / 2, top + plot_h / 2);
  svg += buf + reports::XmlEscape(metric + Unit(metric)) + "</text></svg>";
  return svg;
}

// One line per metric with a best point: "ettr.mean: highest mean 0.8517 at checkpoint.interval=10m".
std::vector<std::string> BestLines(const SweepResult& result) {
  std::vector<std::string> lines;
  for (const std::string& metric : result.metrics) {
    std::string at;
    double mean = 0;
    for (const SweepStat& s : result.stats)
      if (s.metric == metric && s.best) {
        at += (at.empty() ? "" : ", ") + s.point;
        mean = s.mean;
      }
    if (!at.empty()) lines.push_back(metric + ": " + BestEnd(metric) + " mean " + Num(mean) + Unit(metric) + " at " + at);
  }
  return lines;
}

}  // namespace

std::string RenderSweepTable(const SweepResult& result) {
  using A = reports::Align;
  // The "best" column only when a point is best (a sweep without a grid has no optimum to show).
  const bool any_best = std::any_of(result.stats.begin(), result.stats.end(), [](const SweepStat& s) { return s.best; });
  std::vector<std::string> headers = {"point", "metric", "runs", "n", "mean", "sd", "min", "max", "p50", "p95",
                                      "95% CI of mean"};
  if (any_best) headers.push_back("best");
  reports::TextTable table(std::move(headers), {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight,
                                                A::kRight, A::kRight, A::kRight, A::kRight, A::kLeft, A::kLeft});
  for (const SweepStat& s : result.stats) {
    const bool any = s.n > 0;
    auto cell = [&](double v) { return any ? Num(v) : "-"; };
    const std::string ci = any ? "[" + Num(s.ci_low) + ", " + Num(s.ci_high) + "]" : "-";
    table.AddRow({s.point, s.metric, std::to_string(s.runs), std::to_string(s.n), cell(s.mean), cell(s.sd), cell(s.min),
                  cell(s.max), cell(s.p50), cell(s.p95), ci, s.best ? std::string("<- ") + BestEnd(s.metric) : ""});
  }
  std::string best;
  for (const std::string& line : BestLines(result)) best += "  " + line + "\n";
  return "Sweep " + result.sweep_id + ": " + std::to_string(result.runs) + " run(s), " + std::to_string(result.failed) +
         " not passed (times in seconds; values that never came are left out of n)\n" + table.Render("  ") +
         (best.empty() ? "" : "Best mean per metric (marked <-):\n" + best);
}

std::string RenderSweepTiming(const SweepResult& result) {
  using A = reports::Align;
  reports::TextTable table({"point", "timed", "wall mean", "wall p50", "wall p95", "wall max", "cpu mean", "cpu p95",
                            "cpu max"},
                           {A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight,
                            A::kRight});
  for (const SweepTiming& t : result.timing) {
    auto cell = [](const Summary& s, double v) { return s.n > 0 ? Num(v) : "-"; };
    table.AddRow({t.point, std::to_string(t.wall_ms.n), cell(t.wall_ms, t.wall_ms.mean), cell(t.wall_ms, t.wall_ms.p50),
                  cell(t.wall_ms, t.wall_ms.p95), cell(t.wall_ms, t.wall_ms.max), cell(t.cpu_ms, t.cpu_ms.mean),
                  cell(t.cpu_ms, t.cpu_ms.p95), cell(t.cpu_ms, t.cpu_ms.max)});
  }
  return "Machine time per run in ms (this machine's, not simulated; varies between invocations)\n" +
         table.Render("  ");
}

std::string RenderSweepCsv(const SweepResult& result, bool timing) {
  std::vector<std::string> keys;
  if (!result.points.empty())
    for (const auto& [key, value] : PointAxes(result.points.front()))
      if (!key.empty()) keys.push_back(key);
  std::string out = "point";
  for (const std::string& k : keys) out += "," + CsvCell(k);
  out += ",metric,runs,n,mean,sd,min,max,p50,p95,ci_low,ci_high\n";
  auto row = [&](const std::string& point, const std::string& metric, int64_t runs, const Summary& s) {
    out += CsvCell(point);
    const auto axes = PointAxes(point);
    for (size_t k = 0; k < keys.size(); ++k) out += "," + (k < axes.size() ? CsvCell(axes[k].second) : "");
    out += "," + CsvCell(metric) + "," + std::to_string(runs) + "," + std::to_string(s.n);
    for (double v : {s.mean, s.sd, s.min, s.max, s.p50, s.p95, s.ci_low, s.ci_high})
      out += "," + (s.n > 0 ? Exact(v) : "");
    out += "\n";
  };
  for (const SweepStat& s : result.stats) row(s.point, s.metric, s.runs, s);
  if (timing)
    for (const SweepTiming& t : result.timing) {
      row(t.point, "run.wall_ms", t.wall_ms.n, t.wall_ms);
      row(t.point, "run.cpu_ms", t.cpu_ms.n, t.cpu_ms);
    }
  return out;
}

std::string RenderSweepHtml(const SweepResult& result) {
  using reports::XmlEscape;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rackchaos sweep " +
      XmlEscape(result.sweep_id) +
      "</title><style>"
      "body{font-family:sans-serif;margin:24px;max-width:1100px;color:#222}"
      "table{border-collapse:collapse;margin:8px 0 24px}td,th{border:1px solid #ccc;padding:3px 8px}"
      "td.num{text-align:right;font-variant-numeric:tabular-nums}"
      ".sweep-plot .axis{stroke:#333}.sweep-plot .grid{stroke:#e4e4e4}.sweep-plot .ci{stroke:#1f5fa8;stroke-width:2}"
      ".sweep-plot .mean{fill:#1f5fa8}.sweep-plot .best{fill:#c0392b}.sweep-plot text{font-size:12px;fill:#333}"
      "tr.best td{font-weight:bold;background:#fdf0ee}p.best{font-weight:bold}"
      "</style></head><body>\n<h1>Sweep " +
      XmlEscape(result.sweep_id) + "</h1>\n<p class=\"summary\">plan " + XmlEscape(result.plan_name) + ": " +
      std::to_string(result.runs) + " run(s) over " + std::to_string(result.points.size()) + " grid point(s), " +
      std::to_string(result.failed) +
      " not passed. Each plot shows the mean of a metric at each grid point (in the order of the grid values) "
      "with its 95% confidence interval; times are in seconds.</p>\n";
  for (const std::string& metric : result.metrics) {
    std::string best;
    for (const std::string& line : BestLines(result))
      if (line.rfind(metric + ": ", 0) == 0) best = "<p class=\"best\">Best: " + XmlEscape(line.substr(metric.size() + 2)) + "</p>\n";
    html += "<section class=\"metric\"><h2>" + XmlEscape(metric) + Unit(metric) + "</h2>\n" + best +
            Plot(result, metric) +
            "\n<table class=\"stats\"><tr><th>point</th><th>runs</th><th>n</th><th>mean</th><th>sd</th><th>min</th>"
            "<th>max</th><th>p50</th><th>p95</th><th>95% CI of mean</th><th>best</th></tr>\n";
    for (const SweepStat& s : result.stats) {
      if (s.metric != metric) continue;
      const bool any = s.n > 0;
      auto cell = [&](double v) { return "<td class=\"num\">" + (any ? Num(v) : std::string("-")) + "</td>"; };
      html += std::string(s.best ? "<tr class=\"best\">" : "<tr>") + "<td>" + XmlEscape(s.point) +
              "</td><td class=\"num\">" + std::to_string(s.runs) +
              "</td><td class=\"num\">" + std::to_string(s.n) + "</td>" + cell(s.mean) + cell(s.sd) + cell(s.min) +
              cell(s.max) + cell(s.p50) + cell(s.p95) + "<td>" +
              (any ? "[" + Num(s.ci_low) + ", " + Num(s.ci_high) + "]" : "-") + "</td><td>" +
              (s.best ? BestEnd(s.metric) : "") + "</td></tr>\n";
    }
    html += "</table></section>\n";
  }
  return html + "</body></html>\n";
}

}  // namespace rackchaos::runner
