// The per-format line parsers behind IncidentImporter (runner/incident/importer.h). Each looks at one
// line (already split by SplitLogLine) and answers whether it understood it; understood lines may add
// events. Formats that span lines (CSV and sacctmgr headers, `scontrol show node` records, slurmctld
// "reason set to" before "state set to") keep their state in FileState, one per input file.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runner/incident/incident.h"
#include "runner/incident/log_line.h"

namespace rackchaos::incident {

enum class LineResult { kNotUnderstood, kEvent, kFollowUp };

// A header-driven table: CSV timeline, `sacctmgr show event` (-P or fixed width), `sinfo -R`.
struct TableState {
  enum class Kind { kNone, kCsvTimeline, kSacctPipe, kSacctFixed, kSinfoReason } kind = Kind::kNone;
  std::vector<std::string> columns;              // lower-cased header names
  std::vector<std::pair<size_t, size_t>> spans;  // kSacctFixed: [begin, end) of each column
  bool awaiting_dashes = false;                  // kSacctFixed: header seen, dash line next
  std::string header_line;
};

struct FileState {
  TableState table;
  std::string scontrol_node;                          // the NodeName of the `scontrol show node` record being read
  std::string scontrol_state;                         // its State=
  std::map<std::string, std::string> pending_reason;  // slurmctld: node -> last "reason set to"
  // slurmctld prints "requeue job JobId=N due to failure of node X" and then "Requeuing JobId=N":
  // one requeue. The job id of the first, so the second is a follow-up.
  std::string last_requeue_job;
  bool nccl_last_error_pending = false;  // "Last error:" seen: the next line is its text
  std::string nvrm_gpu;                  // "NVRM: The NVIDIA GPU X" seen: the message about X goes on
  LogTime nvrm_gpu_time;
};

// Emits at most a bounded number of events per line (hostlists expand to at most kMaxNodesPerLine).
inline constexpr size_t kMaxNodesPerLine = 4096;

LineResult ParseKernelLine(std::string_view line, const SplitLine& split, FileState& state,
                           std::vector<IncidentEvent>& out);
LineResult ParseSlurmLine(const SplitLine& split, FileState& state, std::vector<IncidentEvent>& out);
LineResult ParseTimelineLine(std::string_view line, FileState& state, std::vector<IncidentEvent>& out);
// NCCL and PyTorch's ProcessGroupNCCL (runner/incident/nccl_lines.cpp).
LineResult ParseNcclLine(std::string_view line, const SplitLine& split, FileState& state,
                         std::vector<IncidentEvent>& out);
// Header and rows of the tables above (CSV timeline, sacctmgr, sinfo -R).
LineResult ParseTableLine(std::string_view line, FileState& state, std::vector<IncidentEvent>& out);

// "gpu[01-03,07],cpu1" -> gpu01 gpu02 gpu03 gpu07 cpu1; at most `limit` names; malformed -> as is.
std::vector<std::string> ExpandHostlist(std::string_view list, size_t limit);
// "" when `list` expands to at most `limit` names; else why not (a range that runs backwards, "gpu[5-1]",
// or too many names, "gpu[0-99999999]"), for IncidentEvent::out_of_range.
std::string HostlistProblem(std::string_view list, size_t limit);

// Splits a CSV line (RFC 4180 quotes, "" escapes) into fields.
std::vector<std::string> SplitCsv(std::string_view line);

// The generic timeline's event word -> its kind ("gpu_fail" -> kFaultStart, "resume" -> kNodeResume).
EventKind TimelineEventKind(std::string_view word);
// A time from a timeline row: a number (relative seconds) or an ISO / ctime wall time.
LogTime ParseAnyTime(std::string_view text);

}  // namespace rackchaos::incident
