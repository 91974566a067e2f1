// Racks, a rack serial's history, qualification records, sweeps and compare.
#include <cmath>

#include "reports/escape.h"
#include "runner/serve/html.h"
#include "runner/serve/pages.h"
#include "runner/serve/url.h"

namespace rackchaos::serve {
namespace {

std::string RunLink(int db, int64_t run) {
  return Link(DbBase(db) + "/runs/" + std::to_string(run), std::to_string(run));
}

std::string QualificationTable(int db, const reports::QualificationDetail& q) {
  std::vector<std::vector<std::string>> rows;
  for (const reports::QualificationPlanRow& p : q.plans)
    rows.push_back(
        {Esc(p.stage), Esc(p.plan_path), StatusCell(p.verdict), p.run_id ? RunLink(db, *p.run_id) : "-", Esc(p.reason)});
  return "<h3>Qualification " + std::to_string(q.id) + " of " + Esc(q.rack) + ": " + StatusCell(q.verdict) + "</h3>" +
         "<p>suite " + Esc(q.suite) + ", " + Esc(q.started_wall) + " to " +
         Esc(q.ended_wall.empty() ? "-" : q.ended_wall) + (q.reason.empty() ? "" : "; " + Esc(q.reason)) + "</p>" +
         Table({"stage", "plan", "verdict", "run", "reason"}, rows);
}

}  // namespace

std::string RacksPage(int db, const std::vector<std::string>& serials) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& s : serials)
    rows.push_back(
        {Link(DbBase(db) + "/racks?serial=" + UrlEncode(s), s), Link(DbBase(db) + "/runs?rack=" + UrlEncode(s), "runs")});
  return Page("Racks", db,
              "<p>Rack serials of the stored clusters (at most 500).</p>" + Table({"serial", ""}, rows, {}, "racks"));
}

std::string RackPage(int db, const reports::RackPage& page) {
  std::string body = "<p>" + std::to_string(page.runs_total) + " run(s) touched this rack:";
  for (const auto& [status, n] : page.by_status) body += " " + StatusCell(status) + " " + std::to_string(n);
  body += ". " + Link(DbBase(db) + "/runs?rack=" + UrlEncode(page.serial), "all its runs") + "</p>";
  if (static_cast<int64_t>(page.runs.size()) < page.runs_total)
    body += "<p class=\"muted\">The chart and table show the newest " + std::to_string(page.runs.size()) + ".</p>";
  // The chart: the worst TTD, TTI and TTR of the faults under the rack, one point per run, oldest first.
  ChartSeries ttd{"TTD", "ttd", {}}, tti{"TTI", "tti", {}}, ttr{"TTR", "ttr", {}};
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> rows;
  for (const reports::RackRunPoint& r : page.runs) {
    ttd.y.push_back(r.ttd_max_s);
    tti.y.push_back(r.tti_max_s);
    ttr.y.push_back(r.ttr_max_s);
    titles.push_back("run " + std::to_string(r.run) + " (" + r.plan_name + ", " + r.status + ")");
  }
  body += "<h2>Worst time to detect, isolate and recover, per run</h2>" +
          LineChart({ttd, tti, ttr}, titles, "runs, oldest to newest");
  for (auto r = page.runs.rbegin(); r != page.runs.rend(); ++r)
    rows.push_back({RunLink(db, r->run), Esc(r->plan_name), Esc(r->started_wall), StatusCell(r->status),
                    std::to_string(r->faults), std::to_string(r->isolations), std::to_string(r->unrecovered),
                    Esc(Secs(r->ttd_max_s)), Esc(Secs(r->tti_max_s)), Esc(Secs(r->ttr_max_s))});
  body += "<h2>Runs, newest first</h2>" + Table({"run", "plan", "started", "verdict", "faults", "isolations",
                                                 "unrecovered", "worst TTD", "worst TTI", "worst TTR"},
                                                rows, {0, 4, 5, 6, 7, 8, 9}, "rack-runs");
  rows.clear();
  for (const reports::IsolatedPart& p : page.isolated)
    rows.push_back({Esc(p.name), Esc(p.serial), std::to_string(p.isolations), std::to_string(p.runs)});
  const std::string window = static_cast<int64_t>(page.runs.size()) < page.runs_total
                                 ? "<p class=\"muted\">Over the newest " + std::to_string(page.runs.size()) +
                                       " runs (rackchaos history --rack counts over all of them).</p>"
                                 : "";
  body += "<h2>Parts isolated under this rack</h2>" + window +
          Table({"part", "serial", "isolations", "runs"}, rows, {2, 3}, "isolated");
  rows.clear();
  for (const reports::RepeatOffender& o : page.lemons) {
    // The newest ten runs: a part isolated in every run of a 10,000-run history would be 10,000 links.
    std::string runs;
    for (size_t i = o.runs.size() > 10 ? o.runs.size() - 10 : 0; i < o.runs.size(); ++i)
      runs += (runs.empty() ? "" : ", ") + RunLink(db, o.runs[i]);
    if (o.runs.size() > 10) runs = "... " + runs;
    rows.push_back({Esc(o.name), Esc(o.serial), std::to_string(o.runs.size()), runs});
  }
  body +=
      "<h2>Lemons</h2><p class=\"muted\">Parts isolated as really faulty (a fault explains it) in several runs.</p>" +
      Table({"part", "serial", "runs", "newest"}, rows, {2}, "lemons");
  body += "<h2>Qualification</h2>";
  if (page.qualifications.empty()) body += "<p class=\"muted\">No qualification record for this serial.</p>";
  for (const reports::QualificationDetail& q : page.qualifications) body += QualificationTable(db, q);
  return Page("Rack " + page.serial, db, body);
}

std::string QualificationsPage(int db, const std::vector<reports::QualificationDetail>& records) {
  std::string body = records.empty() ? "<p class=\"muted\">No qualification records.</p>" : "";
  for (const reports::QualificationDetail& q : records)
    body += QualificationTable(db, q) + "<p>" +
            Link(DbBase(db) + "/racks?serial=" + UrlEncode(q.rack), "rack " + q.rack) + "</p>";
  return Page("Qualifications", db, body);
}

std::string SweepsPage(int db, const std::vector<reports::SweepListRow>& sweeps) {
  std::vector<std::vector<std::string>> rows;
  for (const reports::SweepListRow& s : sweeps)
    rows.push_back({Link(DbBase(db) + "/sweeps/" + UrlEncode(s.id), s.id), Esc(s.plan_name), std::to_string(s.runs),
                    std::to_string(s.points), std::to_string(s.not_passed),
                    RunLink(db, s.first_run) + " .. " + RunLink(db, s.last_run)});
  return Page("Sweeps", db,
              Table({"sweep", "plan", "runs", "grid points", "not passed", "runs"}, rows, {2, 3, 4}, "sweeps"));
}

std::string SweepPage(int db, const reports::SweepPage& page) {
  std::string body = "<p>Plan " + Esc(page.plan_name) + ", " + std::to_string(page.runs) + " run(s) at " +
                     std::to_string(page.points.size()) +
                     " grid point(s). Per run: the worst time to recover (a run "
                     "with a fault never recovered is left out), the worst time to detect, the lowest job ETTR and "
                     "the GPU-hours lost.</p>";
  std::vector<std::vector<std::string>> rows;
  for (const reports::SweepPointRow& p : page.points)
    for (const reports::SweepMetricStats& m : p.metrics) {
      const bool time = m.metric.rfind("tt", 0) == 0;
      auto show = [&](double v) { return m.n == 0 ? std::string("-") : time ? Secs(v) : reports::Num(v); };
      rows.push_back({Esc(p.point), std::to_string(p.runs), std::to_string(p.passed), Esc(m.metric),
                      std::to_string(m.n), Esc(show(m.mean)), Esc(show(m.p50)), Esc(show(m.p95)), Esc(show(m.max))});
    }
  body += Table({"point", "runs", "passed", "metric", "n", "mean", "p50", "p95", "max"}, rows, {1, 2, 4, 5, 6, 7, 8},
                "sweep-stats");
  for (size_t m = 0; !page.points.empty() && m < page.points.front().metrics.size(); ++m) {
    std::vector<std::string> labels;
    std::vector<std::vector<double>> values;
    for (const reports::SweepPointRow& p : page.points) {
      labels.push_back(p.point);
      values.push_back(p.metrics[m].values);
    }
    const std::string& name = page.points.front().metrics[m].metric;
    body += "<h2>" + Esc(name) + "</h2>" + StripPlot(labels, values, name, name.rfind("tt", 0) == 0);
  }
  return Page("Sweep " + page.id, db, body);
}

std::string ComparePage(int db, int db_b, const std::optional<reports::Comparison>& comparison,
                        const std::string& a_label, const std::string& b_label) {
  std::string body = "<form class=\"filters\" method=\"get\" action=\"" + Esc(DbBase(db) + "/compare") +
                     "\"><label>run A <input name=\"a\" size=\"8\" value=\"" +
                     Esc(comparison ? std::to_string(comparison->run_a) : "") +
                     "\"></label><label>run B <input name=\"b\" size=\"8\" value=\"" +
                     Esc(comparison ? std::to_string(comparison->run_b) : "") +
                     "\"></label><label>B's database <input name=\"db_b\" size=\"3\" value=\"" + std::to_string(db_b) +
                     "\"></label><button type=\"submit\">compare</button></form>";
  if (!comparison) return Page("Compare two runs", db, body);
  body += "<p>A: " + Esc(a_label) + "<br>B: " + Esc(b_label) + "</p>";
  std::vector<std::vector<std::string>> rows;
  auto show = [](const reports::MetricValue& v) {
    if (std::isinf(v.value)) return std::string("never");
    return v.is_time ? Secs(v.value) : reports::Num(v.value);
  };
  for (const reports::MetricChange& c : comparison->changes) {
    const char* verdict = c.verdict > 0 ? "better" : c.verdict < 0 ? "worse" : "same";
    rows.push_back({Esc(c.a.name), Esc(show(c.a)), Esc(show(c.b)),
                    "<span class=\"st-" +
                        std::string(c.verdict < 0   ? "failed"
                                    : c.verdict > 0 ? "passed"
                                                    : "") +
                        "\">" + verdict + "</span>"});
  }
  body += Table({"metric", "run A", "run B", "B against A"}, rows, {1, 2}, "compare");
  return Page("Compare run " + std::to_string(comparison->run_a) + " and run " + std::to_string(comparison->run_b), db,
              body);
}

}  // namespace rackchaos::serve
