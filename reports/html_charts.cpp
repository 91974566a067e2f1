// The SVG charts of the HTML run report: the timeline per component, job throughput and the time to
// recover. Each is of bounded size whatever the run (reports/html_page.h says how).
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "reports/escape.h"
#include "reports/html_page.h"

namespace rackchaos::reports::html {
namespace {

// One bar or tick, and how many events it stands for once merged with those it would cover.
struct Mark {
  double x0 = 0, x1 = 0;
  Time t0{}, t1{};
  int count = 1;
  std::string title;  // of the first
};

// Marks of one class on one row, merged where they overlap on screen: a component detected 3,000 times
// in a month is one tick per pixel, not 3,000 elements, and the tick's title says how many it holds.
class Lane {
 public:
  Lane(double y, double h, std::string cls, std::string what) : y_(y), h_(h), cls_(std::move(cls)), what_(std::move(what)) {}
  void Add(double x, double w, Time t0, Time t1, std::string title) {
    marks_.push_back({x, x + std::max(w, 2.0), t0, t1, 1, std::move(title)});
  }
  std::string Render() {
    std::stable_sort(marks_.begin(), marks_.end(), [](const Mark& a, const Mark& b) { return a.x0 < b.x0; });
    // Past kMarksPerLane, marks also merge with those starting within 1/kMarksPerLane of the axis after
    // them: a lane never holds more than about kMarksPerLane elements, whatever the run.
    const double bucket = marks_.size() > kMarksPerLane ? (kWidth - kLabel - 10) / kMarksPerLane : 0;
    std::vector<Mark> merged;
    for (Mark& m : marks_) {
      if (!merged.empty() && (m.x0 <= merged.back().x1 || m.x0 < merged.back().x0 + bucket)) {
        Mark& into = merged.back();
        into.x1 = std::max(into.x1, m.x1);
        into.t0 = std::min(into.t0, m.t0);
        into.t1 = std::max(into.t1, m.t1);
        into.count += 1;
      } else {
        merged.push_back(std::move(m));
      }
    }
    std::string out;
    for (const Mark& m : merged) {
      std::string title = m.count == 1 ? m.title
                                       : std::to_string(m.count) + " " + what_ + " from " + At(m.t0) + " to " + At(m.t1) +
                                             "; the first: " + m.title;
      out += Rect(m.x0, y_, m.x1 - m.x0, h_, cls_, title);
    }
    return out;
  }

 private:
  double y_, h_;
  std::string cls_, what_;
  std::vector<Mark> marks_;
};

std::string Axis(const Page& p, double y) {
  std::string out = "<line class=\"axis\" x1=\"" + Fixed(kLabel, 1) + "\" y1=\"" + Fixed(y, 1) + "\" x2=\"" +
                    Fixed(kWidth - 10, 1) + "\" y2=\"" + Fixed(y, 1) + "\"/>";
  for (int i = 0; i <= 5; ++i) {
    double t = p.end_s * i / 5;
    out += Text(X(p, t), y + 14, FormatDurationShort(Duration::FromSecondsF(t)), i == 5 ? "end" : "middle");
  }
  return out;
}

// Rows: the targets of the listed faults first (all faults' when none is cut), then what was isolated,
// then what was detected, up to kTimelineRows. `with_marks` counts every component that has any.
std::vector<ComponentId> TimelineRows(const Page& p, size_t& with_marks) {
  std::vector<ComponentId> rows;
  std::unordered_set<ComponentId> seen, all;
  auto add = [&](ComponentId id) {
    if (id == kNoComponent) return;
    all.insert(id);
    if (rows.size() < kTimelineRows && seen.insert(id).second) rows.push_back(id);
  };
  if (p.digest.cut()) {
    std::unordered_map<FaultId, ComponentId> target;
    for (const FaultRow& f : p.faults) target.emplace(f.fault, f.target);
    for (const FaultMetrics* m : p.digest.listed)
      if (auto it = target.find(m->fault); it != target.end()) add(it->second);
  }
  for (const FaultRow& f : p.faults) add(f.target);
  for (const IsolationRow& i : p.isolations) add(i.component);
  for (const DetectionRow& d : p.detections) add(d.component);
  with_marks = all.size();
  return rows;
}

std::string FaultTitle(const Page& p, const FaultRow& f) {
  return "fault #" + std::to_string(f.fault) + " " + f.kind + " on " + p.NameOf(f.target) + ": injected at " +
         At(f.injected) + (f.reverted ? ", reverted at " + At(*f.reverted) : ", not reverted before the end");
}

std::string RecoveredTitle(const FaultMetrics& m) {
  std::string out = "fault #" + std::to_string(m.fault) + " recovered at " + At(m.injected + *m.time_to_recover) + ", " +
                    FormatDuration(*m.time_to_recover) + " after injection";
  if (m.time_to_detect) out += " (detected after " + FormatDuration(*m.time_to_detect);
  if (m.time_to_isolate) out += std::string(m.time_to_detect ? ", " : " (") + "isolated after " + FormatDuration(*m.time_to_isolate);
  return out + (m.time_to_detect || m.time_to_isolate ? ")" : "");
}

}  // namespace

std::string TimelineChart(const Page& p) {
  size_t with_marks = 0;
  const std::vector<ComponentId> rows = TimelineRows(p, with_marks);
  std::unordered_map<ComponentId, size_t> row_of;
  std::string body;
  std::vector<Lane> faults, recovered, detected, isolated;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = 10 + kRow * static_cast<double>(i);
    row_of[rows[i]] = i;
    body += Text(4, y + 14, p.NameOf(rows[i]));
    faults.emplace_back(y + 2, 8, "tl-bar tl-fault", "faults");
    recovered.emplace_back(y + 11, 6, "tl-bar tl-recovered", "recoveries");
    detected.emplace_back(y, 18, "tl-bar tl-detected", "detections");
    isolated.emplace_back(y, 18, "tl-bar tl-isolated", "isolations");
  }
  std::unordered_map<FaultId, const FaultMetrics*> metrics;
  for (const FaultMetrics& m : p.report.metrics.faults) metrics.emplace(m.fault, &m);
  for (const FaultRow& f : p.faults) {
    auto row = row_of.find(f.target);
    if (row == row_of.end()) continue;
    const Time end = f.reverted ? *f.reverted : Duration::FromSecondsF(p.end_s);
    const double x = X(p, f.injected.Seconds());
    faults[row->second].Add(x, X(p, end.Seconds()) - x, f.injected, end, FaultTitle(p, f));
    auto m = metrics.find(f.fault);
    if (m == metrics.end() || !m->second->time_to_recover) continue;
    const Time back = f.injected + *m->second->time_to_recover;
    recovered[row->second].Add(x, X(p, back.Seconds()) - x, f.injected, back, RecoveredTitle(*m->second));
  }
  for (const DetectionRow& d : p.detections)
    if (auto row = row_of.find(d.component); row != row_of.end())
      detected[row->second].Add(X(p, d.at.Seconds()), 3, d.at, d.at, "detected at " + At(d.at) + " by " + d.detector + ": " + d.symptom);
  for (const IsolationRow& i : p.isolations)
    if (auto row = row_of.find(i.component); row != row_of.end())
      isolated[row->second].Add(X(p, i.at.Seconds()), 5, i.at, i.at, "isolated at " + At(i.at) + " (" + i.domain + "): " + i.reason);
  for (auto* lanes : {&faults, &recovered, &detected, &isolated})
    for (Lane& lane : *lanes) body += lane.Render();
  const double height = 10 + kRow * static_cast<double>(rows.size()) + 24;
  body += Axis(p, height - 22);
  std::string more;
  if (with_marks > rows.size())
    more = Thousands(with_marks - rows.size()) + " more components with a fault, a detection or an isolation are not drawn (" +
           Thousands(with_marks) + " in all); the rows are the targets of the faults listed below first.";
  return "<h2>Timeline per component</h2>\n<p class=\"legend\"><span style=\"background:#e57373\"></span>fault"
         "<span style=\"background:#1565c0\"></span>detected<span style=\"background:#6a1b9a\"></span>isolated"
         "<span style=\"background:#81c784\"></span>recovered (injection to full speed); hover for times</p>\n" +
         Svg(height, body, "timeline") + More(more);
}

// Each job's speed averaged over the span of each pixel of the time axis (time-weighted, as ETTR
// averages it: a month's chart is as many points as a minute's); drawn as a step line.
class SpeedLine {
 public:
  SpeedLine(double end_s, size_t pixels) : end_s_(end_s), sum_(pixels, 0), covered_(pixels, 0) {}
  // The job ran at `speed` from `t0_s` to `t1_s`.
  void Add(double t0_s, double t1_s, double speed) {
    const double width = end_s_ / static_cast<double>(sum_.size());
    for (auto b = static_cast<size_t>(std::max(0.0, t0_s) / width); b < sum_.size() && t0_s < t1_s; ++b) {
      const double stop = std::min(t1_s, width * static_cast<double>(b + 1));
      sum_[b] += speed * (stop - t0_s);
      covered_[b] += stop - t0_s;
      t0_s = stop;
    }
  }
  // The polyline's points: pixels the job did not exist in are skipped; a change of value is a step.
  template <typename XOf, typename YOf>
  std::string Points(XOf x_of, YOf y_of) const {
    const double width = end_s_ / static_cast<double>(sum_.size());
    std::string out;
    double last = -1, last_x = 0;
    for (size_t b = 0; b < sum_.size(); ++b) {
      if (covered_[b] <= 0) continue;
      const double v = sum_[b] / covered_[b], x = x_of(width * static_cast<double>(b));
      if (last < 0 || std::fabs(v - last) > 1e-3) {
        out += Fixed(x, 1) + "," + Fixed(y_of(last < 0 ? v : last), 1) + " " + Fixed(x, 1) + "," + Fixed(y_of(v), 1) + " ";
        last = v;
      }
      last_x = x_of(width * static_cast<double>(b + 1));
    }
    return last < 0 ? "" : out + Fixed(last_x, 1) + "," + Fixed(y_of(last), 1);
  }

 private:
  double end_s_;
  std::vector<double> sum_, covered_;
};

// Speed over time per job (SpeedLine); fault windows shaded behind, merged where they overlap; a
// dashed line at 1.0, nominal speed.
std::string ThroughputChart(const Page& p) {
  constexpr double kTop = 10, kHeight = 160;
  constexpr const char* kColours[] = {"#333", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"};
  auto y_of = [&](double speed) { return kTop + kHeight * (1 - std::clamp(speed, 0.0, 1.2) / 1.2); };
  Lane windows(kTop, kHeight, "fault-window", "fault windows overlap");
  for (const FaultRow& f : p.faults) {
    const Time end = f.reverted ? *f.reverted : Duration::FromSecondsF(p.end_s);
    const double x = X(p, f.injected.Seconds());
    windows.Add(x, X(p, end.Seconds()) - x, f.injected, end, FaultTitle(p, f));
  }
  std::string body = windows.Render();
  body += Text(kLabel - 6, y_of(1.2) + 4, "1.2", "end") + Text(kLabel - 6, y_of(1) + 4, "1.0 nominal", "end") +
          Text(kLabel - 6, y_of(0.5) + 4, "0.5", "end") + Text(kLabel - 6, y_of(0) + 4, "0", "end");
  // The jobs drawn: those with events, lowest ETTR first when there are more than kJobLines.
  const auto pixels = static_cast<size_t>(kWidth - kLabel - 10);
  std::map<JobId, SpeedLine> lines;
  std::map<JobId, std::pair<double, double>> since;  // the job's last event: (time, speed)
  auto close = [&](JobId job, double t_s) {
    if (auto it = since.find(job); it != since.end()) lines.try_emplace(job, p.end_s, pixels).first->second.Add(it->second.first, t_s, it->second.second);
  };
  for (const JobEventRow& e : p.job_events) {
    close(e.job, e.at.Seconds());
    since[e.job] = {e.at.Seconds(), e.state == "running" ? e.speed : 0};
  }
  for (const auto& [job, last] : since) close(job, p.end_s);
  std::vector<const JobMetrics*> order;
  for (const JobMetrics& j : p.report.metrics.jobs) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(), [](const JobMetrics* a, const JobMetrics* b) { return a->ettr < b->ettr; });
  std::vector<JobId> drawn;
  for (const JobMetrics* j : order)
    if (lines.count(j->job) && drawn.size() < kJobLines) drawn.push_back(j->job);
  for (const auto& [job, line] : lines)  // jobs with events but no metrics (a run cut short)
    if (std::find(drawn.begin(), drawn.end(), job) == drawn.end() && drawn.size() < kJobLines) drawn.push_back(job);
  std::string legend;
  for (size_t i = 0; i < drawn.size(); ++i) {
    const std::string line = lines.at(drawn[i]).Points([&](double t_s) { return X(p, t_s); }, y_of);
    const JobRow* row = FindJob(p.report, drawn[i]);
    const std::string name = row ? row->name : "job " + std::to_string(drawn[i]);
    body += "<polyline class=\"job-line\" fill=\"none\" stroke=\"" + std::string(kColours[i % std::size(kColours)]) +
            "\" stroke-width=\"1.5\" points=\"" + line + "\"><title>" + XmlEscape(name) + "</title></polyline>";
    legend += "<span style=\"background:" + std::string(kColours[i % std::size(kColours)]) + "\"></span>" + XmlEscape(name);
  }
  // Over the job lines, dashed, so a job at full speed shows through it.
  body += "<line class=\"nominal\" x1=\"" + Fixed(kLabel, 1) + "\" y1=\"" + Fixed(y_of(1), 1) + "\" x2=\"" +
          Fixed(kWidth - 10, 1) + "\" y2=\"" + Fixed(y_of(1), 1) + "\"><title>1.0: every step at its nominal speed</title></line>";
  body += Axis(p, kTop + kHeight + 4);
  std::string more;
  if (lines.size() > drawn.size())
    more = Thousands(lines.size() - drawn.size()) + " more jobs are not drawn (the " + std::to_string(drawn.size()) +
           " with the lowest ETTR are); every job is in the Jobs table.";
  return "<h2>Job throughput (speed vs nominal; fault windows shaded)</h2>\n<p class=\"legend\">" + legend + "</p>\n" +
         Svg(kTop + kHeight + 26, body, "throughput") + More(more);
}

// One bar per fault while they fit; past kTtrBars a histogram, so the chart's height never grows with
// the run (a month's 40,000 faults once made it 894,056 px tall).
std::string TtrChart(const Page& p) {
  const auto& faults = p.report.metrics.faults;
  std::string body;
  size_t rows = 0;
  if (faults.size() <= kTtrBars) {
    double max_s = 1;
    for (const FaultMetrics& f : faults) max_s = std::max(max_s, f.time_to_recover ? f.time_to_recover->Seconds() : 0);
    for (const FaultMetrics& f : faults) {
      const double y = 10 + kRow * static_cast<double>(rows++);
      body += Text(4, y + 14, "#" + std::to_string(f.fault) + " " + f.kind);
      if (!f.time_to_recover) {
        body += Text(kLabel, y + 14, "never recovered");
        continue;
      }
      const double w = (kWidth - kLabel - 80) * f.time_to_recover->Seconds() / max_s;
      body += Rect(kLabel, y + 3, w, 14, "ttr-bar", f.target + ": injected at " + At(f.injected) + ", recovered at " +
                                                       At(f.injected + *f.time_to_recover)) +
              Text(kLabel + w + 6, y + 14, FormatDurationShort(*f.time_to_recover));
    }
    return "<h2>Time to recover</h2>\n" + Svg(20 + kRow * static_cast<double>(rows), body, "ttr");
  }
  struct Bucket {
    const char* label;
    double below_s;
    size_t n = 0;
  };
  Bucket buckets[] = {{"under 1m", 60},          {"1m to 5m", 300},         {"5m to 15m", 900}, {"15m to 1h", 3600},
                      {"1h to 4h", 14400},       {"4h to 1d", 86400},       {"1d or more", 1e300}, {"never recovered", -1}};
  for (const FaultMetrics& f : faults) {
    if (!f.time_to_recover) {
      ++buckets[std::size(buckets) - 1].n;
      continue;
    }
    for (Bucket& b : buckets)
      if (b.below_s > 0 && f.time_to_recover->Seconds() < b.below_s) {
        ++b.n;
        break;
      }
  }
  size_t most = 1;
  for (const Bucket& b : buckets) most = std::max(most, b.n);
  for (const Bucket& b : buckets) {
    const double y = 10 + kRow * static_cast<double>(rows++);
    const double w = (kWidth - kLabel - 140) * static_cast<double>(b.n) / static_cast<double>(most);
    const std::string share = Fixed(100.0 * static_cast<double>(b.n) / static_cast<double>(faults.size()), 1) + "%";
    body += Text(4, y + 14, b.label);
    if (b.n > 0) body += Rect(kLabel, y + 3, w, 14, b.below_s < 0 ? "ttr-bar ttr-never" : "ttr-bar",
                              Thousands(b.n) + " faults " + (b.below_s < 0 ? "never recovered" : std::string("recovered ") + b.label));
    body += Text(kLabel + (b.n > 0 ? w : 0) + 6, y + 14, Thousands(b.n) + " (" + share + ")");
  }
  return "<h2>Time to recover (" + Thousands(faults.size()) + " faults by how long they took)</h2>\n" +
         Svg(20 + kRow * static_cast<double>(rows), body, "ttr") +
         More("One bar per range of recovery times; the faults that took longest are listed in the fault table below.");
}

}  // namespace rackchaos::reports::html
