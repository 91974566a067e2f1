#include "runner/incident/incident.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace rackchaos::incident {

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
