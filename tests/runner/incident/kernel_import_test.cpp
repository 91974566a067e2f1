// Kernel log importer: every prefix (dmesg, dmesg -T, journalctl -k, syslog) and every Xid variant the
// driver prints, as cluster/kernel_log.h writes them, plus SXid, mlx5 link lines and noise.
#include <doctest/doctest.h>

#include "cluster/kernel_log.h"
#include "import_util.h"
#include "runner/incident/importer.h"

namespace ri = rackchaos::incident;
using rackchaos::incident::testing::Import;
namespace cl = rackchaos::cluster;

namespace {

// 2026-11-30T00:00:00Z + uptime.
double Wall(double uptime) { return static_cast<double>(cl::kSimulatedBootUnixSeconds) + uptime; }

}  // namespace

TEST_CASE("incident kernel: one Xid line in every log style gives the same event and time") {
  cl::XidLine x{"0000:3b:00", 79, std::nullopt, "", "", true};
  struct Case {
    cl::LogStyle style;
    ri::TimeAxis axis;
    double seconds;
    std::string host;
  } cases[] = {
      {cl::LogStyle::kDmesg, ri::TimeAxis::kRelative, 3725.5, ""},
      {cl::LogStyle::kDmesgT, ri::TimeAxis::kWall, Wall(3725), ""},
      {cl::LogStyle::kJournal, ri::TimeAxis::kWall, Wall(3725), "node07"},
      {cl::LogStyle::kSyslog, ri::TimeAxis::kWall, Wall(3725.5), "node07"},
  };
  for (const auto& c : cases) {
    std::string line = cl::FormatXidLine(x, c.style, 3725.5, "node07");
    CAPTURE(line);
    // The journal prints no year: it comes from the option (or from a dated line).
    auto inc = Import(line + "\n", {2026, std::nullopt, {}, {}, {}});
    REQUIRE(inc.events.size() == 1);
    const auto& e = inc.events[0];
    CHECK(e.kind == ri::EventKind::kXid);
    CHECK(e.code == 79);
    CHECK(e.address == "0000:3b:00");
    CHECK(e.host == c.host);
    CHECK(e.time.axis == c.axis);
    CHECK(e.time.seconds == doctest::Approx(c.seconds).epsilon(1e-9));
    CHECK(e.action == "reboot_node");
    CHECK(inc.not_understood == 0);
  }
}

TEST_CASE("incident kernel: Xid variants with and without pid and name, unknown owner, 74, NVLink5 and 154") {
  std::string log;
  log += cl::FormatXidLine({"0000:3b:00", 13, 4242, "python3", "", false}, cl::LogStyle::kDmesg, 10, "") + "\n";
  log += cl::FormatXidLine({"0000:3b:00", 31, std::nullopt, "", "", false}, cl::LogStyle::kDmesg, 11, "") + "\n";
  log += cl::FormatXidLine({"0000:3b:00", 79, std::nullopt, "", "", true}, cl::LogStyle::kDmesg, 12, "") + "\n";
  log += cl::FormatXidLine({"0000:1b:00", 74, std::nullopt, "", cl::NvlinkXidMessage(74, 14), false},
                           cl::LogStyle::kDmesg, 13, "") +
         "\n";
  for (int code = 144; code <= 150; ++code)
    log += cl::FormatXidLine({"0000:1b:00", code, std::nullopt, "", cl::NvlinkXidMessage(code, code - 140), true},
                             cl::LogStyle::kDmesg, code, "") +
           "\n";
  log += cl::FormatXidLine({"0000:1b:00", 154, std::nullopt, "", cl::RecoveryActionMessage(0, 2), true},
                           cl::LogStyle::kDmesg, 200, "") +
         "\n";
  // Multi-register XID 74 as newer drivers print it (several register values after the link).
  log +=
      "[  201.000000] NVRM: Xid (PCI:0000:1b:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error "
      "detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)\n";
  auto inc = Import(log);
  REQUIRE(inc.events.size() == 13);
  CHECK(inc.events[0].code == 13);
  CHECK(inc.events[0].action == "restart_app");
  CHECK(inc.events[1].code == 31);
  CHECK(inc.events[2].code == 79);
  CHECK(inc.events[3].code == 74);
  CHECK(inc.events[3].link == 14);
  for (int i = 0; i < 7; ++i) {
    CHECK(inc.events[4 + static_cast<size_t>(i)].code == 144 + i);
    CHECK(inc.events[4 + static_cast<size_t>(i)].link == 4 + i);
  }
  CHECK(inc.events[11].code == 154);
  CHECK(inc.events[11].recovery_action == 2);
  CHECK(inc.events[11].action == "reboot_node");
  CHECK(inc.events[12].code == 74);
  CHECK(inc.events[12].link == 3);
  CHECK(inc.events[12].time.seconds == doctest::Approx(201));
  CHECK(inc.not_understood == 0);
}

TEST_CASE("incident kernel: SXid fatal and non-fatal, detail lines are follow-ups") {
  std::string log = cl::FormatSxidLine({3, "0000:05:00.0", 20034, true, "Link 46 LTSSM Fault Up"},
                                       cl::LogStyle::kJournal, 60, "nvsw1") +
                    "\n" +
                    "Nov 30 00:01:00 nvsw1 kernel: nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Severity 1 Engine "
                    "instance 46 Sub-engine instance 00\n" +
                    cl::FormatSxidLine({3, "0000:05:00.0", 12028, false, "egress non-posted PRIV error"},
                                       cl::LogStyle::kJournal, 61, "nvsw1") +
                    "\n";
  auto inc = Import(log, {2026, std::nullopt, {}, {}, {}});
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].kind == ri::EventKind::kSxid);
  CHECK(inc.events[0].fatal());
  CHECK(inc.events[0].link == 46);
  CHECK(inc.events[0].iface == "nvidia-nvswitch3");
  CHECK(inc.events[0].host == "nvsw1");
  CHECK_FALSE(inc.events[1].fatal());
  CHECK(inc.understood == 3);
  CHECK(inc.not_understood == 0);
}

TEST_CASE("incident kernel: mlx5 link down and up with and without the interface name") {
  std::string log =
      "[Mon Nov 30 06:00:00 2026] mlx5_core 0000:1a:00.0 ibp26s0: Link down\n"
      "[Mon Nov 30 06:00:30 2026] mlx5_core 0000:1A:00.0: Port module event: module 0, Cable unplugged\n"
      "[Mon Nov 30 06:00:31 2026] mlx5_core 0000:1a:00.0: Port module event: module 0, Cable plugged\n"
      "[Mon Nov 30 06:01:00 2026] mlx5_core 0000:1a:00.0 ibp26s0: Link up\n"
      "[Mon Nov 30 06:01:01 2026] mlx5_core 0000:1a:00.0: firmware version: 28.39.1002\n";
  auto inc = Import(log);
  REQUIRE(inc.events.size() == 3);
  CHECK(inc.events[0].kind == ri::EventKind::kNicDown);
  CHECK(inc.events[0].iface == "ibp26s0");
  CHECK(inc.events[1].kind == ri::EventKind::kNicDown);
  CHECK(inc.events[1].address == "0000:1a:00.0");
  CHECK(inc.events[1].iface.empty());
  CHECK(inc.events[2].kind == ri::EventKind::kNicUp);
  CHECK(inc.events[2].time.seconds - inc.events[0].time.seconds == doctest::Approx(60));
  CHECK(inc.understood == 4);
  CHECK(inc.not_understood == 1);  // the firmware version line
}

// tests/fuzz/regressions/incident/vt-blank-line: a line of \v, \f and spaces is blank (core/strings.h's
// IsSpace), like an empty one: counted in `lines`, neither understood nor not understood.
TEST_CASE("incident: a line of vertical tabs and form feeds is blank") {
  auto inc = Import("\x0b\n \x0c\t\r\n\n[  4.000000] usb 1-3: new device\n");
  CHECK(inc.lines == 4);
  CHECK(inc.understood == 0);
  CHECK(inc.not_understood == 1);
}

TEST_CASE("incident kernel: noise, garbage and binary are counted by pattern, never an event") {
  std::string log =
      "[  1.000000] usb 1-3: new high-speed USB device number 2 using xhci_hcd\n"
      "[  2.000000] usb 2-1: new high-speed USB device number 7 using xhci_hcd\n"
      "[  3.000000] NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  570.124.06\n"
      "[  4.000000] NVRM: Xid (PCI:zz:00): 79, garbage\n"
      "\x01\x02\xff\xfe binary\n"
      "\n"
      "Xid 79 mentioned in prose\n";
  auto inc = Import(log);
  CHECK(inc.events.empty());
  CHECK(inc.not_understood == 6);  // every non-blank line
  CHECK(inc.lines == 7);
  auto top = ri::TopPatterns(inc, 10);
  REQUIRE(!top.empty());
  CHECK(top[0].first == "usb #-#: new high-speed USB device number # using xhci_hcd");
  CHECK(ri::LinePattern("nvme0n1p3 at 0x1f3a") == "nvme#n#p# at #");
  CHECK(top[0].second.count == 2);
  CHECK(top[0].second.first_line == 1);
  for (const auto& [pattern, count] : top) {
    for (char c : pattern) CHECK((c >= 0x20 && c < 0x7f));
  }
}

TEST_CASE("incident kernel: journal lines take the year of a dated line and survive a missing newline") {
  std::string log =
      "[Mon Nov 30 06:00:00 2026] mlx5_core 0000:1a:00.0 ibp26s0: Link down\n"
      "Nov 30 06:05:00 node07 kernel: mlx5_core 0000:1a:00.0 ibp26s0: Link up";
  auto inc = Import(log);
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[1].time.seconds - inc.events[0].time.seconds == doctest::Approx(300));
  CHECK(inc.events[1].host == "node07");
}

TEST_CASE("incident kernel: an overlong line is cut and counted, the next line still parses") {
  std::string log =
      std::string(ri::kMaxLineBytes + 100, 'x') + "\n" + "[  5.000000] mlx5_core 0000:1a:00.0 ibp26s0: Link down\n";
  auto inc = Import(log);
  CHECK(inc.overlong_lines == 1);
  REQUIRE(inc.events.size() == 1);
  CHECK(inc.events[0].line == 2);
}

TEST_CASE("incident kernel: journald's other outputs and dmesg's ISO and decoded forms give the same Xid and host") {
  // journalctl -o short-iso (+0000 without a colon, systemd before 255), short-iso-precise, short-full,
  // short-unix, short-monotonic; dmesg --time-format=iso (comma, no host) and dmesg -x.
  struct Case {
    const char* line;
    ri::TimeAxis axis;
    double seconds;
    const char* host;
  } cases[] = {
      {"2026-11-30T06:02:21+0000 n7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       ri::TimeAxis::kWall, 1796018541, "n7"},
      {"2026-11-30T06:02:21.500000+00:00 n7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       ri::TimeAxis::kWall, 1796018541.5, "n7"},
      {"Mon 2026-11-30 06:02:21 UTC n7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       ri::TimeAxis::kWall, 1796018541, "n7"},
      {"1796018541.250000 n7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", ri::TimeAxis::kWall,
       1796018541.25, "n7"},
      {"[ 3725.500000] n7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", ri::TimeAxis::kRelative,
       3725.5, "n7"},
      {"2026-11-30T06:02:21,000000+00:00 NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       ri::TimeAxis::kWall, 1796018541, ""},
      {"kern  :err   : [ 3725.500000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       ri::TimeAxis::kRelative, 3725.5, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line);
    auto inc = Import(std::string(c.line) + "\n");
    REQUIRE(inc.events.size() == 1);
    CHECK(inc.events[0].code == 79);
    CHECK(inc.events[0].host == c.host);
    CHECK(inc.events[0].time.axis == c.axis);
    CHECK(inc.events[0].time.seconds == doctest::Approx(c.seconds).epsilon(1e-12));
  }
  // A dmesg line that looks like "host tag:" is not read as a host (only the kernel's tag is).
  auto usb = Import("[    1.500000] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n");
  CHECK(usb.patterns.count("usb #-#: new high-speed USB device number # using xhci_hcd") == 1);
}
