#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "reports/render.h"
#include "reports/store.h"
#include "reports/summary.h"
#include "reports/text_table.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

namespace {

using rackchaos::reports::testing::Lines;

// Table cells are separated by at least two spaces; single spaces stay inside a cell.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  size_t i = line.find_first_not_of(' ');
  while (i != std::string::npos && i < line.size()) {
    size_t end = line.find("  ", i);
    cells.push_back(line.substr(i, end == std::string::npos ? std::string::npos : end - i));
    i = end == std::string::npos ? end : line.find_first_not_of(' ', end);
  }
  return cells;
}

// The cells of the first line after `section` whose first cell is `first`.
std::vector<std::string> Row(const std::string& text, const std::string& section,
                             const std::string& first) {
  bool in_section = false;
  for (const std::string& line : Lines(text)) {
    if (line.rfind(section, 0) == 0) in_section = true;
    if (!in_section) continue;
    std::vector<std::string> cells = Cells(line);
    if (!cells.empty() && cells[0] == first) return cells;
  }
  return {};
}

// Writes a hand-built run through the store and renders it back from a read-only store.
std::string WriteAndRender(const RunMetrics& metrics, const TempDir& dir, const std::vector<Event>& events = {}) {
  std::string path = dir.File("r.db");
  {
    auto store = ReportStore::Open(path);
    REQUIRE(store.ok());
    auto run = store->BeginRun(t::SampleRunInfo());
    REQUIRE(run.ok());
    REQUIRE(store->AddMetrics(*run, metrics).ok());
    REQUIRE(store->AppendEvents(*run, events).ok());
    REQUIRE(store->FinishRun(*run, "passed", 0, "2025-01-02T03:14:05Z", "").ok());
  }
  auto store = ReportStore::OpenReadOnly(path);
  REQUIRE(store.ok());
  auto text = RenderSummary(*store, 1);
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  return *text;
}

RunMetrics TwoFaults() {
  RunMetrics m = t::SampleMetrics();
  FaultMetrics second;
  second.fault = 2;
  second.kind = "gpu_throttle";
  second.target = "r01.tray05.gpu1";
  second.injected = Duration::Minutes(5);
  second.gpus_direct = 1;
  m.faults.push_back(second);
  m.missed_faults = {"#2 gpu_throttle on r01.tray05.gpu1"};
  return m;
}

}  // namespace

TEST_CASE("reports.summary: the summary header names plan, seed, backend, version and status") {
  TempDir dir;
  std::string text = WriteAndRender(t::SampleMetrics(), dir);
  std::vector<std::string> lines = Lines(text);
  REQUIRE(lines.size() > 5);
  CHECK(lines[0] == "Run 1: tray-pull (scenarios/tray_pull.yaml)");
  CHECK(lines[1] == "  status   passed (exit 0)");
  CHECK(lines[2] == "  seed     42   backend sim   version 0.1.0");
}

TEST_CASE("reports.summary: the fault table shows durations, '-' for missing ones, and the blast radius") {
  TempDir dir;
  std::string text = WriteAndRender(TwoFaults(), dir);
  std::vector<std::string> first = Row(text, "Faults", "1");
  REQUIRE(first.size() == 11);
  CHECK(first[1] == "tray_pull");
  CHECK(first[2] == "r01.tray03");
  CHECK(first[3] == "60.0s");
  CHECK(first[4] == "12.5s");
  CHECK(first[5] == "20.0s");
  CHECK(first[6] == "-");
  CHECK(first[7] == "4+68");
  CHECK(first[8] == "1 (1 int)");
  CHECK(first[9] == "1.23");
  CHECK(first[10] == "10.0s");
  std::vector<std::string> second = Row(text, "Faults", "2");
  REQUIRE(second.size() == 11);
  CHECK(second[3] == "5.0m");
  CHECK(second[4] == "-");
  CHECK(second[5] == "-");
  CHECK(second[7] == "1+0");
  CHECK(text.find("  #1 tray_pull on r01.tray03: isolated r01.tray03, r01.tray05\n") != std::string::npos);
  CHECK(text.find("  #2 gpu_throttle on r01.tray05.gpu1: isolated nothing\n") != std::string::npos);
}

TEST_CASE("reports.summary: the job table shows ETTR and goodput as percentages") {
  TempDir dir;
  std::string text = WriteAndRender(t::SampleMetrics(), dir);
  std::vector<std::string> job = Row(text, "Jobs", "llm-train");
  REQUIRE(job.size() == 6);
  CHECK(job[1] == "72");
  CHECK(job[2] == "87.3%");
  CHECK(job[3] == "80.1%");
  CHECK(job[4] == "1");
  CHECK(job[5] == "420");
  CHECK(Row(text, "Jobs", "eval")[2] == "100.0%");
}

TEST_CASE("reports.summary: healer quality lists precision, recall, false isolations and missed faults") {
  TempDir dir;
  std::string text = WriteAndRender(TwoFaults(), dir);
  CHECK(text.find("  isolations        2 (1 correct)\n") != std::string::npos);
  CHECK(text.find("  precision         50.0%\n") != std::string::npos);
  CHECK(text.find("  recall            100.0%\n") != std::string::npos);
  CHECK(text.find("  false isolations  r01.tray05\n") != std::string::npos);
  CHECK(text.find("  missed faults     #2 gpu_throttle on r01.tray05.gpu1\n") != std::string::npos);
}

TEST_CASE("reports.summary: the summary is plain ASCII with aligned columns and no trailing blanks") {
  TempDir dir;
  std::string text = WriteAndRender(TwoFaults(), dir);
  for (char c : text) CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
  std::vector<std::string> lines = Lines(text);
  size_t header = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    CHECK((lines[i].empty() || lines[i].back() != ' '));
    if (lines[i].find("  #  kind") == 0) header = i;
  }
  REQUIRE(header > 0);
  // Right-aligned columns: every row of the fault table ends at the same column as its header.
  CHECK(lines[header + 1].size() == lines[header].size());
  CHECK(lines[header + 2].size() == lines[header].size());
  CHECK(lines[header + 3].size() == lines[header].size());
  CHECK(lines[header].find("detect") + 6 == lines[header + 2].find("12.5s") + 5);
}

TEST_CASE("reports.summary: an empty run renders, and an unknown run is an error") {
  TempDir dir;
  std::string text = WriteAndRender(RunMetrics{}, dir);
  CHECK(text.find("Faults: none\n") != std::string::npos);
  CHECK(text.find("Jobs: none\n") != std::string::npos);
  CHECK(text.find("  precision         100.0%\n") != std::string::npos);
  auto store = ReportStore::OpenReadOnly(dir.File("r.db"));
  REQUIRE(store.ok());
  CHECK(RenderSummary(*store, 7).status().code() == StatusCode::kNotFound);
}

TEST_CASE("reports.summary: text tables pad columns and align right where asked") {
  TextTable table({"name", "n"}, {Align::kLeft, Align::kRight});
  table.AddRow({"a", "100"});
  table.AddRow({"longer"});
  CHECK(table.Render() == "name      n\n------  ---\na       100\nlonger\n");
}

TEST_CASE("summary: jobs moved to spare racks are listed after the healer, and only when there are any") {
  std::vector<Event> events = {
      {Duration::Seconds(40), ActionTaken{"drain", 3, kNoJob, true, "drained r01.tray03"}},
      {Duration::Seconds(210),
       ActionTaken{"spare_rack", 7, 0, true, "job 'pretrain-a' moved to spare rack r06: its NVLink domain was lost"}},
  };
  TempDir with, without;
  const std::string text = WriteAndRender(t::SampleMetrics(), with, events);
  const size_t healer = text.find("Healer\n"), spare = text.find("\n\nSpare racks\n");
  REQUIRE(healer != std::string::npos);
  REQUIRE(spare != std::string::npos);
  CHECK(spare > healer);
  CHECK(text.substr(spare) ==
        "\n\nSpare racks\n  3.5m  job 'pretrain-a' moved to spare rack r06: its NVLink domain was lost\n");
  events.pop_back();
  CHECK(WriteAndRender(t::SampleMetrics(), without, events).find("Spare racks") == std::string::npos);

  // The JSON and HTML reports read the same moves from the store, and have nothing for a run without.
  for (const TempDir* dir : {&with, &without}) {
    auto store = ReportStore::OpenReadOnly(dir->File("r.db"));
    REQUIRE(store.ok());
    auto json = Render(*store, 1, Format::kJson);
    auto html = Render(*store, 1, Format::kHtml);
    REQUIRE(json.ok());
    REQUIRE(html.ok());
    const bool moved = dir == &with;
    CAPTURE(moved);
    CHECK((json->find("  \"spare_rack_moves\": [\n    {\n      \"t_s\": 210,\n      \"detail\": \"job 'pretrain-a' moved to "
                      "spare rack r06: its NVLink domain was lost\"\n    }\n  ],\n  \"expectations\"") != std::string::npos) ==
          moved);
    CHECK((html->find("<h2>Spare racks</h2>\n<table class=\"spare-racks\"><tr><th>at</th><th>move</th></tr>\n<tr><td>"
                      "3.5m</td><td>job &#39;pretrain-a&#39; moved to spare rack r06: its NVLink domain was lost</td></tr>") !=
           std::string::npos) == moved);
    CHECK((json->find("spare_rack") != std::string::npos) == moved);
    CHECK((html->find("Spare racks") != std::string::npos) == moved);
  }
}
