#include "runner/serve/app.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "reports/compare.h"
#include "reports/render.h"
#include "reports/web_queries.h"
#include "runner/serve/api.h"
#include "runner/serve/ledger_peek.h"
#include "runner/serve/pages.h"
#include "runner/site/ledger.h"

namespace rackchaos::serve {
namespace {

// Pages may use inline styles (the run report's) and serve's own script, nothing else: a string a
// database smuggled past the escaping still could not run or load anything.
constexpr const char* kCsp =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// A long poll of a running run's events waits at most this long for a new one.
constexpr int kMaxWaitSeconds = 10;

HttpResponse Html(std::string body) {
  HttpResponse r;
  r.body = std::move(body);
  r.headers.emplace_back("Content-Security-Policy", kCsp);
  return r;
}

HttpResponse Json(std::string body) {
  HttpResponse r;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

// The HTTP status of a failed query: a bad parameter is the client's, a missing run 404, a lock 503.
int QueryStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

HttpResponse Failed(const Status& s, bool json, int db) { return ErrorResponse(QueryStatus(s), s.message(), json, db); }

Result<int> IntParam(const Target& t, const std::string& key, int fallback, int lo, int hi) {
  const std::string text = t.Param(key);
  if (text.empty()) return fallback;
  RC_ASSIGN_OR_RETURN(int64_t v, ParseId(text, key));
  if (v < lo || v > hi) return Status::Invalid(key + " must be " + std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(v);
}

// Dates and times in filters: digits and the separators of ISO 8601, nothing else.
Status CheckDate(const std::string& text, const std::string& key) {
  if (text.find_first_not_of("0123456789-:TZ") != std::string::npos || text.size() > 20)
    return Status::Invalid(key + " '" + text + "' is not an ISO date or time (2024-05-01, 2024-05-01T12:00:00Z)");
  return Status::Ok();
}

}  // namespace

HttpResponse ErrorResponse(int status, const std::string& message, bool json, int db) {
  HttpResponse r =
      json ? Json(ErrorJson(status, message)) : Html(ErrorPage(status, "HTTP " + std::to_string(status), message, db));
  r.status = status;
  return r;
}

ServeApp::ServeApp(const std::vector<std::string>& db_paths, reports::LiveMetrics& metrics) : metrics_(metrics) {
  for (size_t i = 0; i < db_paths.size(); ++i)
    dbs_.push_back(std::make_unique<ReportDb>(static_cast<int>(i), db_paths[i]));
}

HttpResponse ServeApp::Handle(const HttpRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  std::string route = "error";
  HttpResponse r;
  auto target = ParseTarget(request.target);
  if (!target.ok())
    r = ErrorResponse(400, target.status().message(), request.target.rfind("/api/", 0) == 0);
  else
    r = Route(request, *target, route);
  if (request.attempt == 0) {  // a long poll counts once
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    metrics_.ObserveRequest(route, r.status, took.count());
  }
  return r;
}

HttpResponse ServeApp::Route(const HttpRequest& request, const Target& target, std::string& route) {
  const std::vector<std::string>& p = target.path;
  if (p.empty()) return route = "index", Index(false);
  if (p.size() == 1 && p[0] == "metrics") return route = "metrics", Metrics();
  if (p.size() == 1 && p[0] == "healthz") {
    route = "healthz";
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok\n";
    return r;
  }
  if (p.size() == 2 && p[0] == "static" && p[1] == "live.js") {
    route = "static";
    HttpResponse r;
    r.content_type = "text/javascript; charset=utf-8";
    r.body = LiveScript();
    return r;
  }
  const bool json = p[0] == "api";
  const size_t at = json ? 1 : 0;
  if (json && p.size() == 2 && p[1] == "dbs") return route = "api_dbs", Index(true);
  if (p.size() >= at + 2 && p[at] == "db") {
    ReportDb* db = DbAt(p[at + 1]);
    if (!db)
      return ErrorResponse(404, "no database '" + p[at + 1] + "'; this server reads " + std::to_string(dbs_.size()),
                           json);
    return Database(*db, request, target, json, route);
  }
  return ErrorResponse(404, "no page " + request.target.substr(0, 200), json);
}

ReportDb* ServeApp::DbAt(const std::string& index) {
  auto n = ParseId(index, "database");
  if (!n.ok() || *n >= static_cast<int64_t>(dbs_.size())) return nullptr;
  return dbs_[static_cast<size_t>(*n)].get();
}

HttpResponse ServeApp::Index(bool json) {
  std::vector<DbCard> cards;
  for (const auto& db : dbs_) {
    DbCard card{db->index(), db->path(), std::nullopt, ""};
    auto lease = db->Borrow();
    auto overview = lease.ok() ? reports::ReadOverview(lease->store()) : Result<reports::DbOverview>(lease.status());
    if (overview.ok())
      card.overview = *overview;
    else
      card.error = overview.status().message();
    cards.push_back(std::move(card));
  }
  return json ? Json(DbsJson(cards)) : Html(IndexPage(cards));
}

HttpResponse ServeApp::Database(ReportDb& db, const HttpRequest& request, const Target& target, bool json,
                                std::string& route) {
  const size_t at = json ? 3 : 2;
  const std::vector<std::string> sub(target.path.begin() + static_cast<long>(at), target.path.end());
  const std::string prefix = json ? "api_" : "";
  auto lease = db.Borrow();
  if (!lease.ok()) {
    route = prefix + "database";
    return ErrorResponse(
        HttpStatusFor(lease.status()),
        "database " + std::to_string(db.index()) + " (" + db.path() + ") cannot be read: " + lease.status().message(),
        json, db.index());
  }
  const reports::ReportStore& store = lease->store();
  const int n = db.index();
  if (sub.empty() || (sub.size() == 1 && sub[0] == "runs"))
    return route = prefix + "runs", Runs(db, *lease, target, json);
  if (sub[0] == "runs" && sub.size() <= 3) return Run(db, *lease, request, target, json, route);
  // A rack page is /racks?serial=S (any serial, '/' included) or /racks/S; /racks alone lists them.
  const bool rack_page = sub[0] == "racks" && (sub.size() == 2 || (sub.size() == 1 && !target.Param("serial").empty()));
  if (sub[0] == "racks" && sub.size() == 1 && !rack_page) {
    route = prefix + "racks";
    auto serials = reports::ListRackSerials(store);
    if (!serials.ok()) return Failed(serials.status(), json, n);
    return json ? Json(RacksJson(*serials)) : Html(RacksPage(n, *serials));
  }
  if (rack_page) {
    route = prefix + "rack";
    auto limit = IntParam(target, "limit", 200, 1, 2000);
    if (!limit.ok()) return Failed(limit.status(), json, n);
    auto page = reports::ReadRackPage(store, sub.size() == 2 ? sub[1] : target.Param("serial"), *limit);
    if (!page.ok()) return Failed(page.status(), json, n);
    return json ? Json(RackJson(*page)) : Html(RackPage(n, *page));
  }
  if (sub[0] == "sweeps" && sub.size() == 1) {
    route = prefix + "sweeps";
    auto sweeps = reports::ListSweeps(store);
    if (!sweeps.ok()) return Failed(sweeps.status(), json, n);
    return json ? Json(SweepsJson(*sweeps)) : Html(SweepsPage(n, *sweeps));
  }
  if (sub[0] == "sweeps" && sub.size() == 2) {
    route = prefix + "sweep";
    auto page = reports::ReadSweepPage(store, sub[1]);
    if (!page.ok()) return Failed(page.status(), json, n);
    return json ? Json(SweepJson(*page)) : Html(SweepPage(n, *page));
  }
  if (sub[0] == "qualifications" && sub.size() == 1) {
    route = prefix + "qualifications";
    auto records = reports::ReadRecentQualifications(store, target.Param("rack"));
    if (!records.ok()) return Failed(records.status(), json, n);
    return json ? Json(QualificationsJson(*records)) : Html(QualificationsPage(n, *records));
  }
  if (sub[0] == "compare" && sub.size() == 1) return route = prefix + "compare", Compare(db, *lease, target, json);
  return ErrorResponse(404, "no page " + request.target.substr(0, 200), json, n);
}

HttpResponse ServeApp::Runs(ReportDb& db, const ReportDb::Lease& lease, const Target& target, bool json) {
  reports::RunFilter f;
  f.plan = target.Param("plan");
  f.rack = target.Param("rack");
  f.status = target.Param("status");
  f.backend = target.Param("backend");
  f.since = target.Param("since");
  f.until = target.Param("until");
  Status checked = CheckDate(f.since, "since");
  if (checked.ok()) checked = CheckDate(f.until, "until");
  if (!checked.ok()) return Failed(checked, json, db.index());
  auto limit = IntParam(target, "limit", 50, 1, 500);
  if (!limit.ok()) return Failed(limit.status(), json, db.index());
  f.limit = *limit;
  if (!target.Param("before").empty()) {
    auto before = ParseId(target.Param("before"), "before");
    if (!before.ok()) return Failed(before.status(), json, db.index());
    f.before = *before;
  }
  auto page = reports::ListRunsPage(lease.store(), f);
  if (!page.ok()) return Failed(page.status(), json, db.index());
  if (json) return Json(RunsJson(*page));
  auto plans = reports::ListPlanNames(lease.store());
  if (!plans.ok()) return Failed(plans.status(), json, db.index());
  return Html(RunsPage(db.index(), db.path(), f, *page, *plans));
}

HttpResponse ServeApp::Run(ReportDb& db, const ReportDb::Lease& lease, const HttpRequest& request, const Target& target,
                           bool json, std::string& route) {
  const size_t at = json ? 3 : 2;
  const std::vector<std::string> sub(target.path.begin() + static_cast<long>(at), target.path.end());
  const int n = db.index();
  auto id = ParseId(sub[1], "run");
  if (!id.ok()) return Failed(id.status(), json, n);
  const reports::ReportStore& store = lease.store();
  auto run = store.ReadRun(*id);
  if (!run.ok()) return Failed(run.status(), json, n);
  const std::string view = sub.size() == 3 ? sub[2] : "";
  if (json && view == "events") {
    route = "api_events";
    auto after = target.Param("after").empty() ? Result<int64_t>(0) : ParseId(target.Param("after"), "after");
    auto limit = IntParam(target, "limit", 1000, 1, 5000);
    auto wait = IntParam(target, "wait", 0, 0, kMaxWaitSeconds);
    if (!after.ok() || !limit.ok() || !wait.ok())
      return Failed(!after.ok() ? after.status() : !limit.ok() ? limit.status() : wait.status(), json, n);
    auto events = reports::ReadEventsAfter(store, *id, *after, *limit);
    if (!events.ok()) return Failed(events.status(), json, n);
    HttpResponse r = Json(EventsJson(*id, run->status, *after, *events));
    if (events->empty() && run->status == "running" && *wait > 0) {  // nothing new yet: ask the server to wait
      r.poll_again = std::chrono::milliseconds(250);
      r.poll_deadline = std::chrono::seconds(*wait);
    }
    return r;
  }
  if (json && view.empty()) {
    route = "api_run";
    auto doc = reports::Render(store, *id, reports::Format::kJson);
    if (!doc.ok()) return Failed(doc.status(), json, n);
    return Json(*doc);
  }
  if (!json && (view == "live" || (view.empty() && run->status == "running"))) {
    route = "live";
    // The newest 500 events (seq is 1-based and dense); live.js asks for the rest as they come.
    auto count = store.CountEvents(*id);
    if (!count.ok()) return Failed(count.status(), json, n);
    auto events = reports::ReadEventsAfter(store, *id, std::max<int64_t>(0, *count - 500), 500);
    if (!events.ok()) return Failed(events.status(), json, n);
    return Html(LiveRunPage(n, *run, *events));
  }
  if (!json && view.empty()) {
    route = "run";
    auto html = reports::RenderHtml(store, *id);
    if (!html.ok()) return Failed(html.status(), json, n);
    return Html(RunReportPage(n, *id, *html));
  }
  return ErrorResponse(404, "no page " + request.target.substr(0, 200), json, n);
}

HttpResponse ServeApp::Compare(ReportDb& db, const ReportDb::Lease& lease, const Target& target, bool json) {
  const int n = db.index();
  auto db_b = IntParam(target, "db_b", n, 0, static_cast<int>(dbs_.size()) - 1);
  if (!db_b.ok()) return Failed(db_b.status(), json, n);
  if (target.Param("a").empty() && target.Param("b").empty()) {
    if (json) return ErrorResponse(400, "compare needs a and b (run ids)", json, n);
    return Html(ComparePage(n, *db_b, std::nullopt, "", ""));
  }
  auto a = ParseId(target.Param("a"), "run a");
  auto b = ParseId(target.Param("b"), "run b");
  if (!a.ok() || !b.ok()) return Failed(!a.ok() ? a.status() : b.status(), json, n);
  std::optional<ReportDb::Lease> other;  // run B's database, when it is another one
  if (*db_b != n) {
    auto borrowed = dbs_[static_cast<size_t>(*db_b)]->Borrow();
    if (!borrowed.ok()) return Failed(borrowed.status(), json, n);
    other.emplace(std::move(*borrowed));
  }
  const reports::ReportStore& store_b = other ? other->store() : lease.store();
  auto va = reports::RunMetricValues(lease.store(), *a);
  if (!va.ok()) return Failed(va.status(), json, n);
  auto vb = reports::RunMetricValues(store_b, *b);
  if (!vb.ok()) return Failed(vb.status(), json, n);
  const reports::Comparison c = reports::CompareMetrics(*a, *va, *b, *vb, {});
  if (json) return Json(CompareJson(c));
  auto label = [](const reports::ReportStore& s, int64_t run) {
    auto row = s.ReadRun(run);
    return row.ok() ? "run " + std::to_string(run) + " of " + s.path() + ": " + row->info.plan_name + ", seed " +
                          std::to_string(row->info.seed) + ", " + row->status
                    : row.status().message();
  };
  return Html(ComparePage(n, *db_b, c, label(lease.store(), *a), label(store_b, *b)));
}

HttpResponse ServeApp::Metrics() {
  // The databases' run counts and their ledgers, read now: a scrape sees the files as they are.
  for (const auto& db : dbs_) {
    const std::string index = std::to_string(db->index());
    auto lease = db->Borrow();
    auto overview = lease.ok() ? reports::ReadOverview(lease->store()) : Result<reports::DbOverview>(lease.status());
    if (overview.ok())
      for (const char* status : {"running", "passed", "failed", "aborted", "error", "interrupted"}) {
        auto it = overview->by_status.find(status);
        metrics_.SetStoredRuns(index, status, it == overview->by_status.end() ? 0 : static_cast<double>(it->second));
      }
    auto racks = lease.ok() ? reports::ReadRackRecoveryTotals(lease->store())
                            : Result<std::vector<reports::RackRecoveryTotal>>(lease.status());
    if (racks.ok())
      for (const reports::RackRecoveryTotal& r : *racks)
        metrics_.SetStoredRackRecoveries(index, r.rack, r.recoveries, r.seconds);
    auto ledger = PeekLedger(runner::DefaultLedgerPath(db->path()));
    if (ledger.ok()) metrics_.SetLedger(index, ledger->open, ledger->oldest_opened_unix);
  }
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metrics_.Render();
  return r;
}

}  // namespace rackchaos::serve
