#include "cluster/kernel_log.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

// Exact text per style. That the healer's parser reads every line back is tested in
// tests/healer/xid_test.cpp (the healer depends on the cluster, not the other way round).
namespace rackchaos::cluster {
namespace {

const XidLine kFallenOff{"0000:3b:00", 79, 1234, "python3", "", false};
constexpr const char* kFallenOffText =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.";

TEST_CASE("each style prints the prefix its tool prints") {
  const double uptime = 21741.567890;  // 06:02:21.567890 after the simulated boot
  CHECK(FormatXidLine(kFallenOff, LogStyle::kBare, uptime, "n1") == kFallenOffText);
  CHECK(FormatXidLine(kFallenOff, LogStyle::kDmesg, uptime, "n1") ==
        std::string("[21741.567890] ") + kFallenOffText);
  CHECK(FormatXidLine(kFallenOff, LogStyle::kDmesgT, uptime, "n1") ==
        std::string("[Mon Nov 30 06:02:21 2026] ") + kFallenOffText);
  CHECK(FormatXidLine(kFallenOff, LogStyle::kJournal, uptime, "n1") ==
        std::string("Nov 30 06:02:21 n1 kernel: ") + kFallenOffText);
  CHECK(FormatXidLine(kFallenOff, LogStyle::kSyslog, uptime, "n1") ==
        std::string("2026-11-30T06:02:21.567890+00:00 n1 kernel: [21741.567890] ") + kFallenOffText);
}

TEST_CASE("dmesg pads seconds to five columns and rounds to microseconds") {
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, 1234.5678904, "h") == "[ 1234.567890] x");
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, 0.0000005, "h") == "[    0.000001] x");
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, 171167.620236, "h") == "[171167.620236] x");
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, -3, "h") == "[    0.000000] x");
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, std::nan(""), "h") == "[    0.000000] x");
  CHECK(FormatKernelLine("x", LogStyle::kDmesg, std::numeric_limits<double>::infinity(), "h") ==
        "[    0.000000] x");
}

TEST_CASE("wall-clock styles roll over days, months and years") {
  const double kDay = 86400;
  // Day 3 of December: dmesg -T pads the day with a space, journalctl with a zero.
  CHECK(FormatKernelLine("x", LogStyle::kDmesgT, 3 * kDay + 5, "h") == "[Thu Dec  3 00:00:05 2026] x");
  CHECK(FormatKernelLine("x", LogStyle::kJournal, 3 * kDay + 5, "h") == "Dec 03 00:00:05 h kernel: x");
  CHECK(FormatKernelLine("x", LogStyle::kSyslog, 32 * kDay + 0.25, "h") ==
        "2027-01-01T00:00:00.250000+00:00 h kernel: [2764800.250000] x");
}

TEST_CASE("owner fields: known, unknown, absent") {
  XidLine x{"0000:3b:00", 79, std::nullopt, "", "", false};
  CHECK(FormatXidLine(x, LogStyle::kBare, 0, "h") ==
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  x.unknown_owner = true;
  CHECK(FormatXidLine(x, LogStyle::kBare, 0, "h") ==
        "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  x = {"0000:3b:00", 13, 42, "", "boom", false};
  CHECK(FormatXidLine(x, LogStyle::kBare, 0, "h") ==
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=42, name=<unknown>, boom");
  x = {"0000:3b:00", 13, std::nullopt, "python3", "boom", false};
  CHECK(FormatXidLine(x, LogStyle::kBare, 0, "h") ==
        "NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=python3, boom");
  x = {"0000:3b:00", 8, std::nullopt, "", "", false};  // no default text for 8: the line ends at the code
  CHECK(FormatXidLine(x, LogStyle::kBare, 0, "h") == "NVRM: Xid (PCI:0000:3b:00): 8");
}

TEST_CASE("SXid lines") {
  SxidLine fatal{3, "0000:05:00.0", 20034, true, "Link 46 LTSSM Fault Up"};
  CHECK(FormatSxidLine(fatal, LogStyle::kBare, 0, "h") ==
        "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 46 LTSSM Fault Up");
  SxidLine nonfatal{0, "0000:07:00.0", 12028, false, "Link 32 egress non-posted PRIV error (First)"};
  CHECK(FormatSxidLine(nonfatal, LogStyle::kDmesg, 1455, "h") ==
        "[ 1455.000000] nvidia-nvswitch0: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 32 egress "
        "non-posted PRIV error (First)");
}

TEST_CASE("default, NVLink and recovery-action messages") {
  CHECK(std::string(DefaultXidMessage(79)) == "GPU has fallen off the bus.");
  CHECK(std::string(DefaultXidMessage(8)).empty());
  for (int code : {13,  31,  43,  45,  46,  48,  62,  63,  64,  74,  79,  94,  95, 109,
                   119, 120, 136, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154}) {
    INFO("code ", code);
    CHECK_FALSE(std::string(DefaultXidMessage(code)).empty());
  }
  CHECK(NvlinkXidMessage(74, 14) ==
        "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  CHECK(NvlinkXidMessage(149, 9).starts_with("NETIR_LINK_EVT Fatal XC0 i0 Link 09 (0x"));
  CHECK(NvlinkXidMessage(145, 5) == "NVLink: Link 5 error (0x00000000)");
  CHECK(RecoveryActionMessage(0, 1) ==
        "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  CHECK(RecoveryActionMessage(1, 2) ==
        "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x2 (Node Reboot Required)");
  CHECK(RecoveryActionMessage(0, 9) == "GPU recovery action changed from 0x0 (None) to 0x9 (Unknown)");
}

}  // namespace
}  // namespace rackchaos::cluster
