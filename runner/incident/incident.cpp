#include "runner/incident/incident.h"

#include <algorithm>
#include <cctype>

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
    case EventKind::kFaultStart: return "fault_start";
    case EventKind::kFaultEnd: return "fault_end";
    case EventKind::kNote: return "note";
  }
  return "note";
}

// Digits and hex-looking words become '#', so "usb 1-3: new device 42" and "usb 2-1: new device 7"
// count as one pattern; control and non-ASCII bytes become '?', so the summary prints safely.
std::string LinePattern(const std::string& body) {
  std::string out;
  for (size_t i = 0; i < body.size() && out.size() < kPatternChars;) {
    auto c = static_cast<unsigned char>(body[i]);
    if (std::isalnum(c)) {
      size_t j = i;
      bool digit = false, non_hex = false;
      while (j < body.size() && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_')) {
        digit |= std::isdigit(static_cast<unsigned char>(body[j])) != 0;
        non_hex |= std::isxdigit(static_cast<unsigned char>(body[j])) == 0;
        ++j;
      }
      if (digit && (!non_hex || std::isdigit(c))) {
        out += '#';
      } else {
        out.append(body, i, std::min(j - i, kPatternChars - out.size()));
      }
      i = j;
    } else {
      out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
      ++i;
    }
  }
  return out;
}

void CountNotUnderstood(Incident& incident, const std::string& body, int file, int64_t line) {
  ++incident.not_understood;
  std::string pattern = LinePattern(body);
  auto it = incident.patterns.find(pattern);
  if (it == incident.patterns.end()) {
    if (incident.patterns.size() >= kMaxPatterns) pattern = "(other patterns)";
    it = incident.patterns.try_emplace(pattern, PatternCount{0, file, line}).first;
  }
  ++it->second.count;
}

std::vector<std::pair<std::string, PatternCount>> TopPatterns(const Incident& incident, size_t n) {
  std::vector<std::pair<std::string, PatternCount>> all(incident.patterns.begin(), incident.patterns.end());
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace rackchaos::incident
