#include "runner/serve/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/units.h"
#include "reports/escape.h"

namespace rackchaos::serve {
namespace {

constexpr const char* kCss = R"css(
body{font-family:system-ui,sans-serif;margin:0;color:#222}
main{margin:16px 24px}
nav{background:#263238;padding:8px 24px}nav a{color:#eceff1;margin-right:18px;text-decoration:none}
nav a:hover{text-decoration:underline}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right}
.st-passed{color:#186a1b}.st-failed,.st-aborted,.st-error{color:#b00020;font-weight:bold}.st-running{color:#1565c0}
.st-interrupted{color:#8d6e00}
form.filters input,form.filters select{margin-right:8px}
svg{display:block;margin:8px 0 20px;background:#fcfcfc;border:1px solid #ddd}
.pt.ttd{fill:#1565c0}.pt.tti{fill:#6a1b9a}.pt.ttr{fill:#e65100}.ln{fill:none;stroke-width:1.2}
.ln.ttd{stroke:#1565c0}.ln.tti{stroke:#6a1b9a}.ln.ttr{stroke:#e65100}
.dot{fill:#42a5f5;opacity:.6}.mean{fill:#e65100}.axis{stroke:#999}.lbl{font-size:11px}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 14px;vertical-align:middle}
.muted{color:#777}.err{background:#fdecea;border:1px solid #f5c2c0;padding:12px}
tr.new td{background:#fffde7}
)css";

std::string Num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string Esc(std::string_view text) { return reports::XmlEscape(text); }

std::string Link(std::string_view href, std::string_view text) {
  return "<a href=\"" + Esc(href) + "\">" + Esc(text) + "</a>";
}

std::string Page(std::string_view title, int db, std::string_view body, bool live_script) {
  std::string nav = "<nav>" + Link("/", "rackchaos");
  if (db >= 0) {
    const std::string base = "/db/" + std::to_string(db);
    nav += Link(base + "/runs", "runs") + Link(base + "/racks", "racks") + Link(base + "/sweeps", "sweeps") +
           Link(base + "/qualifications", "qualifications") + Link(base + "/compare", "compare");
  }
  nav += Link("/metrics", "metrics") + "</nav>\n";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + Esc(title) +
                    "</title>\n<style>" + kCss + "</style>";
  if (live_script) out += "<script src=\"/static/live.js\" defer></script>";
  out +=
      "</head><body>\n" + nav + "<main>\n<h1>" + Esc(title) + "</h1>\n" + std::string(body) + "</main></body></html>\n";
  return out;
}

std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<size_t>& num_cols, std::string_view id) {
  std::string out = id.empty() ? "<table>" : "<table id=\"" + Esc(id) + "\">";
  out += "<thead><tr>";
  for (const std::string& h : header) out += "<th>" + Esc(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      out += (std::count(num_cols.begin(), num_cols.end(), i) ? "<td class=\"num\">" : "<td>") + row[i] + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string StatusCell(std::string_view status) {
  return "<span class=\"st-" + Esc(status) + "\">" + Esc(status) + "</span>";
}

std::string Secs(std::optional<double> seconds) {
  if (!seconds) return "-";
  return FormatDurationShort(Duration::FromSecondsF(*seconds));
}

std::string LineChart(const std::vector<ChartSeries>& series, const std::vector<std::string>& point_titles,
                      std::string_view y_label) {
  constexpr double kW = 1000, kH = 260, kLeft = 70, kRight = 20, kTop = 20, kBottom = 30;
  const size_t n = point_titles.size();
  double top = 1;
  for (const ChartSeries& s : series)
    for (const auto& y : s.y)
      if (y) top = std::max(top, *y);
  auto x = [&](size_t i) {
    return kLeft + (n <= 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(n - 1)) * (kW - kLeft - kRight);
  };
  auto y = [&](double v) { return kTop + (1 - v / top) * (kH - kTop - kBottom); };
  std::string out = "<svg class=\"chart\" width=\"" + Num(kW, 0) + "\" height=\"" + Num(kH, 0) + "\" viewBox=\"0 0 " +
                    Num(kW, 0) + " " + Num(kH, 0) + "\" role=\"img\">";
  out += "<line class=\"axis\" x1=\"" + Num(kLeft, 1) + "\" y1=\"" + Num(y(0), 1) + "\" x2=\"" + Num(kW - kRight, 1) +
         "\" y2=\"" + Num(y(0), 1) + "\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double v = top * i / 4;
    out += "<text class=\"lbl\" x=\"" + Num(kLeft - 6, 1) + "\" y=\"" + Num(y(v) + 4, 1) + "\" text-anchor=\"end\">" +
           Esc(Secs(v)) + "</text>";
  }
  out += "<text class=\"lbl\" x=\"" + Num(kLeft, 1) + "\" y=\"" + Num(kH - 8, 1) + "\">" + Esc(y_label) + "</text>";
  for (const ChartSeries& s : series) {
    std::string path;
    for (size_t i = 0; i < s.y.size() && i < n; ++i)
      if (s.y[i]) path += (path.empty() ? "M" : " L") + Num(x(i), 1) + " " + Num(y(*s.y[i]), 1);
    if (!path.empty()) out += "<path class=\"ln " + Esc(s.css) + "\" d=\"" + path + "\"/>";
    for (size_t i = 0; i < s.y.size() && i < n; ++i)
      if (s.y[i])
        out += "<circle class=\"pt " + Esc(s.css) + "\" cx=\"" + Num(x(i), 1) + "\" cy=\"" + Num(y(*s.y[i]), 1) +
               "\" r=\"3\"><title>" + Esc(s.name + " " + Secs(*s.y[i]) + ", " + point_titles[i]) + "</title></circle>";
  }
  out += "</svg>\n<div class=\"legend\">";
  for (const ChartSeries& s : series)
    out += "<span class=\"pt " + Esc(s.css) + "\" style=\"background:currentColor\"></span>" + Esc(s.name);
  return out + "</div>\n";
}

std::string StripPlot(const std::vector<std::string>& labels, const std::vector<std::vector<double>>& values,
                      std::string_view x_label, bool seconds) {
  constexpr double kW = 1000, kRow = 26, kLeft = 260, kRight = 20, kTop = 10;
  double top = 0;
  for (const auto& row : values)
    for (double v : row) top = std::max(top, v);
  if (top <= 0) top = 1;
  const double h = kTop + kRow * static_cast<double>(labels.size()) + 30;
  auto x = [&](double v) { return kLeft + v / top * (kW - kLeft - kRight); };
  auto show = [&](double v) { return seconds ? Secs(v) : Num(v, 3); };
  std::string out = "<svg class=\"strip\" width=\"" + Num(kW, 0) + "\" height=\"" + Num(h, 0) + "\" viewBox=\"0 0 " +
                    Num(kW, 0) + " " + Num(h, 0) + "\" role=\"img\">";
  for (size_t r = 0; r < labels.size(); ++r) {
    const double cy = kTop + kRow * (static_cast<double>(r) + 0.5);
    out += "<text class=\"lbl\" x=\"" + Num(kLeft - 8, 1) + "\" y=\"" + Num(cy + 4, 1) + "\" text-anchor=\"end\">" +
           Esc(labels[r]) + "</text>";
    double sum = 0;
    // At most 2,000 dots a row: a 10,000-run point draws a sample (evenly spaced in sorted order).
    const size_t step = std::max<size_t>(1, values[r].size() / 2000);
    for (size_t i = 0; i < values[r].size(); i += step)
      out += "<circle class=\"dot\" cx=\"" + Num(x(values[r][i]), 1) + "\" cy=\"" + Num(cy, 1) + "\" r=\"2.5\"/>";
    for (double v : values[r]) sum += v;
    if (!values[r].empty()) {
      const double mean = sum / static_cast<double>(values[r].size());
      out += "<rect class=\"mean\" x=\"" + Num(x(mean) - 1, 1) + "\" y=\"" + Num(cy - 9, 1) +
             "\" width=\"2\" height=\"18\"><title>mean " + Esc(show(mean)) + "</title></rect>";
    }
  }
  const double axis_y = h - 22;
  out += "<line class=\"axis\" x1=\"" + Num(kLeft, 1) + "\" y1=\"" + Num(axis_y, 1) + "\" x2=\"" + Num(kW - kRight, 1) +
         "\" y2=\"" + Num(axis_y, 1) + "\"/>";
  for (int i = 0; i <= 4; ++i)
    out += "<text class=\"lbl\" x=\"" + Num(x(top * i / 4), 1) + "\" y=\"" + Num(axis_y + 14, 1) +
           "\" text-anchor=\"middle\">" + Esc(show(top * i / 4)) + "</text>";
  return out + "<text class=\"lbl\" x=\"4\" y=\"" + Num(axis_y + 14, 1) + "\">" + Esc(x_label) + "</text></svg>\n";
}

}  // namespace rackchaos::serve
