// JSON, Markdown, Prometheus and text renderers: valid syntax, the stored numbers, stable bytes.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reports/render.h"
#include "reports/store.h"
#include "tests/reports/json_check.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::JsonCheck;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

using t::Count;
using t::Has;
using t::Lines;

// The sample run written to a fresh file, rendered in `format`.
std::string RenderSample(Format format, const TempDir& dir, const std::string& file = "r.db") {
  auto store = ReportStore::Open(dir.File(file));
  REQUIRE(store.ok());
  int64_t run = t::WriteSampleRun(*store);
  auto text = Render(*store, run, format);
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  return *text;
}

// Checks the Prometheus text exposition format rules we rely on; returns the first violation.
std::string PromViolation(const std::string& text) {
  static const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN))");
  std::set<std::string> finished;
  std::string current;
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      if (!std::regex_match(name, kName)) return "bad name: " + line;
      if (line[2] == 'H') {
        if (finished.count(name)) return "family repeated: " + name;
        if (!current.empty()) finished.insert(current);
        current = name;
      } else if (name != current || !Has(line, " gauge")) {
        return "TYPE without HELP or not a gauge: " + line;
      }
    } else if (std::regex_match(line, m, kSample)) {
      if (m[1] != current) return "sample outside its family: " + line;
    } else {
      return "not a valid line: " + line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("reports.render: formats parse by name and unknown ones are refused with the list") {
  CHECK(*ParseFormat("json") == Format::kJson);
  CHECK(*ParseFormat("md") == Format::kMarkdown);
  CHECK(*ParseFormat("prom") == Format::kPrometheus);
  auto bad = ParseFormat("yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(Has(bad.status().message(), "json, markdown, junit, prometheus, html"));
}

TEST_CASE("reports.render: JSON is valid, keys in a fixed order, absent times null") {
  TempDir dir;
  std::string json = RenderSample(Format::kJson, dir);
  JsonCheck check(json);
  REQUIRE_MESSAGE(check.Valid(), "invalid JSON at byte " << check.error_at() << ":\n" << json);
  CHECK(check.top_keys() == std::vector<std::string>{"schema", "run", "events", "faults", "jobs",
                                                     "healer", "expectations", "verdict"});
  CHECK(Has(json, "\"seed\": \"42\""));
  CHECK(Has(json, "\"events\": 12"));
  CHECK(Has(json, "\"ttd_s\": 12.5"));
  CHECK(Has(json, "\"ttr_s\": null"));
  CHECK(Has(json, "\"recovered\": false"));
  CHECK(Has(json, "\"isolated\": [\n        \"r01.tray03\",\n        \"r01.tray05\"\n      ]"));
  CHECK(Has(json, "\"precision\": 0.5"));
  CHECK(Has(json, "\"actual\": null"));  // the failed gate's metric never had a value
  CHECK(Has(json, "\"expectations_failed\": 1"));
}

TEST_CASE("reports.render: JSON escapes quotes, backslashes and control characters") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  RunInfo info = t::SampleRunInfo();
  info.plan_name = "odd \"name\" \\ with\ttab\nand newline \x01";
  auto run = store->BeginRun(info);
  REQUIRE(run.ok());
  auto json = Render(*store, *run, Format::kJson);
  REQUIRE(json.ok());
  JsonCheck check(*json);
  CHECK_MESSAGE(check.Valid(), *json);
  CHECK(Has(*json, R"("odd \"name\" \\ with\ttab\nand newline \u0001")"));
}

TEST_CASE("reports.render: the same database renders the same bytes in every format but HTML") {
  TempDir dir;
  for (Format f : {Format::kText, Format::kJson, Format::kMarkdown, Format::kJunit, Format::kPrometheus}) {
    CAPTURE(FormatName(f));
    CHECK(RenderSample(f, dir, std::string("a_") + FormatName(f) + ".db") ==
          RenderSample(f, dir, std::string("b_") + FormatName(f) + ".db"));
  }
}

TEST_CASE("reports.render: Prometheus follows the exposition format and carries the metrics") {
  TempDir dir;
  std::string prom = RenderSample(Format::kPrometheus, dir);
  CHECK_MESSAGE(PromViolation(prom) == "", prom);
  CHECK(Has(prom, "# TYPE rackchaos_fault_time_to_detect_seconds gauge\n"));
  CHECK(Has(prom, "rackchaos_fault_time_to_detect_seconds{run=\"1\",fault=\"1\",kind=\"tray_pull\","
                  "target=\"r01.tray03\"} 12.5\n"));
  // The fault never recovered: no TTR sample at all, and recovered says 0.
  CHECK_FALSE(Has(prom, "rackchaos_fault_time_to_recover_seconds{"));
  CHECK(Has(prom, "rackchaos_fault_recovered{run=\"1\",fault=\"1\",kind=\"tray_pull\",target=\"r01.tray03\"} 0\n"));
  CHECK(Has(prom, "rackchaos_healer_precision_ratio{run=\"1\"} 0.5\n"));
  CHECK(Has(prom, "rackchaos_expectation_actual{run=\"1\",expectation=\"ttr.max < 5m\",metric=\"ttr.max\"} +Inf\n"));
}

TEST_CASE("reports.render: Prometheus escapes label values - the checker rejects what it must") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  RunMetrics m = t::SampleMetrics();
  m.faults[0].target = "weird \"target\" \\ with\nnewline";
  m.faults[0].time_to_recover = Duration::Seconds(90);
  REQUIRE(store->AddMetrics(*run, m).ok());
  auto prom = Render(*store, *run, Format::kPrometheus);
  REQUIRE(prom.ok());
  CHECK_MESSAGE(PromViolation(*prom) == "", *prom);
  CHECK(Has(*prom, R"(target="weird \"target\" \\ with\nnewline"} 90)"));
  // The checker itself: unescaped quotes, bad names and split families fail.
  CHECK(PromViolation("# HELP a x\n# TYPE a gauge\na{l=\"x\"y\"} 1\n") != "");
  CHECK(PromViolation("# HELP 1a x\n# TYPE 1a gauge\n1a 1\n") != "");
  CHECK(PromViolation("# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\n# HELP a x\n") != "");
  CHECK(PromViolation("# HELP a x\n# TYPE a gauge\nb 1\n") != "");
}

TEST_CASE("reports.render: Markdown tables have as many cells in every row as in their header") {
  TempDir dir;
  std::string md = RenderSample(Format::kMarkdown, dir);
  CHECK(Has(md, "# rackchaos run 1: tray-pull\n"));
  CHECK(Has(md, "| 1 | tray_pull | r01.tray03 | 60.0s | 12.5s | 20.0s | - | 4 | 68 | 1 | 1 | 1.23 | 10.0s | r01.tray03, r01.tray05 |"));
  CHECK(Has(md, "| **FAIL** | ttr.max < 5m | ttr.max < 5m: never (FAIL) |"));
  size_t header_pipes = 0;
  int tables = 0;
  for (const std::string& line : Lines(md)) {
    if (line.empty() || line[0] != '|') {
      header_pipes = 0;
      continue;
    }
    size_t pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (header_pipes == 0) {
      header_pipes = pipes;
      ++tables;
    }
    CHECK_MESSAGE(pipes == header_pipes, line);
  }
  CHECK(tables == 5);
}

TEST_CASE("reports.render: text is the summary followed by the stored expectations") {
  TempDir dir;
  std::string text = RenderSample(Format::kText, dir);
  CHECK(Has(text, "Run 1: tray-pull"));
  CHECK(Has(text, "\nExpectations\n  pass  ttd.max < 30s: 12.5s (pass)\n  FAIL  ttr.max < 5m: never (FAIL)\n"));
}

TEST_CASE("reports.render: an unknown run is kNotFound in every format") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  for (Format f : {Format::kText, Format::kJson, Format::kMarkdown, Format::kJunit, Format::kPrometheus,
                   Format::kHtml}) {
    CHECK(Render(*store, 7, f).status().code() == StatusCode::kNotFound);
  }
}


TEST_CASE("reports.html: self-contained, one bar per fault, detection and isolation, escaped text") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  RunInfo info = t::SampleRunInfo();
  info.plan_name = "<script>alert(1)</script>";
  auto run = store->BeginRun(info);
  REQUIRE(run.ok());
  REQUIRE(store->AddComponents(*run, t::SampleComponents()).ok());
  REQUIRE(store->AddJobs(*run, t::SampleJobs()).ok());
  REQUIRE(store->AppendEvents(*run, t::SampleEvents()).ok());
  REQUIRE(store->AddMetrics(*run, t::SampleMetrics()).ok());
  REQUIRE(store->AddGates(*run, t::SampleGates()).ok());
  auto html = Render(*store, *run, Format::kHtml);
  REQUIRE(html.ok());
  CHECK(html->rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(Count(*html, "<script") == 0);
  CHECK(Has(*html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  for (const char* external : {"src=", "href=", "<link", "@import", "url("}) CHECK(Count(*html, external) == 0);
  CHECK(Count(*html, "class=\"tl-bar tl-fault\"") == 1);
  CHECK(Count(*html, "class=\"tl-bar tl-detected\"") == 1);
  CHECK(Count(*html, "class=\"tl-bar tl-isolated\"") == 2);
  CHECK(Count(*html, "class=\"tl-bar tl-recovered\"") == 0);  // the sample fault never recovered
  CHECK(Count(*html, "class=\"fault-window\"") == 1);
  CHECK(Count(*html, "class=\"job-line\"") == 1);
  CHECK(Has(*html, "<td class=\"fail\">FAIL</td><td>ttr.max &lt; 5m</td>"));
  auto again = Render(*store, *run, Format::kHtml);
  CHECK(*again == *html);
}
