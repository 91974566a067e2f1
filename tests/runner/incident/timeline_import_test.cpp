// Generic timeline importer (JSON lines, CSV), times, and streaming from a file across block borders.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "import_util.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"

namespace ri = rackchaos::incident;
using rackchaos::incident::testing::Import;

TEST_CASE("incident timeline: JSON lines with wall and relative times, escapes, bad rows counted") {
  auto inc = Import(
      R"({"time": "2026-11-30T06:00:00Z", "component": "r01.tray03.gpu2", "event": "gpu_fail", "detail": "xid=48"})"
      "\n"
      R"({"time": 3600, "component": "r01.tray03.nic1", "event": "link_down", "detail": "cable \"A\"\u00e9"})"
      "\n"
      R"({"time": "2026-11-30T07:00:00+01:00", "component": "r01.tray03.gpu2", "event": "Resolved"})"
      "\n"
      R"({"time": "2026-11-30T07:00:00Z", "event": "xid", "component": "0000:3b:00", "detail": "Xid 94"})"
      "\n"
      R"({"time": {"nested": 1}, "event": "gpu_fail"})"
      "\n"
      R"({"time": "yesterday", "event": "gpu_fail"})"
      "\n"
      R"({"time": "2026-11-30T08:00:00Z", "event": "coffee", "detail": "ops note"})"
      "\n");
  REQUIRE(inc.events.size() == 5);
  // Wall events first (in time order), then the relative axis.
  CHECK(inc.events[0].kind == ri::EventKind::kFaultStart);
  CHECK(inc.events[0].action == "gpu_fail");
  CHECK(inc.events[1].kind == ri::EventKind::kFaultEnd);  // 07:00+01:00 = 06:00Z, after the start in file order
  CHECK(inc.events[1].time.seconds == doctest::Approx(inc.events[0].time.seconds));
  CHECK(inc.events[2].kind == ri::EventKind::kXid);
  CHECK(inc.events[2].code == 94);
  CHECK(inc.events[3].kind == ri::EventKind::kNote);
  CHECK(inc.events[4].time.axis == ri::TimeAxis::kRelative);
  CHECK(inc.events[4].detail == "cable \"A\"\xc3\xa9");
  CHECK(inc.not_understood == 2);
}

TEST_CASE("incident timeline: CSV with a header in any column order and quoted fields") {
  auto inc = Import(
      "event,time,component,detail\n"
      "tray_pull,2026-11-30T06:00:00Z,r01.tray11,\"pulled, by mistake\"\n"
      "end,2026-11-30T07:00:00Z,r01.tray11,\n"
      "gpu_fail,,r01.tray01.gpu0,no time\n");
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].address == "r01.tray11");
  CHECK(inc.events[0].detail == "pulled, by mistake");
  CHECK(inc.events[1].kind == ri::EventKind::kFaultEnd);
  CHECK(inc.not_understood == 1);
}

TEST_CASE("incident time: ISO, ctime and short stamps; impossible dates refused") {
  CHECK(*ri::ParseIsoTime("1970-01-01T00:00:00Z") == 0);
  CHECK(*ri::ParseIsoTime("2026-11-30 00:00:00") == 1795996800);
  CHECK(*ri::ParseIsoTime("2026-11-30T01:00:00+01:00") == 1795996800);
  CHECK(*ri::ParseCtimeTime("Mon Nov 30 00:00:00 2026") == 1795996800);
  CHECK_FALSE(ri::ParseIsoTime("2026-02-30T00:00:00"));
  CHECK_FALSE(ri::ParseIsoTime("2026-11-30T25:00:00"));
  CHECK_FALSE(ri::ParseCtimeTime("Mon Foo 30 00:00:00 2026"));
  auto feb29 = ri::ParseShortTime("Feb 29 12:00:00");
  REQUIRE(feb29);
  CHECK(ri::FixGuessedYear(*feb29, 2028) == *ri::ParseIsoTime("2028-02-29T12:00:00"));
  CHECK(ri::FixGuessedYear(*ri::ParseShortTime("Nov 30 00:00:00"), 2026) == 1795996800);
}

TEST_CASE("incident import: a file read in blocks gives the same events as the text at once") {
  std::string text;
  for (int i = 0; i < 40000; ++i) {
    text += "[" + std::to_string(1000 + i) + ".000000] usb 1-" + std::to_string(i % 7) + ": some noise line\n";
    if (i % 1000 == 999)
      text += "[" + std::to_string(1000 + i) + ".500000] mlx5_core 0000:1a:00.0 ibp26s0: Link down\n";
  }
  REQUIRE(text.size() > (1u << 20));  // more than one read block
  char path[] = "/tmp/rackchaos-incident-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  { std::ofstream(path, std::ios::binary) << text; }
  ri::IncidentImporter from_file;
  auto status = from_file.ImportFile(path);
  std::remove(path);
  REQUIRE(status.ok());
  auto a = from_file.Finish();
  auto b = Import(text);
  CHECK(a.events.size() == 40);
  CHECK(a.events.size() == b.events.size());
  CHECK(a.not_understood == 40000);
  CHECK(a.lines == b.lines);
  CHECK(a.patterns.size() == 1);
  ri::IncidentImporter missing;
  CHECK(missing.ImportFile("/nonexistent/incident.log").code() == rackchaos::StatusCode::kNotFound);
}

TEST_CASE(
    "incident time: --boot-time puts dmesg uptimes on the wall clock, short-precise journal stamps keep their "
    "fraction") {
  ri::ImportOptions options;
  options.boot_time = *ri::ParseIsoTime("2026-11-30T00:00:00Z");
  auto inc = Import(
      "[ 3600.250000] mlx5_core 0000:1a:00.0 ibp26s0: Link down\n"
      "Nov 30 01:00:10.500000 node07 kernel: mlx5_core 0000:1a:00.0 ibp26s0: Link up\n",
      options);
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].time.axis == ri::TimeAxis::kWall);
  CHECK(inc.events[0].time.seconds == doctest::Approx(1795996800 + 3600.25));
  CHECK(inc.events[1].host == "node07");
  CHECK(inc.events[1].time.seconds - inc.events[0].time.seconds == doctest::Approx(10.25));
}
