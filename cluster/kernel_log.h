// Kernel log lines as the simulated cluster writes them: NVIDIA XID (GPU) and SXid (NVSwitch) lines
// under the prefix of the tool that would show them (dmesg, dmesg -T, journalctl -k, syslog).
//
// "Injected faults must look like real ones": every line made here is what the driver prints, so the
// healer's real parser (healer/xid.h) reads simulated and real logs alike. Pure functions of their
// arguments: no clock is read (wall times are the simulated boot time plus the uptime), no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rackchaos::cluster {

enum class LogStyle {
  kDmesg,    // "[ 1234.567890] NVRM: ..."
  kDmesgT,   // "[Mon Nov 30 06:02:21 2026] NVRM: ..."
  kJournal,  // "Nov 30 06:02:21 host kernel: NVRM: ..."   (journalctl -k, short format)
  kSyslog,   // "2026-11-30T06:02:21.123456+00:00 host kernel: [ 1234.567890] NVRM: ..."
  kBare,     // "NVRM: ..."
};

// Wall-clock time of every simulated node's boot, 2026-11-30T00:00:00Z (a Monday), in Unix seconds.
// Wall-clock prefixes print this plus the uptime, in UTC.
inline constexpr int64_t kSimulatedBootUnixSeconds = 1795996800;

struct XidLine {
  std::string pci;  // as the driver prints it: "0000:3b:00"
  int code = 0;
  std::optional<int> pid;
  std::string process_name;
  std::string message;  // empty -> DefaultXidMessage(code)
  // Only when pid is unset and process_name empty: print "pid='<unknown>', name=<unknown>" (newer
  // drivers, faults no process owns) instead of leaving both fields out (e.g. XID 79, 149, 154).
  bool unknown_owner = false;
};

struct SxidLine {
  int nvswitch = 0;  // prints as "nvidia-nvswitch<N>"
  std::string pci;   // the switch's address with function: "0000:05:00.0"
  int code = 0;
  bool fatal = false;
  std::string message;  // e.g. "Link 46 LTSSM Fault Up"
};

// "<prefix>NVRM: Xid (PCI:<pci>): <code>[, pid=<pid>, name=<name>][, <message>]". A set pid with an
// empty name prints "name=<unknown>"; an unset pid with a name prints "pid='<unknown>'".
// `uptime_s` (seconds since boot; negative or NaN count as 0) feeds the dmesg times and the wall
// times; `host` is printed by the journal and syslog styles only.
std::string FormatXidLine(const XidLine& line, LogStyle style, double uptime_s, const std::string& host);

// "<prefix>nvidia-nvswitch<N>: SXid (PCI:<pci>): <code>, Fatal|Non-fatal, <message>".
std::string FormatSxidLine(const SxidLine& line, LogStyle style, double uptime_s, const std::string& host);

// Any kernel text (noise lines included) under the prefix of `style`.
std::string FormatKernelLine(std::string_view text, LogStyle style, double uptime_s, const std::string& host);

// A realistic free-text tail for the codes the healer acts on (13, 31, 43, 45, 46, 48, 62, 63, 64,
// 74, 79, 94, 95, 109, 119, 120, 136, 140, 143, 144-150, 154), "" for others. Illustrative: the
// driver's exact text varies by code detail and driver branch; 144-148 and 150 are placeholders in
// the NVLink 5 shape. 74 and 144-150 name link 0; 154 changes the recovery action from 0 to 1.
const char* DefaultXidMessage(int code);

// NVLink tails naming `link`: 74 -> "NVLink: fatal error detected on link 14(0x0, ...)"; 149 ->
// "NETIR_LINK_EVT Fatal XC0 i0 Link 14 (0x...)"; other NVLink 5 codes -> the placeholder shape.
std::string NvlinkXidMessage(int code, int link);

// XID 154 tail: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)".
std::string RecoveryActionMessage(int from, int to);

}  // namespace rackchaos::cluster
