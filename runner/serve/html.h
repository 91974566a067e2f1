// The page shell and building blocks of serve's HTML: one stylesheet inline, a navigation bar, tables,
// and small SVG charts. No JavaScript except the live page's /static/live.js; nothing external, so the
// pages work offline.
//
// Every text that comes from a database goes through Esc (reports::XmlEscape: & < > " ' escaped, XML
// control characters dropped); attribute values are always double-quoted. Functions are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos::serve {

// Text for element content and double-quoted attribute values.
std::string Esc(std::string_view text);

// <a href="HREF">TEXT</a>, both escaped.
std::string Link(std::string_view href, std::string_view text);

// A whole page: title, the navigation of database `db` (none when db < 0), the body (already HTML), and
// the live page's script when `live_script`.
std::string Page(std::string_view title, int db, std::string_view body, bool live_script = false);

// A table: header cells are text (escaped here); row cells are HTML (escape what you put in them).
// `num_cols` marks right-aligned columns by index.
std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<size_t>& num_cols = {}, std::string_view id = "");

// A status word in its colour class: passed green, failed/aborted/error red, running blue.
std::string StatusCell(std::string_view status);

// Seconds as "12.4s"/"5.3m"/"2.10h", or "-" when absent.
std::string Secs(std::optional<double> seconds);

// One series of a chart: a name, a CSS class, and a y value per x (absent: no point).
struct ChartSeries {
  std::string name;
  std::string css;  // "ttd", "tti", "ttr"
  std::vector<std::optional<double>> y;
};

// An SVG line chart of seconds over points 0..n-1, one <circle class="pt CSS"> per present value, with
// a <title> per point from `point_titles`; y on a linear axis from 0 to the largest value.
std::string LineChart(const std::vector<ChartSeries>& series, const std::vector<std::string>& point_titles,
                      std::string_view y_label);

// An SVG strip plot: one row per label, a dot per value, and the row's mean as a bar.
std::string StripPlot(const std::vector<std::string>& labels, const std::vector<std::vector<double>>& values,
                      std::string_view x_label, bool seconds);

}  // namespace rackchaos::serve
