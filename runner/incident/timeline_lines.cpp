// The generic incident timeline as JSON lines: one flat object per line with "time", "component",
// "event" and "detail" (and optionally "host"). Nested values are not understood (and counted).
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/strings.h"
#include "runner/incident/line_parsers.h"

namespace rackchaos::incident {
namespace {

using std::string_view;
constexpr size_t kMaxFields = 32;

void SkipSpace(string_view& s) { s = TrimLeft(s); }

void AppendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A JSON string at the front of `s` (which starts at the opening quote).
bool TakeString(string_view& s, std::string& out) {
  if (s.empty() || s[0] != '"') return false;
  s.remove_prefix(1);
  while (!s.empty()) {
    char c = s[0];
    s.remove_prefix(1);
    if (c == '"') return true;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (s.empty()) return false;
    char esc = s[0];
    s.remove_prefix(1);
    switch (esc) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        unsigned cp = 0;
        if (s.size() < 4) return false;
        auto [p, ec] = std::from_chars(s.data(), s.data() + 4, cp, 16);
        if (ec != std::errc() || p != s.data() + 4) return false;
        s.remove_prefix(4);
        AppendUtf8(out, cp);
        break;
      }
      default: out += esc;  // \" \\ \/
    }
  }
  return false;
}

// A scalar value: string, number, true/false/null (as text). Objects and arrays fail.
bool TakeScalar(string_view& s, std::string& out) {
  if (!s.empty() && s[0] == '"') return TakeString(s, out);
  size_t n = 0;
  while (n < s.size() && n < 64 &&
         (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '.' || s[n] == '-' || s[n] == '+'))
    ++n;
  if (n == 0) return false;
  out.assign(s.substr(0, n));
  s.remove_prefix(n);
  return true;
}

bool ParseFlatObject(string_view s, std::vector<std::pair<std::string, std::string>>& fields) {
  SkipSpace(s);
  if (s.empty() || s[0] != '{') return false;
  s.remove_prefix(1);
  SkipSpace(s);
  if (!s.empty() && s[0] == '}') return true;
  while (fields.size() < kMaxFields) {
    SkipSpace(s);
    std::string key, value;
    if (!TakeString(s, key)) return false;
    SkipSpace(s);
    if (s.empty() || s[0] != ':') return false;
    s.remove_prefix(1);
    SkipSpace(s);
    if (!TakeScalar(s, value)) return false;
    fields.emplace_back(std::move(key), std::move(value));
    SkipSpace(s);
    if (s.empty()) return false;
    if (s[0] == '}') {
      s.remove_prefix(1);
      SkipSpace(s);
      return s.empty();
    }
    if (s[0] != ',') return false;
    s.remove_prefix(1);
  }
  return false;
}

std::string Get(const std::vector<std::pair<std::string, std::string>>& fields,
                std::initializer_list<string_view> names) {
  for (string_view name : names) {
    for (const auto& [k, v] : fields) {
      if (k == name) return v;
    }
  }
  return {};
}

}  // namespace

LogTime ParseAnyTime(string_view text) {
  text = Trim(text);
  if (auto t = ParseIsoLogTime(text)) return *t;
  if (auto t = ParseCtimeTime(text)) return {TimeAxis::kWall, *t, false};
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // Any number is a relative time here; one outside 0 .. kMaxRelativeSeconds (negative, huge, inf) fails
  // the import at its line (CheckEventNumbers) rather than leave the row not understood.
  if (!text.empty() && (ec == std::errc() || ec == std::errc::result_out_of_range) && p == text.data() + text.size())
    return {TimeAxis::kRelative, ec == std::errc() ? v : INFINITY, false};
  return {};
}

EventKind TimelineEventKind(string_view word) {
  const std::string w = ToLower(word);
  for (string_view f : {"gpu_fail", "link_down", "process_crash", "tray_pull", "valve_fail", "gpu_throttle"}) {
    if (w == f) return EventKind::kFaultStart;
  }
  for (string_view f : {"end", "resolved", "recovered", "up", "link_up", "revert"}) {
    if (w == f) return EventKind::kFaultEnd;
  }
  if (w == "drain") return EventKind::kNodeDrain;
  if (w == "down") return EventKind::kNodeDown;
  if (w == "resume") return EventKind::kNodeResume;
  if (w == "requeue") return EventKind::kJobRequeue;
  if (w == "xid") return EventKind::kXid;
  return EventKind::kNote;
}

LineResult ParseTimelineLine(string_view line, FileState&, std::vector<IncidentEvent>& out) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (!ParseFlatObject(line, fields)) return LineResult::kNotUnderstood;
  std::string event = Get(fields, {"event"});
  LogTime time = ParseAnyTime(Get(fields, {"time", "timestamp", "ts"}));
  if (event.empty() || time.axis == TimeAxis::kNone) return LineResult::kNotUnderstood;
  IncidentEvent e;
  e.kind = TimelineEventKind(event);
  e.time = time;
  e.address = Get(fields, {"component"});
  e.host = Get(fields, {"host", "node"});
  e.action = ToLower(event);
  e.detail = Get(fields, {"detail", "message"});
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

}  // namespace rackchaos::incident
