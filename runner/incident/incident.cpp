#include "runner/incident/incident.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rackchaos::incident {
namespace {

std::string Shown(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string OutOfRange(const std::string& what, const std::string& value, const std::string& range) {
  return what + " " + value + " is out of range; expected " + range;
}

}  // namespace

std::string CheckEventNumbers(const IncidentEvent& e) {
  if (!e.out_of_range.empty()) return e.out_of_range;
  const double t = e.time.seconds;
  if (e.time.axis == TimeAxis::kRelative && !(t >= 0 && t <= kMaxRelativeSeconds))
    return OutOfRange("the time", Shown(t) + " s", "0 to " + Shown(kMaxRelativeSeconds) +
                                                       " s since boot or the timeline's start (100 years)");
  if (e.time.axis == TimeAxis::kWall && !(t >= 0 && t <= kMaxWallSeconds))
    return OutOfRange("the time", Shown(t) + " s since 1970", "1970-01-01 to 9999-12-31");
  const bool xid = e.kind == EventKind::kXid || e.kind == EventKind::kSxid;
  if (xid && (e.code < 0 || e.code > kMaxXidCode))
    return OutOfRange(e.kind == EventKind::kXid ? "the Xid code" : "the SXid code", std::to_string(e.code),
                      "0 to " + std::to_string(kMaxXidCode));
  const bool nic = e.kind == EventKind::kNicDown || e.kind == EventKind::kNicUp;
  if (e.link && (*e.link < 0 || *e.link > (nic ? kMaxNicPort : kMaxLink)))
    return OutOfRange(nic ? "the NIC port" : "the NVLink number", std::to_string(*e.link),
                      "0 to " + std::to_string(nic ? kMaxNicPort : kMaxLink));
  if (e.rank && (*e.rank < 0 || *e.rank > kMaxNcclRank))
    return OutOfRange("the NCCL rank", std::to_string(*e.rank), "0 to " + std::to_string(kMaxNcclRank));
  if (e.device && (*e.device < 0 || *e.device > kMaxNcclDevice))
    return OutOfRange("the CUDA device", std::to_string(*e.device), "0 to " + std::to_string(kMaxNcclDevice));
  if (!e.job.empty() && e.job[0] >= '0' && e.job[0] <= '9') {
    size_t n = 0;
    int64_t id = 0;
    for (; n < e.job.size() && e.job[n] >= '0' && e.job[n] <= '9' && id <= kMaxSlurmJobId; ++n) id = id * 10 + (e.job[n] - '0');
    if (id > kMaxSlurmJobId)
      return OutOfRange("the Slurm job id", e.job.substr(0, std::min<size_t>(e.job.size(), 24)),
                        "1 to " + std::to_string(kMaxSlurmJobId));
  }
  return "";
}

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kXid: return "xid";
    case EventKind::kSxid: return "sxid";
    case EventKind::kNicDown: return "nic_down";
    case EventKind::kNicUp: return "nic_up";
    case EventKind::kNodeDrain: return "node_drain";
    case EventKind::kNodeDown: return "node_down";
    case EventKind::kNodeResume: return "node_resume";
    case EventKind::kJobRequeue: return "job_requeue";
    case EventKind::kJobKill: return "job_kill";
    case EventKind::kNcclTimeout: return "nccl_timeout";
    case EventKind::kNcclWarn: return "nccl_warn";
    case EventKind::kNcclError: return "nccl_error";
    case EventKind::kFaultStart: return "fault_start";
    case EventKind::kFaultEnd: return "fault_end";
    case EventKind::kNote: return "note";
  }
  return "note";
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kFatal: return "fatal";
    case Severity::kNonFatal: return "non_fatal";
    case Severity::kUnknown: break;
  }
  return "unknown";
}

// "usb 1-3: new device 42" and "usb 2-1: new device 7" count as one pattern; control and non-ASCII
// bytes become '?', so the summary prints safely.
void LinePatternInto(std::string_view body, std::string& out) {
  out.clear();
  for (size_t i = 0; i < body.size() && out.size() < kPatternChars;) {
    auto c = static_cast<unsigned char>(body[i]);
    if (c >= '0' && c <= '9') {
      size_t j = i + 1;
      if (c == '0' && j < body.size() && (body[j] == 'x' || body[j] == 'X')) ++j;  // 0x1f
      while (j < body.size() &&
             (std::isdigit(static_cast<unsigned char>(body[j])) ||
              (j > i + 1 && body[i + 1] == 'x' && std::isxdigit(static_cast<unsigned char>(body[j])))))
        ++j;
      out += '#';
      i = j;
    } else {
      out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
      ++i;
    }
  }
}

std::string LinePattern(std::string_view body) {
  std::string out;
  LinePatternInto(body, out);
  return out;
}

void CountNotUnderstood(Incident& incident, std::string_view body, int file, int64_t line, std::string& scratch) {
  ++incident.not_understood;
  LinePatternInto(body, scratch);
  auto it = incident.patterns.find(std::string_view(scratch));
  if (it == incident.patterns.end()) {
    std::string pattern = incident.patterns.size() >= kMaxPatterns ? std::string("(other patterns)") : scratch;
    it = incident.patterns.try_emplace(std::move(pattern), PatternCount{0, file, line}).first;
  }
  ++it->second.count;
}

std::vector<std::pair<std::string, PatternCount>> TopPatterns(const Incident& incident, size_t n) {
  std::vector<std::pair<std::string, PatternCount>> all(incident.patterns.begin(), incident.patterns.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  if (n != SIZE_MAX && all.size() > n) all.resize(n);
  return all;
}

}  // namespace rackchaos::incident
