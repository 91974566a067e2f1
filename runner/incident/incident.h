// An incident as imported from its logs: a list of small events (GPU Xid, NVSwitch SXid, NIC link
// change, scheduler drain/resume/down, job requeue or kill, NCCL watchdog timeouts, warnings and
// errors, generic timeline rows) with their times, plus a count of every line that was not understood,
// summarized by pattern. An Xid keeps its severity and, when it is the consequence of an earlier Xid
// of the same GPU (45, 154, 63 ...), the index of that cause.
//
// Import is streamed (runner/incident/importer.h): only the events are kept, never the lines, and the
// pattern table and event list are bounded, so a multi-gigabyte log takes bounded memory. Plain values;
// no dependency on the runner or the simulator (parsing lives below them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos::incident {

// Which axis a time is on. Wall times are Unix seconds (UTC). Relative times are seconds on one
// shared axis: dmesg uptimes and numeric offsets from a generic timeline.
enum class TimeAxis { kNone, kWall, kRelative };

struct LogTime {
  TimeAxis axis = TimeAxis::kNone;
  double seconds = 0;
  bool year_guessed = false;  // a journalctl/syslog stamp without a year: fixed up by FinishIncident
  bool zoned = false;         // a wall time that said its zone (ISO 'Z' or offset); others are in --tz
};

enum class EventKind {
  kXid,         // NVRM: Xid (GPU)
  kSxid,        // nvidia-nvswitchN: SXid (NVSwitch)
  kNicDown,     // mlx5_core ...: Link down / Cable unplugged
  kNicUp,       // mlx5_core ...: Link up
  kNodeDrain,   // Slurm: drained (reason)
  kNodeDown,    // Slurm: down / not responding
  kNodeResume,  // Slurm: resumed / idle again / responding again
  kJobRequeue,  // Slurm: job requeued (job id in `job`, the failed node in `host` when printed)
  kJobKill,     // Slurm: job killed on a failed node
  kNcclTimeout,  // PyTorch ProcessGroupNCCL watchdog: a collective timed out (rank in `rank`)
  kNcclWarn,     // NCCL WARN line (host, CUDA device; NET/IB completion errors, async port events ...)
  kNcclError,    // an NCCL error surfaced to the application (ncclRemoteError, "NCCL error: ...")
  kFaultStart,  // generic timeline: event names a fault kind (an injector), e.g. gpu_fail
  kFaultEnd,    // generic timeline: end / resolved / up / recovered
  kNote,        // generic timeline: anything else (shown, not replayed)
};
const char* EventKindName(EventKind kind);  // "xid", "sxid", "nic_down", ...

// How bad an event is for its component: fatal = the part needs a reset, a reboot or a repair before
// it is used again (Xids whose catalogue action is reset_gpu, reboot_node, ...; an NVLink error the
// driver calls fatal; a fatal SXid; a NIC link down); non-fatal = the application restarts or nothing
// is needed (restart_app, none). Unknown when neither the catalogue nor the line says.
enum class Severity { kUnknown, kFatal, kNonFatal };
const char* SeverityName(Severity severity);  // "unknown", "fatal", "non_fatal"

struct IncidentEvent {
  EventKind kind = EventKind::kNote;
  LogTime time;
  std::string host;     // host or Slurm node name; empty when the line does not say (dmesg)
  std::string address;  // GPU PCI "0000:3b:00", NIC PCI "0000:1a:00.0", switch PCI; generic: component
  std::string iface;    // NIC interface or RDMA device name ("ibp26s0", "mlx5_0"), when printed
  int code = 0;         // Xid/SXid code; numeric Slurm job id for kJobRequeue/kJobKill (0 when none)
  std::optional<int> link;             // NVLink number; NIC port for "Port: N Link ..."
  std::optional<int> recovery_action;  // Xid 154
  std::optional<int> rank;             // NCCL: the rank that printed it
  std::optional<int> device;           // NCCL WARN: the CUDA device ("[3]")
  Severity severity = Severity::kUnknown;
  std::string job;     // Slurm job id as printed ("81234", "12210_11(12238)")
  std::string action;  // Xid: recommended action name (healer/xid.h); generic: the event word
  std::string detail;  // driver message, Slurm reason, generic detail
  // A number of the line outside its bound (a hostlist of too many nodes, a rank past kMaxNcclRank ...),
  // said by the parser that read it: the import fails naming it with the file and line (issue 26).
  std::string out_of_range;
  int64_t caused_by = -1;  // index in Incident::events of the Xid this one follows from; -1 = none
  int file = 0;            // index into Incident::files
  int64_t line = 0;        // 1-based line in that file

  bool fatal() const { return severity == Severity::kFatal; }
};

// Lines not understood, grouped by a pattern (the line without its time prefix, every run of digits
// and every 0x number replaced by '#', other control or non-ASCII bytes by '?', cut to kPatternChars).
struct PatternCount {
  int64_t count = 0;
  int file = 0;
  int64_t first_line = 0;  // where it was first seen
};

// The bounds of the numbers a log line gives (issue 26: every number a user gives is bounded). A line
// understood with a number outside them fails the import with FILE:LINE and the valid range
// (IncidentImporter; CheckEventNumbers names the bound).
inline constexpr double kMaxRelativeSeconds = 3'155'760'000;  // an uptime or timeline offset: 100 years
inline constexpr double kMaxWallSeconds = 253'402'300'799;    // 9999-12-31T23:59:59Z
inline constexpr int kMaxXidCode = 99'999;                    // Xid and SXid codes (SXids have 5 digits)
inline constexpr int kMaxLink = 1'023;                        // NVLink numbers; NIC ports up to kMaxNicPort
inline constexpr int kMaxNicPort = 255;                       // an RDMA port number is 8 bits
inline constexpr int kMaxNcclRank = (1 << 30) - 1;
inline constexpr int kMaxNcclDevice = 4'095;                  // a CUDA device index on one host
inline constexpr int64_t kMaxSlurmJobId = 4'294'967'294;      // Slurm's job ids are 32 bits (NO_VAL excluded)
// "" when every number of `e` is in its bound; else the number, the bound and what it is, e.g.
// "NCCL rank 2000000000 is out of range; expected 0 to 1073741823".
std::string CheckEventNumbers(const IncidentEvent& e);

inline constexpr size_t kMaxEvents = 1'000'000;  // events kept; later ones are counted in dropped_events
inline constexpr size_t kMaxPatterns = 512;      // distinct patterns kept; others go to "(other)"
inline constexpr size_t kPatternChars = 64;
inline constexpr size_t kMaxLineBytes = 64 * 1024;  // longer lines are cut there (the rest is skipped)

struct Incident {
  std::vector<std::string> files;
  std::vector<IncidentEvent> events;
  int64_t lines = 0;  // lines read, blank lines included
  int64_t bytes = 0;
  int64_t understood = 0;      // lines that became events (or were known follow-ups: SXid detail lines)
  int64_t not_understood = 0;  // lines counted in `patterns`
  int64_t dropped_events = 0;  // understood beyond kMaxEvents
  int64_t overlong_lines = 0;  // lines longer than kMaxLineBytes
  std::map<std::string, PatternCount, std::less<>> patterns;
};

// The pattern a not-understood line is counted under.
std::string LinePattern(std::string_view body);
// The same into `out` (cleared first), so a caller can reuse one buffer.
void LinePatternInto(std::string_view body, std::string& out);

// Counts `body` (a line without its time prefix) as not understood; `scratch` is a reusable buffer.
void CountNotUnderstood(Incident& incident, std::string_view body, int file, int64_t line, std::string& scratch);

// The `n` most frequent patterns, most frequent first (ties by pattern text); every pattern when
// `n` is SIZE_MAX.
std::vector<std::pair<std::string, PatternCount>> TopPatterns(const Incident& incident, size_t n);

}  // namespace rackchaos::incident
