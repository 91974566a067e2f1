// The index, the runs list, a run's page (stored report or live events) and the error page.
#include <cstdio>

#include "reports/escape.h"
#include "runner/serve/html.h"
#include "runner/serve/pages.h"
#include "runner/serve/url.h"

namespace rackchaos::serve {
namespace {


std::string Option(const std::string& value, const std::string& chosen, const std::string& text) {
  return "<option value=\"" + Esc(value) + "\"" + (value == chosen ? " selected" : "") + ">" + Esc(text) + "</option>";
}

std::string Select(const std::string& name, const std::vector<std::string>& values, const std::string& chosen) {
  std::string out = "<label>" + Esc(name) + " <select name=\"" + Esc(name) + "\">" + Option("", chosen, "any");
  for (const std::string& v : values) out += Option(v, chosen, v);
  return out + "</select></label>";
}

std::string Input(const std::string& name, const std::string& value, const std::string& placeholder) {
  return "<label>" + Esc(name) + " <input name=\"" + Esc(name) + "\" value=\"" + Esc(value) + "\" placeholder=\"" +
         Esc(placeholder) + "\" size=\"14\"></label>";
}

// The query string of a filter (paging keeps the filter).
std::string Query(const reports::RunFilter& f, int64_t before) {
  std::string q;
  auto add = [&](const char* key, const std::string& v) {
    if (!v.empty()) q += std::string(q.empty() ? "?" : "&") + key + "=" + UrlEncode(v);
  };
  add("plan", f.plan);
  add("rack", f.rack);
  add("status", f.status);
  add("backend", f.backend);
  add("since", f.since);
  add("until", f.until);
  if (before > 0) add("before", std::to_string(before));
  if (f.limit != 50) add("limit", std::to_string(f.limit));
  return q;
}

}  // namespace

std::string IndexPage(const std::vector<DbCard>& dbs) {
  std::vector<std::vector<std::string>> rows;
  for (const DbCard& d : dbs) {
    const std::string base = DbBase(d.index);
    if (!d.overview) {
      rows.push_back(
          {std::to_string(d.index), Esc(d.path), "<span class=\"st-error\">" + Esc(d.error) + "</span>", "", "", ""});
      continue;
    }
    std::string statuses;
    for (const auto& [status, n] : d.overview->by_status)
      statuses += StatusCell(status) + " " + std::to_string(n) + " ";
    rows.push_back({std::to_string(d.index), Link(base + "/runs", d.path),
                    std::to_string(d.overview->runs) + " runs: " + statuses,
                    Link(base + "/sweeps", std::to_string(d.overview->sweeps) + " sweeps"),
                    Link(base + "/qualifications", std::to_string(d.overview->qualifications) + " qualifications"),
                    Link(base + "/racks", "racks")});
  }
  return Page("rackchaos serve", -1,
              "<p>Read-only view of " + std::to_string(dbs.size()) + " report database(s). JSON under " +
                  Link("/api/dbs", "/api/") + "; live metrics at " + Link("/metrics", "/metrics") + ".</p>" +
                  Table({"#", "database", "runs", "sweeps", "qualifications", "racks"}, rows));
}

std::string ErrorPage(int status, const std::string& title, const std::string& message, int db) {
  return Page(
      title, db,
      "<div class=\"err\"><p>" + Esc(message) + "</p><p class=\"muted\">HTTP " + std::to_string(status) + "</p></div>");
}

std::string RunsPage(int db, const std::string& path, const reports::RunFilter& filter,
                     const reports::RunListPage& page, const std::vector<std::string>& plans) {
  const std::string base = DbBase(db);
  std::string body = "<p class=\"muted\">" + Esc(path) + "</p>";
  body += "<form class=\"filters\" method=\"get\" action=\"" + Esc(base + "/runs") + "\">" +
          Select("plan", plans, filter.plan) + Input("rack", filter.rack, "rack serial") +
          Select("status", {"running", "passed", "failed", "aborted", "error", "interrupted"}, filter.status) +
          Select("backend", {"sim", "ssh"}, filter.backend) + Input("since", filter.since, "2024-05-01") +
          Input("until", filter.until, "2024-05-31") + "<button type=\"submit\">filter</button> " +
          Link(base + "/runs", "clear") + "</form>";
  body += "<p>" + std::to_string(page.matching) + " run(s) match; newest first.</p>";
  std::vector<std::vector<std::string>> rows;
  for (const reports::RunListRow& r : page.runs) {
    rows.push_back({Link(base + "/runs/" + std::to_string(r.id), std::to_string(r.id)), Esc(r.plan_name),
                    StatusCell(r.status), Esc(r.backend), Esc(r.started_wall), Esc(r.ended_wall),
                    std::to_string(r.seed), std::to_string(r.faults), std::to_string(r.unrecovered),
                    Esc(Secs(r.ttr_max_s)), Esc(r.host), Esc(r.failed_reason)});
  }
  body += Table({"run", "plan", "status", "backend", "started", "ended", "seed", "faults", "unrecovered", "worst TTR",
                 "host", "reason"},
                rows, {0, 6, 7, 8, 9}, "runs");
  if (page.next_before) body += "<p>" + Link(base + "/runs" + Query(filter, *page.next_before), "older runs") + "</p>";
  return Page("Runs", db, body);
}

std::string RunReportPage(int db, int64_t run, const std::string& report_html) {
  const std::string base = DbBase(db);
  const std::string nav = "<nav style=\"background:#263238;padding:8px 24px;margin:-24px -24px 16px\">" +
                          Link("/", "rackchaos") + " " + Link(base + "/runs", "runs") + " " +
                          Link(base + "/runs/" + std::to_string(run) + "/live", "events") + " " +
                          Link("/api/db/" + std::to_string(db) + "/runs/" + std::to_string(run), "JSON") + "</nav>\n";
  std::string out = report_html;
  const size_t body = out.find("<body>");
  if (body != std::string::npos) out.insert(body + 6, "\n" + nav);
  return out;
}

std::string LiveRunPage(int db, const reports::RunRow& run, const std::vector<reports::EventLogRow>& events) {
  const std::string id = std::to_string(run.id);
  std::string body = Table({"plan", "status", "backend", "seed", "started", "host"},
                           {{Esc(run.info.plan_name), StatusCell(run.status), Esc(run.info.backend),
                             std::to_string(run.info.seed), Esc(run.info.started_wall), Esc(run.info.host)}});
  body += "<p id=\"live-status\">" +
          Esc(run.status == "running" ? "running; new events appear as they are stored" : "run " + run.status) + "</p>";
  if (run.status != "running") body += "<p>" + Link(DbBase(db) + "/runs/" + id, "the run's report") + "</p>";
  const int64_t after = events.empty() ? 0 : events.back().seq;
  std::vector<std::vector<std::string>> rows;
  for (const reports::EventLogRow& e : events)
    rows.push_back({std::to_string(e.seq), reports::Fixed(e.t_s, 1), Esc(e.type), Esc(e.component), Esc(e.job),
                    e.fault ? std::to_string(*e.fault) : "", Esc(e.detail)});
  std::string table = Table({"seq", "t (s)", "type", "component", "job", "fault", "detail"}, rows, {0, 1, 5}, "events");
  // The script reads where to poll from the table's attributes (numbers and a path serve built).
  table.replace(0, std::string("<table id=\"events\"").size(),
                "<table id=\"events\" data-api=\"/api/db/" + std::to_string(db) + "/runs/" + id +
                    "/events\" data-after=\"" + std::to_string(after) + "\" data-status=\"" + Esc(run.status) + "\"");
  return Page("Run " + id + ": events", db, body + table, true);
}

const char* LiveScript() {
  return R"js(// rackchaos serve: appends a run's new events to the page as they are stored (no reload, no framework).
(function () {
  'use strict';
  var table = document.getElementById('events');
  if (!table) return;
  var api = table.getAttribute('data-api');
  var after = Number(table.getAttribute('data-after')) || 0;
  var status = document.getElementById('live-status');
  var body = table.tBodies[0];
  function cell(row, text, num) {
    var td = row.insertCell(-1);
    td.textContent = text;  // text, never HTML: event details come from the run
    if (num) td.className = 'num';
  }
  function poll() {
    fetch(api + '?after=' + after + '&wait=5', {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (data) {
      data.events.forEach(function (e) {
        var row = body.insertRow(-1);
        row.className = 'new';
        cell(row, String(e.seq), true);
        cell(row, e.t_s.toFixed(1), true);
        cell(row, e.type);
        cell(row, e.component);
        cell(row, e.job);
        cell(row, e.fault === null ? '' : String(e.fault), true);
        cell(row, e.detail);
        after = e.seq;
      });
      if (data.status === 'running') {
        status.textContent = 'running; ' + after + ' events so far';
      } else {
        status.textContent = 'run ' + data.status + ' after ' + after + ' events; reload for its report';
      }
      if (data.status === 'running' || data.events.length > 0) setTimeout(poll, 1000);
    }).catch(function (err) {
      status.textContent = 'lost contact with the server (' + err.message + '); retrying';
      setTimeout(poll, 5000);
    });
  }
  poll();
})();
)js";
}

}  // namespace rackchaos::serve
