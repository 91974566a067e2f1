// Reports of large runs (issue 27): a month of chaos on a fleet once gave a 24 MB HTML report, a
// timeline cut at 200 rows without a word, a time-to-recover chart 894,056 px tall and an 8 MB text
// summary. Here a hand-built run of 5,000 faults on 500 racks, one component detected 3,000 times,
// and 60 jobs, rendered in every bounded format; and the HTML report's sections on the sample run.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "reports/escape.h"
#include "reports/render.h"
#include "reports/store.h"
#include "reports/summary.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

using t::Count;
using t::Has;

constexpr int kRacks = 500, kFaults = 5000, kJobs = 60, kNoisyDetections = 3000;

std::string RackName(int r) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "r%03d", r + 1);
  return buf;
}

// Racks with one tray and one GPU each; fault i on the GPU of rack i % kRacks, kinds in turn, every
// tenth never recovering. GPU 0 is detected kNoisyDetections times.
int64_t WriteLargeRun(ReportStore& store) {
  auto run = store.BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  std::vector<ComponentRow> components;
  for (int r = 0; r < kRacks; ++r) {
    const auto base = static_cast<ComponentId>(3 * r);
    components.push_back({base, RackName(r), "rack", kNoComponent, "RK-" + std::to_string(r)});
    components.push_back({base + 1, RackName(r) + ".tray01", "compute_tray", base, ""});
    components.push_back({base + 2, RackName(r) + ".tray01.gpu0", "gpu", base + 1, ""});
  }
  REQUIRE(store.AddComponents(*run, components).ok());
  std::vector<JobRow> jobs;
  for (int j = 0; j < kJobs; ++j) jobs.push_back({static_cast<JobId>(j), "job-" + std::to_string(j), 8, 1.0});
  REQUIRE(store.AddJobs(*run, jobs).ok());
  const char* kinds[] = {"gpu_fail", "link_down", "tray_pull", "process_crash"};
  std::vector<Event> events;
  RunMetrics m;
  for (int i = 0; i < kFaults; ++i) {
    const auto gpu = static_cast<ComponentId>(3 * (i % kRacks) + 2);
    const Time at = Duration::Minutes(i * 8);
    const auto id = static_cast<FaultId>(i + 1);
    events.push_back({at, FaultInjected{id, kinds[i % 4], gpu, -1, components[gpu].name, ""}});
    events.push_back({at + Duration::Seconds(5), Detected{static_cast<DetectionId>(i + 1), "xid", gpu, "Xid 79"}});
    events.push_back({at + Duration::Seconds(9), Isolated{gpu, "gpu", {static_cast<DetectionId>(i + 1)}, "xid"}});
    events.push_back({at + Duration::Minutes(30), FaultReverted{id, "repaired"}});
    FaultMetrics f;
    f.fault = id;
    f.kind = kinds[i % 4];
    f.target = components[gpu].name;
    f.injected = at;
    f.reverted = at + Duration::Minutes(30);
    f.time_to_detect = Duration::Seconds(5);
    f.time_to_isolate = Duration::Seconds(9);
    if (i % 10 != 0) f.time_to_recover = Duration::Seconds(60 + i % 600);
    f.gpus_direct = 1;
    f.jobs_touched = 1;
    f.gpu_hours_lost = 0.5;
    f.isolated = {components[gpu].name};
    m.faults.push_back(f);
    m.missed_faults.push_back("#" + std::to_string(id) + " " + f.kind);
    m.false_isolations.push_back(components[gpu].name + " at " + FormatDuration(at));
  }
  for (int d = 0; d < kNoisyDetections; ++d)
    events.push_back({Duration::Seconds(d * 7), Detected{static_cast<DetectionId>(100000 + d), "thermal", 2, "hot"}});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  for (int j = 0; j < kJobs; ++j) {
    events.push_back({Duration::Minutes(kFaults * 8), JobChanged{static_cast<JobId>(j), JobState::kRunning, 1, 1, 1, 8,
                                                                 {}, kNoFault, "", {1}}});
    m.jobs.push_back({static_cast<JobId>(j), "job-" + std::to_string(j), 8, Duration::Hours(600), Duration::Hours(500),
                      0.5 + j / 200.0, 0.5, 1, 100});
  }
  REQUIRE(store.AppendEvents(*run, events).ok());
  REQUIRE(store.AddMetrics(*run, m).ok());
  REQUIRE(store.FinishRun(*run, "passed", 0, "2025-01-02T03:14:05Z", "").ok());
  return *run;
}

std::string RenderOrFail(const ReportStore& store, int64_t run, Format f) {
  auto text = Render(store, run, f);
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  return *text;
}

// The largest height="N" of the page's SVG charts.
int TallestChart(const std::string& html) {
  static const std::regex kHeight("<svg[^>]* height=\"([0-9]+)\"");
  int tallest = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kHeight); it != std::sregex_iterator(); ++it)
    tallest = std::max(tallest, std::stoi((*it)[1]));
  return tallest;
}

}  // namespace

TEST_CASE("reports.scale: 5,000 faults give an HTML report of bounded size that says what it cut") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  const int64_t run = WriteLargeRun(*store);
  const std::string html = RenderOrFail(*store, run, Format::kHtml);
  CAPTURE(html.size());
  CHECK(html.size() < 400 * 1000);
  CHECK(TallestChart(html) < 2000);  // one TTR bar per fault was 110,020 px
  CHECK(Has(html, "<p class=\"cut\">5,000 faults on 500 components"));
  CHECK(Has(html, "5,000 faults: the 100 worst are listed"));
  CHECK(Count(html, "<tr><td class=\"num\">") >= 100);  // the listed faults, jobs and group rows
  CHECK(Has(html, "<table class=\"by-kind\">"));
  CHECK(Has(html, "<table class=\"by-rack\">"));
  CHECK(Has(html, "470 more racks with 4,700 faults are not listed (the 30 with the most faults are)."));
  // The timeline: 50 rows, and what it leaves out said under it.
  CHECK(Has(html, "450 more components with a fault, a detection or an isolation are not drawn (500 in all)"));
  // 3,000 detections of one GPU merge into ticks one pixel apart at most, each saying how many it holds.
  CHECK(Count(html, "class=\"tl-bar tl-detected\"") < 1000);
  CHECK(Has(html, " detections from "));
  // The time to recover is a histogram; 10% never recovered.
  CHECK(Has(html, "Time to recover (5,000 faults by how long they took)"));
  CHECK(Has(html, "500 (10.0%)"));
  // 60 jobs: the 50 with the lowest ETTR listed, 10 job lines drawn, the rest said.
  CHECK(Has(html, "60 jobs: the 50 with the lowest ETTR are listed."));
  CHECK(Count(html, "class=\"job-line\"") == 10);
  CHECK(Has(html, "50 more jobs are not drawn"));
  CHECK(Has(html, ", and 4,975 more"));  // the healer's missed faults
}

TEST_CASE("reports.scale: 5,000 faults give a text summary and Markdown of bounded size that count the rest") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  const int64_t run = WriteLargeRun(*store);
  const std::string text = RenderOrFail(*store, run, Format::kText);
  CAPTURE(text.size());
  CHECK(text.size() < 20 * 1000);  // a row per fault was 900 KB here
  CHECK(Has(text, "Faults (5,000): the 40 worst are listed (those that never recovered and cost GPUs first, then the "
                  "slowest to recover); all 5,000 are counted by kind and by rack below\n"));
  // The 500 that never recovered come first, by GPU-hours lost then id: faults 1, 11, 21, ...
  CHECK(Has(text, "Faults (5,000)"));
  CHECK(Has(text, " 1  gpu_fail "));
  CHECK(Has(text, " 11  tray_pull "));
  CHECK_FALSE(Has(text, " 2  link_down "));
  CHECK(Has(text, "Faults by kind (4)\n"));
  CHECK(Has(text, "\n  gpu_fail         1250      1250      1250       1000     5.0s"));
  CHECK(Has(text, "Faults by rack (500): the 20 with the most faults; 4,800 more faults in 480 more racks\n"));
  CHECK(Has(text, "Jobs (60): the 30 with the lowest ETTR are listed; 30 more, ETTR of all "));
  CHECK(Has(text, "  missed faults     #1 gpu_fail, #2 link_down"));
  CHECK(Has(text, ", and 4,990 more\n"));
  const std::string md = RenderOrFail(*store, run, Format::kMarkdown);
  CHECK(md.size() < 20 * 1000);
  CHECK(Has(md, "### Faults by kind"));
  CHECK(Has(md, "60 jobs: the 30 with the lowest ETTR are listed."));
}

TEST_CASE("reports.html: holds what the text holds - detect, isolate, recover, jobs, healer - with times on hover") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  const int64_t run = t::WriteSampleRun(*store);
  const std::string html = RenderOrFail(*store, run, Format::kHtml);
  // Per fault: the three times, each with the time on the run's clock as its hover title.
  CHECK(Has(html, "<table class=\"faults\">"));
  CHECK(Has(html, "<th>detect</th><th>isolate</th><th>recover</th>"));
  CHECK(Has(html, "<td class=\"num\" title=\"detected at 1m12.5s (12.5s after injection)\">12.5s</td>"));
  CHECK(Has(html, "<td class=\"num\" title=\"isolated at 1m20s (20s after injection)\">20.0s</td>"));
  CHECK(Has(html, "<td class=\"num\" title=\"never recovered before the run ended\">-</td>"));
  // Jobs with ETTR and goodput; the healer's precision, recall, false isolations and missed faults.
  CHECK(Has(html, "<table class=\"jobs\">"));
  CHECK(Has(html, "<td>llm-train</td><td class=\"num\">72</td><td class=\"num\" title=\"productive 8m44s of 10m\">87.3%</td>"));
  CHECK(Has(html, "<tr><th>precision</th><td title=\"isolations that hit a faulty component\">50.0%</td></tr>"));
  CHECK(Has(html, "<tr><th>recall</th><td title=\"faults that needed isolating and were\">100.0%</td></tr>"));
  CHECK(Has(html, "<tr><th>false isolations</th><td>r01.tray05</td></tr>"));
  CHECK(Has(html, "<tr><th>missed faults</th><td>none</td></tr>"));
  // Hover titles on the timeline carry times.
  CHECK(Has(html, "<title>fault #1 tray_pull on r01.tray03: injected at 1m, reverted at 10m</title>"));
  CHECK(Has(html, "<title>detected at 1m12.5s by heartbeat: no heartbeat for 12.5s</title>"));
  CHECK(Has(html, "<title>isolated at 1m20s (compute_tray): heartbeat lost</title>"));
  // The throughput chart has its 1.0 line.
  CHECK(Has(html, "<line class=\"nominal\""));
  CHECK(Has(html, ">1.0 nominal</text>"));
}

TEST_CASE("reports.summary: control characters in stored strings never reach the terminal") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  RunInfo info = t::SampleRunInfo();
  info.plan_name = "evil\x1b]0;owned\x07\x1b[2J plan \xc2\x9b" "31m";
  auto run = store->BeginRun(info);
  REQUIRE(run.ok());
  RunMetrics m = t::SampleMetrics();
  m.faults[0].target = "r01.tray03\r\x1b[1A";
  REQUIRE(store->AddMetrics(*run, m).ok());
  REQUIRE(store->FinishRun(*run, "passed", 0, "2025-01-02T03:14:05Z", "").ok());
  auto text = Render(*store, *run, Format::kText);
  REQUIRE(text.ok());
  CHECK(Has(*text, "Run 1: evil\\x1b]0;owned\\x07\\x1b[2J plan \\u009b31m (scenarios/tray_pull.yaml)\n"));
  CHECK(Has(*text, "r01.tray03\\x0d\\x1b[1A"));
  for (char c : *text) CHECK((c == '\n' || static_cast<unsigned char>(c) >= 0x20));
  CHECK(text->find("\xc2\x9b") == std::string::npos);
}

TEST_CASE("reports.escape: TerminalText keeps printable UTF-8 and writes every control character visibly") {
  CHECK(TerminalText("r01.tray03 \xc3\xa9t\xc3\xa9 \xe2\x9c\x93") == "r01.tray03 \xc3\xa9t\xc3\xa9 \xe2\x9c\x93");
  CHECK(TerminalText("a\tb\nc\x7f") == "a\\tb\\nc\\x7f");
  CHECK(TerminalText("\x1b[31mred") == "\\x1b[31mred");
  CHECK(TerminalText("\xc2\x85\xc2\xa0") == "\\u0085\xc2\xa0");  // NEL is C1; no-break space is text
  CHECK(TerminalText("\x9b" "2J \xff \xc0\xaf \xed\xa0\x80") == "\\x9b2J \\xff \\xc0\\xaf \\xed\\xa0\\x80");
  CHECK(TerminalText("cut \xe2\x9c") == "cut \\xe2\\x9c");
  CHECK(TerminalLines("a\x1b[H\n\nb\tc\n") == "a\\x1b[H\n\nb\\tc\n");
}
