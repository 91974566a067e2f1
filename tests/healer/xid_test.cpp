#include "healer/xid.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "cluster/kernel_log.h"

#ifndef RACKCHAOS_SOURCE_DIR
#define RACKCHAOS_SOURCE_DIR "."
#endif

namespace rackchaos::healer {
namespace {

XidEvent MustParse(std::string_view line) {
  auto e = ParseXidLine(line);
  INFO("line: ", std::string(line));
  REQUIRE(e.has_value());
  return *e;
}

TEST_CASE("the canonical line yields every field") {
  auto e = MustParse("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
  CHECK_FALSE(e.is_sxid);
  CHECK(e.pci == "0000:3b:00");
  CHECK(e.code == 79);
  CHECK(e.pid == 1234);
  CHECK(e.process_name == "python3");
  CHECK(e.message == "GPU has fallen off the bus.");
  CHECK_FALSE(e.timestamp.has_value());
  CHECK(e.host.empty());
  CHECK_FALSE(e.link.has_value());
  CHECK(e.action == XidAction::kRebootNode);
}

TEST_CASE("unknown owners and missing owner fields") {
  auto unknown = MustParse(
      "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception");
  CHECK_FALSE(unknown.pid.has_value());
  CHECK(unknown.process_name.empty());
  CHECK(unknown.message == "Graphics SM Warp Exception");

  auto bare = MustParse("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  CHECK_FALSE(bare.pid.has_value());
  CHECK(bare.process_name.empty());
  CHECK(bare.message == "GPU has fallen off the bus.");

  auto code_only = MustParse("NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(code_only.code == 79);
  CHECK(code_only.message.empty());

  auto name_last = MustParse("NVRM: Xid (PCI:0000:3b:00): 43, pid=77, name=a.out");
  CHECK(name_last.pid == 77);
  CHECK(name_last.process_name == "a.out");
  CHECK(name_last.message.empty());
}

TEST_CASE("the prefixes of dmesg, dmesg -T, journalctl -k and syslog") {
  const std::string kTail =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.";
  struct Case {
    std::string prefix, timestamp, host;
  };
  const std::vector<Case> cases = {
      {"[ 1234.567890] ", "1234.567890", ""},
      {"[171167.620236] ", "171167.620236", ""},
      {"[Mon Nov 30 06:02:21 2026] ", "Mon Nov 30 06:02:21 2026", ""},
      {"[Mon Nov  2 06:02:21 2026] ", "Mon Nov  2 06:02:21 2026", ""},
      {"Nov 30 06:02:21 host kernel: ", "Nov 30 06:02:21", "host"},
      {"Nov  3 06:02:21 gpu-7 kernel: ", "Nov  3 06:02:21", "gpu-7"},
      {"2026-11-30T06:02:21.123456+00:00 host kernel: [ 1234.5] ", "2026-11-30T06:02:21.123456+00:00",
       "host"},
  };
  for (const auto& c : cases) {
    auto e = MustParse(c.prefix + kTail);
    CHECK(e.timestamp == c.timestamp);
    CHECK(e.host == c.host);
    CHECK(e.code == 79);
    CHECK(e.pid == 1234);
    CHECK(e.message == "GPU has fallen off the bus.");
  }
  auto odd = MustParse("<4>kmsg-ish " + kTail);  // unknown prefix: still parsed, no time
  CHECK_FALSE(odd.timestamp.has_value());
  auto crlf = MustParse(kTail + "\r\n");
  CHECK(crlf.message == "GPU has fallen off the bus.");
}

TEST_CASE("PCI addresses are normalized to lower case with a 4-digit domain") {
  CHECK(MustParse("NVRM: Xid (PCI:0000:3B:00): 79, x").pci == "0000:3b:00");
  CHECK(MustParse("NVRM: Xid (PCI:0008:01:00): 79, x").pci == "0008:01:00");
  CHECK(MustParse("NVRM: Xid (PCI:00000008:01:00): 79, x").pci == "0008:01:00");
  CHECK(MustParse("NVRM: Xid (PCI:0:3b:0): 79, x").pci == "0000:3b:00");
  CHECK(MustParse("NVRM: Xid (PCI:3b:00): 79, x").pci == "0000:3b:00");
  CHECK(MustParse("NVRM: Xid (PCI:0000:3b:00.0): 79, x").pci == "0000:3b:00");
  CHECK(MustParse("NVRM: Xid (PCI:00010000:3b:00): 79, x").pci == "10000:3b:00");
  // Legacy drivers printed no "PCI:"; accepted only behind "NVRM: ".
  CHECK(MustParse("[ 12.0] NVRM: Xid (0000:03:00): 14, Channel 00000001").pci == "0000:03:00");
  CHECK_FALSE(ParseXidLine("Xid (0000:03:00): 14, Channel 00000001").has_value());
}

TEST_CASE("XID 74 multi-register payload and the link number") {
  auto e = MustParse(
      "NVRM: Xid (PCI:0000:0b:00): 74, pid=2415, name=python, NVLink: fatal error detected on link "
      "14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  CHECK(e.code == 74);
  CHECK(e.pid == 2415);
  CHECK(e.process_name == "python");
  CHECK(e.link == 14);
  CHECK(e.message == "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  CHECK(e.action == XidAction::kCheckNvlink);
}

TEST_CASE("NVLink 5 XIDs 144-150") {
  auto e149 = MustParse(
      "[171167.620236] NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 "
      "(0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)");
  CHECK(e149.code == 149);
  CHECK(e149.pci == "0009:01:00");
  CHECK_FALSE(e149.pid.has_value());
  CHECK(e149.link == 1);
  CHECK(e149.message.starts_with("NETIR_LINK_EVT  Fatal"));
  CHECK(e149.action == XidAction::kCheckNvlink);

  auto e145 = MustParse("NVRM: Xid (PCI:0000:1b:00): 145, pid=900, name=trainer, NVLink: Link 5 error (0x4)");
  CHECK(e145.link == 5);
  CHECK(e145.pid == 900);
  for (int code = 144; code <= 150; ++code)
    CHECK(RecommendedAction(code, std::nullopt) == XidAction::kCheckNvlink);

  // "NVLink" alone is not a link number; neither is a word that merely contains "link".
  CHECK_FALSE(MustParse("NVRM: Xid (PCI:0000:1b:00): 74, NVLink: unlinked 5 things").link.has_value());
}

TEST_CASE("XID 154 carries the recovery action") {
  auto e = MustParse(
      "NVRM: Xid (PCI:0000:3b:00): 154, pid=1, name=x, GPU recovery action changed from 0x0 (None) to "
      "0x1 (GPU Reset Required)");
  CHECK(e.recovery_action == 1);
  CHECK(e.action == XidAction::kResetGpu);

  auto reboot = MustParse(
      "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (OS Reboot)");
  CHECK(reboot.recovery_action == 2);
  CHECK(reboot.action == XidAction::kRebootNode);

  auto garbled = MustParse("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed to something");
  CHECK_FALSE(garbled.recovery_action.has_value());
  CHECK(garbled.action == XidAction::kInvestigate);

  const XidAction expected[] = {XidAction::kNone,     XidAction::kResetGpu,      XidAction::kRebootNode,
                                XidAction::kDrainP2P, XidAction::kDrainAndReset, XidAction::kRecoverImex,
                                XidAction::kBusReset, XidAction::kSystemReboot};
  for (int a = 0; a < 8; ++a) CHECK(RecommendedAction(154, a) == expected[a]);
  CHECK(RecommendedAction(154, 8) == XidAction::kInvestigate);
  CHECK(RecommendedAction(154, std::nullopt) == XidAction::kInvestigate);
}

TEST_CASE("NVSwitch SXid lines") {
  auto fatal = MustParse("nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 46 LTSSM Fault Up");
  CHECK(fatal.is_sxid);
  CHECK(fatal.nvswitch == "nvidia-nvswitch3");
  CHECK(fatal.pci == "0000:05:00.0");
  CHECK(fatal.code == 20034);
  CHECK(fatal.severity == SxidSeverity::kFatal);
  CHECK(fatal.link == 46);
  CHECK(fatal.message == "Link 46 LTSSM Fault Up");
  CHECK_FALSE(fatal.sxid_detail);
  CHECK(fatal.action == XidAction::kCheckNvlink);

  auto nonfatal = MustParse(
      "[ 1455.0] nvidia-nvswitch0: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 32 egress non-posted "
      "PRIV error (First)");
  CHECK(nonfatal.severity == SxidSeverity::kNonFatal);
  CHECK(nonfatal.link == 32);
  CHECK(nonfatal.nvswitch == "nvidia-nvswitch0");
  CHECK(nonfatal.timestamp == "1455.0");
  CHECK(nonfatal.action == XidAction::kNone);

  auto detail = MustParse(
      "nvidia-nvswitch0: SXid (PCI:0000:07:00.0): 12028, Severity 0 Engine instance 32 Sub-engine instance "
      "00");
  CHECK(detail.sxid_detail);
  CHECK(detail.severity == SxidSeverity::kUnspecified);
  CHECK_FALSE(detail.link.has_value());

  auto upper = MustParse("nvidia-nvswitch1: SXid (PCI:0000:0A:00.0): 22013, Minion Link 3 NA interrupt");
  CHECK(upper.pci == "0000:0a:00.0");
  CHECK(upper.severity == SxidSeverity::kUnspecified);
  CHECK(upper.action == XidAction::kInvestigate);
}

TEST_CASE("everything else is not an XID line") {
  const std::vector<std::string> rejects = {
      "",
      "   ",
      "NVRM: GPU at PCI:0000:3b:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b",
      "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
      "python3 printed Xid 79 in its own log",
      "the Xid (PCI: form is mentioned here",
      "NVRM: Xid (PCI:0000:3b:00): , pid=1",
      "NVRM: Xid (PCI:0000:3b:00): abc, pid=1",
      "NVRM: Xid (PCI:0000:3b:00): 79abc",
      "NVRM: Xid (PCI:zzzz:3b:00): 79, x",
      "NVRM: Xid (PCI:0000:3b:00:00:00): 79, x",
      "NVRM: Xid (PCI:0000:3b:00: 79, x",
      "NVRM: Xid (PCI:0000:3b:00) 79, x",
      "NVRM: Xid (PCI:0000:3b:00): 12345678, x",
      "NVRM: Xid error: xyz, invalid data",
      "profile=\"Xid (PCI:0000:3b:00): 79\"",
      "MyXid (PCI:0000:3b:00): 79, x",
      "NVRM: Xid (PCI:",
      "Xid (",
  };
  for (const auto& line : rejects) {
    INFO("line: ", line);
    CHECK_FALSE(ParseXidLine(line).has_value());
  }
}

TEST_CASE("binary bytes and huge lines neither crash nor hang") {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 131 + 7) % 256);
  CHECK_FALSE(ParseXidLine(binary).has_value());
  std::string with_nul = std::string("NVRM: Xid (PCI:0000:3b:00): 79, GPU") + '\0' + "fell";
  auto nul = ParseXidLine(with_nul);
  REQUIRE(nul.has_value());
  CHECK(nul->message.size() == 8);

  // Many near-misses: each attempt is bounded, so this is linear (a quadratic scan would take minutes).
  std::string near_misses;
  for (int i = 0; i < 200000; ++i) near_misses += "Xid (PCI:0000:3b:00) ";
  CHECK_FALSE(ParseXidLine(near_misses).has_value());

  std::string long_tail = "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 74, " + std::string(2000000, 'l') + " link 7";
  auto e = ParseXidLine(long_tail);
  REQUIRE(e.has_value());
  CHECK(e->link == 7);

  std::string long_prefix = std::string(1000000, ' ') + "x: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 1";
  CHECK(ParseXidLine(long_prefix)->nvswitch == "x");
}

TEST_CASE("mutated lines never crash and parse to sane values") {
  const std::string seeds[] = {
      "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
      "Nov 30 06:02:21 h kernel: NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x1 (GPU Reset Required)",
      "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 46 LTSSM Fault Up",
  };
  uint64_t state = 0x9e3779b97f4a7c15ULL;  // fixed seed: the same mutations every run
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  int parsed = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string line = seeds[next() % 3];
    for (uint32_t k = next() % 4; k > 0; --k) {
      size_t at = next() % line.size();
      switch (next() % 3) {
        case 0: line[at] = static_cast<char>(next() % 256); break;
        case 1: line.erase(at, 1 + next() % 8); break;
        case 2: line.insert(at, 1, ":()[], 0x"[next() % 9]); break;
      }
      if (line.empty()) line = "x";
    }
    auto e = ParseXidLine(line);
    if (!e) continue;
    ++parsed;
    CHECK(e->code >= 0);
    CHECK(e->pci.size() >= 10);
    CHECK(e->message.size() <= line.size());
  }
  CHECK(parsed > 10000);  // most mutations miss the fixed part; the parser must not be brittle
}

TEST_CASE("actions follow the catalogue") {
  for (int code : {13, 31, 43, 94}) CHECK(RecommendedAction(code, std::nullopt) == XidAction::kRestartApp);
  for (int code : {46, 48, 62, 64, 95, 109, 119, 120, 136, 140, 143}) {
    CHECK(RecommendedAction(code, std::nullopt) == XidAction::kResetGpu);
  }
  CHECK(RecommendedAction(45, std::nullopt) == XidAction::kNone);
  CHECK(RecommendedAction(63, std::nullopt) == XidAction::kNone);
  CHECK(RecommendedAction(74, std::nullopt) == XidAction::kCheckNvlink);
  CHECK(RecommendedAction(79, std::nullopt) == XidAction::kRebootNode);
  CHECK(RecommendedAction(8, std::nullopt) == XidAction::kInvestigate);
  CHECK(RecommendedAction(-1, std::nullopt) == XidAction::kInvestigate);
  // The recovery action only matters for 154.
  CHECK(RecommendedAction(79, 0) == XidAction::kRebootNode);
}

TEST_CASE("names and descriptions") {
  CHECK(std::string(XidDescription(79)) == "GPU has fallen off the bus");
  CHECK(std::string(XidDescription(74)) == "NVLink error");
  CHECK(std::string(XidDescription(147)) == "NVLink 5 error");
  CHECK(std::string(XidDescription(4242)) == "unknown XID");
  CHECK(std::string(XidActionName(XidAction::kDrainAndReset)) == "drain_and_reset");
  CHECK(std::string(XidActionName(XidAction::kRecoverImex)) == "recover_imex");
  CHECK(std::string(SxidSeverityName(SxidSeverity::kNonFatal)) == "non_fatal");
}

struct LogCounts {
  int parsed_lines = 0;
  int gpu_xids = 0;
  int sxid_events = 0;  // SXid lines that are not detail follow-ups
  std::vector<int> codes;
};

LogCounts CountLog(const std::string& name) {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/tests/data/kernel_logs/" + name);
  REQUIRE(in.good());
  LogCounts counts;
  std::string line;
  while (std::getline(in, line)) {
    auto e = ParseXidLine(line);
    if (!e) continue;
    ++counts.parsed_lines;
    if (!e->is_sxid) ++counts.gpu_xids;
    if (e->is_sxid && !e->sxid_detail) ++counts.sxid_events;
    if (!e->sxid_detail) counts.codes.push_back(e->code);
  }
  return counts;
}

TEST_CASE("counting XIDs in sample logs") {
  auto dmesg = CountLog("sample_dmesg.log");
  CHECK(dmesg.parsed_lines == 8);
  CHECK(dmesg.gpu_xids == 5);
  CHECK(dmesg.sxid_events == 1);
  CHECK(dmesg.codes == std::vector<int>{79, 154, 74, 45, 20034, 13});

  auto dmesg_t = CountLog("sample_dmesg_t.log");
  CHECK(dmesg_t.parsed_lines == 7);
  CHECK(dmesg_t.gpu_xids == 5);
  CHECK(dmesg_t.sxid_events == 1);
  CHECK(dmesg_t.codes == std::vector<int>{109, 119, 94, 63, 48, 12028});

  auto journal = CountLog("sample_journal.log");
  CHECK(journal.parsed_lines == 7);
  CHECK(journal.gpu_xids == 6);
  CHECK(journal.sxid_events == 1);
  CHECK(journal.codes == std::vector<int>{149, 45, 154, 145, 119, 154, 22013});

  auto syslog = CountLog("sample_syslog.log");
  CHECK(syslog.parsed_lines == 8);
  CHECK(syslog.gpu_xids == 5);
  CHECK(syslog.sxid_events == 1);
  CHECK(syslog.codes == std::vector<int>{79, 95, 31, 120, 12028, 64});
}

TEST_CASE("sample journal fields") {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/tests/data/kernel_logs/sample_journal.log");
  REQUIRE(in.good());
  std::vector<XidEvent> events;
  std::string line;
  while (std::getline(in, line)) {
    if (auto e = ParseXidLine(line)) events.push_back(*e);
  }
  REQUIRE(events.size() == 7);
  CHECK(events[0].link == 9);
  CHECK(events[0].host == "gb200-r01-n07");
  CHECK(events[0].timestamp == "Nov 30 06:02:21");
  CHECK(events[2].recovery_action == 1);
  CHECK(events[3].link == 5);
  CHECK(events[5].recovery_action == 5);
  CHECK(events[5].action == XidAction::kRecoverImex);
}

// The simulator's lines (cluster/kernel_log.h) must read back through the real parser.
TEST_CASE("round trip: every generated XID line parses back") {
  using cluster::LogStyle;
  const LogStyle styles[] = {LogStyle::kDmesg, LogStyle::kDmesgT, LogStyle::kJournal, LogStyle::kSyslog,
                             LogStyle::kBare};
  const int codes[] = {13,  31,  43,  45,  46,  48,  62,  63,  64,  74,  79,  94,  95,  109,
                       119, 120, 136, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154, 8};
  struct Owner {
    std::optional<int> pid;
    std::string name;
    bool unknown_owner;
  };
  const Owner owners[] = {{1234, "python3", false},
                          {std::nullopt, "", false},
                          {std::nullopt, "", true},
                          {77, "", false},
                          {std::nullopt, "torchrun", false}};
  int lines = 0;
  for (LogStyle style : styles) {
    for (int code : codes) {
      for (const Owner& o : owners) {
        cluster::XidLine x{"0000:3b:00", code, o.pid, o.name, "", o.unknown_owner};
        std::string text = cluster::FormatXidLine(x, style, 1234.567890, "gpu-node-7");
        INFO("line: ", text);
        auto e = ParseXidLine(text);
        REQUIRE(e.has_value());
        CHECK(e->code == code);
        CHECK(e->pci == "0000:3b:00");
        CHECK(e->pid == o.pid);
        CHECK(e->process_name == o.name);
        CHECK(e->message == cluster::DefaultXidMessage(code));
        CHECK(e->timestamp.has_value() == (style != LogStyle::kBare));
        bool has_host = style == LogStyle::kJournal || style == LogStyle::kSyslog;
        CHECK(e->host == (has_host ? "gpu-node-7" : ""));
        bool nvlink = code == 74 || (code >= 144 && code <= 150);
        CHECK(e->link == (nvlink ? std::optional<int>(0) : std::nullopt));
        if (code == 154) CHECK(e->recovery_action == 1);
        ++lines;
      }
    }
  }
  CHECK(lines == 5 * 28 * 5);
}

TEST_CASE("round trip: NVLink links, recovery actions and SXids") {
  using cluster::LogStyle;
  for (int code : {74, 144, 147, 149, 150}) {
    for (int link : {0, 5, 14, 17}) {
      cluster::XidLine x{"0008:01:00", code, 2415, "python", cluster::NvlinkXidMessage(code, link), false};
      auto e = ParseXidLine(cluster::FormatXidLine(x, LogStyle::kDmesg, 99.5, "h"));
      REQUIRE(e.has_value());
      CHECK(e->link == link);
      CHECK(e->action == XidAction::kCheckNvlink);
    }
  }
  for (int to = 0; to <= 7; ++to) {
    cluster::XidLine x{"0000:3b:00", 154, std::nullopt, "", cluster::RecoveryActionMessage(0, to), false};
    auto e = ParseXidLine(cluster::FormatXidLine(x, LogStyle::kJournal, 5, "h"));
    REQUIRE(e.has_value());
    CHECK(e->recovery_action == to);
    CHECK(e->action == RecommendedAction(154, to));
  }
  for (bool fatal : {true, false}) {
    cluster::SxidLine s{3, "0000:05:00.0", 20034, fatal, "Link 46 LTSSM Fault Up"};
    auto e = ParseXidLine(cluster::FormatSxidLine(s, LogStyle::kSyslog, 12.25, "h"));
    REQUIRE(e.has_value());
    CHECK(e->is_sxid);
    CHECK(e->nvswitch == "nvidia-nvswitch3");
    CHECK(e->pci == "0000:05:00.0");
    CHECK(e->code == 20034);
    CHECK(e->severity == (fatal ? SxidSeverity::kFatal : SxidSeverity::kNonFatal));
    CHECK(e->link == 46);
    CHECK(e->message == "Link 46 LTSSM Fault Up");
  }
}

}  // namespace
}  // namespace rackchaos::healer
