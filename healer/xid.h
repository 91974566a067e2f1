// NVIDIA XID (GPU) and SXid (NVSwitch) kernel log lines: a tolerant parser and the action NVIDIA's
// catalogue recommends for each code.
//
// The parser is a pure function of one line. It accepts the driver's line wherever it sits in the
// line (bare, or behind a `dmesg`, `dmesg -T`, `journalctl -k` or syslog prefix) and is generic over
// the free text that follows the code. It never throws, never allocates more than a copy of the line,
// and runs in time linear in the line length. Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rackchaos::healer {

// What an operator (or the healer) should do about one event, coarsest first where they overlap.
enum class XidAction {
  kNone,           // informational or a follow-on of another error
  kRestartApp,     // application-level fault: the GPU is fine
  kResetGpu,       // `nvidia-smi -r` after draining the GPU's processes
  kRebootNode,     // the GPU is unreachable until the node reboots
  kDrainAndReset,  // XID 154 action 4: drain peer-to-peer traffic, then reset the GPU
  kCheckNvlink,    // NVLink fault: drain, check the link and its peer, reset
  kDrainP2P,       // XID 154 action 3
  kRecoverImex,    // XID 154 action 5: recover the IMEX domain
  kBusReset,       // XID 154 action 6: reset the GPU's PCIe bus
  kSystemReboot,   // XID 154 action 7
  kInvestigate,    // unknown code or undecodable payload: a human looks
};

// SXid lines print "Fatal" or "Non-fatal" after the code; XID lines carry no severity field.
enum class SxidSeverity { kUnspecified, kFatal, kNonFatal };

struct XidEvent {
  bool is_sxid = false;
  // GPU: normalized "dddd:bb:dd", lower case, 4-digit domain ("PCI:0000:3B:00" -> "0000:3b:00";
  // an 8-digit domain that fits in 16 bits is shortened; a missing domain becomes "0000").
  // SXid: the NVSwitch's address as printed, lower-cased, with its function ("0000:05:00.0").
  std::string pci;
  std::string nvswitch;  // SXid only: the driver instance that printed it, e.g. "nvidia-nvswitch3"
  int code = 0;
  std::optional<int> pid;    // unset when absent or printed as '<unknown>'
  std::string process_name;  // empty when absent or printed as <unknown>
  std::string message;       // the free text after the code and the pid/name (or severity) fields
  // The log prefix's time as printed, without brackets: "1234.567890" (dmesg), "Mon Nov 30 06:02:21
  // 2026" (dmesg -T), "Nov 30 06:02:21" (journalctl), "2026-11-30T06:02:21.123456+00:00" (syslog).
  std::optional<std::string> timestamp;
  std::string host;                    // from journalctl/syslog prefixes; empty otherwise
  std::optional<int> link;             // first "link N" / "Link N" in the message
  std::optional<int> recovery_action;  // XID 154: the value after "to" (0..7 per NVML)
  SxidSeverity severity = SxidSeverity::kUnspecified;
  // SXid follow-up line ("Severity 0 Engine instance ...", "Data {...}") that repeats the code of
  // the line before it. Count SXid events by the lines where this is false.
  bool sxid_detail = false;
  XidAction action = XidAction::kInvestigate;
};

// Parses one kernel log line (no trailing newline needed; one is tolerated). Returns nullopt when the
// line is not an XID/SXid line: other NVRM lines, noise, garbage, binary bytes, or the word "Xid"
// without the "Xid (PCI:...): CODE" form. The legacy form "NVRM: Xid (0000:03:00): 14, ..." (no
// "PCI:") is accepted only behind "NVRM: ". `action` is RecommendedAction() for XIDs and
// RecommendedSxidAction() for SXids.
std::optional<XidEvent> ParseXidLine(std::string_view line);

// The action NVIDIA's catalogue recommends for an XID code. For 154 it follows `recovery_action`
// (0 none, 1 reset GPU, 2 reboot node, 3 drain P2P, 4 drain and reset, 5 recover IMEX, 6 bus reset,
// 7 system reboot); 154 without a known value, and every code not in the table, -> kInvestigate.
XidAction RecommendedAction(int xid, std::optional<int> recovery_action);

// rackchaos policy for SXids (the catalogue is per code and not mirrored here): fatal -> kCheckNvlink,
// non-fatal and detail lines -> kNone, unspecified -> kInvestigate.
XidAction RecommendedSxidAction(SxidSeverity severity, bool sxid_detail);

// Stable snake_case names for reports: "none", "restart_app", "reset_gpu", ...
const char* XidActionName(XidAction action);
const char* SxidSeverityName(SxidSeverity severity);  // "unspecified", "fatal", "non_fatal"

// Short description of an XID code, e.g. 79 -> "GPU has fallen off the bus"; "unknown XID" otherwise.
const char* XidDescription(int xid);

}  // namespace rackchaos::healer
