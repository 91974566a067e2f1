// `rackchaos serve`: the request handler behind the HTTP server: routes a request to a page, a JSON
// document, /metrics or the live page's script, over one or more report databases.
//
// Routes (docs/serve.md): /, /db/N/runs, /db/N/runs/ID, /db/N/runs/ID/live, /db/N/racks,
// /db/N/racks?serial=SERIAL (or /db/N/racks/SERIAL), /db/N/sweeps, /db/N/sweeps/ID, /db/N/qualifications,
// /db/N/compare, and the same under /api/ as JSON (/api/dbs, /api/db/N/...; /api/db/N/runs/ID/events long-polls with
// wait=S), /metrics, /healthz, /static/live.js.
//
// Read-only: only GET and HEAD reach it, every database is opened read-only (runner/serve/report_db.h).
// Answers: 400 for a malformed target or parameter, 404 for an unknown page, run, sweep or database,
// 503 with a page naming the file for a locked database or one that needs a migration, 500 for a file
// that is not a report. HTML pages carry a Content-Security-Policy that allows only serve's own script.
//
// Threading: Handle is thread-safe (the server calls it from several threads at once).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reports/live_metrics.h"
#include "runner/serve/http_server.h"
#include "runner/serve/report_db.h"
#include "runner/serve/url.h"

namespace rackchaos::serve {

class ServeApp {
 public:
  // `metrics` (not owned, outlives the app) gets serve's request counts and, on each /metrics, the
  // databases' run counts and their ledgers' open entries.
  ServeApp(const std::vector<std::string>& db_paths, reports::LiveMetrics& metrics);

  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse Route(const HttpRequest& request, const Target& target, std::string& route);
  HttpResponse Index(bool json);
  HttpResponse Database(ReportDb& db, const HttpRequest& request, const Target& target, bool json, std::string& route);
  HttpResponse Runs(ReportDb& db, const ReportDb::Lease& lease, const Target& target, bool json);
  HttpResponse Run(ReportDb& db, const ReportDb::Lease& lease, const HttpRequest& request, const Target& target,
                   bool json, std::string& route);
  HttpResponse Compare(ReportDb& db, const ReportDb::Lease& lease, const Target& target, bool json);
  HttpResponse Metrics();
  ReportDb* DbAt(const std::string& index);

  std::vector<std::unique_ptr<ReportDb>> dbs_;
  reports::LiveMetrics& metrics_;
};

// An error answer: an HTML page or a JSON document with the status and the message.
HttpResponse ErrorResponse(int status, const std::string& message, bool json, int db = -1);

}  // namespace rackchaos::serve
