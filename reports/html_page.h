// The parts of the HTML run report (reports/render.h RenderHtml), shared by its two files: the page and
// its tables (render_html.cpp) and its SVG charts (html_charts.cpp). Internal to reports/.
//
// Every chart is of bounded size whatever the run: at most kTimelineRows rows in the timeline, marks
// that would overlap merged into one (its hover title says how many) and at most about kMarksPerLane of
// a kind on a row, at most kJobLines job lines of one point per pixel, a time-to-recover histogram
// instead of one bar per fault past kTtrBars faults. Whatever a chart or table leaves out, the text
// under it says. Worst case about 1.5 MB of timeline (50 rows x 4 kinds x 48 marks with their titles);
// a month of chaos on a fleet comes to about 150 KB in all.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "reports/fault_digest.h"
#include "reports/run_report.h"
#include "reports/store.h"

namespace rackchaos::reports::html {

inline constexpr double kWidth = 1000, kLabel = 220, kRow = 22;
inline constexpr size_t kTimelineRows = 50;
inline constexpr size_t kMarksPerLane = 48;  // bars or ticks of one kind on one timeline row
inline constexpr size_t kJobLines = 10;
inline constexpr size_t kTtrBars = 40;

// Everything the page shows, read from the store once.
struct Page {
  RunReport report;
  std::vector<FaultRow> faults;
  std::vector<DetectionRow> detections;
  std::vector<IsolationRow> isolations;
  std::vector<JobEventRow> job_events;
  std::unordered_map<ComponentId, std::string> names;
  FaultDigest digest;  // of report.metrics, kHtmlLimits
  double end_s = 1;    // the time axis: the last thing that happened

  std::string NameOf(ComponentId id) const;
};

// The x of `t_s` on the time axis.
double X(const Page& p, double t_s);
// SVG pieces; `title` is the hover text (escaped here).
std::string Rect(double x, double y, double w, double h, const std::string& cls, const std::string& title);
std::string Text(double x, double y, const std::string& text, const std::string& anchor = "start");
std::string Svg(double height, const std::string& body, const std::string& cls);
// A <p class="more"> saying what a section left out ("" when `text` is empty).
std::string More(const std::string& text);
// A time on the run's clock, exactly ("1h2m3.25s").
std::string At(Time t);

// The charts (html_charts.cpp), each with its <h2>.
std::string TimelineChart(const Page& p);
std::string ThroughputChart(const Page& p);
std::string TtrChart(const Page& p);

}  // namespace rackchaos::reports::html
