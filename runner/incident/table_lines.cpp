// Header-driven tables: the generic CSV timeline, `sacctmgr show event` (parsable -P or its fixed-width
// default with the dash line under the header) and `sinfo -R`. A header may appear anywhere in a file;
// rows after it are read in its layout.
#include <cctype>

#include "core/strings.h"
#include "runner/incident/line_parsers.h"

namespace rackchaos::incident {
namespace {

using std::string_view;
constexpr size_t kMaxColumns = 64;


std::vector<std::string> SplitOn(string_view s, char sep) {
  std::vector<std::string> out;
  while (out.size() < kMaxColumns) {
    size_t at = s.find(sep);
    out.emplace_back(Trim(s.substr(0, at)));
    if (at == string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

std::vector<std::string> Words(string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size() && out.size() < kMaxColumns) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

int IndexOf(const std::vector<std::string>& columns, string_view name) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Field(const std::vector<std::string>& row, int index) {
  return index >= 0 && static_cast<size_t>(index) < row.size() ? row[static_cast<size_t>(index)] : std::string();
}

std::vector<std::string> Lowered(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(ToLower(s));
  return out;
}

LineResult DetectHeader(string_view line, TableState& t) {
  if (line.find(',') != string_view::npos) {
    auto cols = Lowered(SplitCsv(line));
    if (IndexOf(cols, "time") >= 0 && IndexOf(cols, "event") >= 0) {
      t = {TableState::Kind::kCsvTimeline, cols, {}, false, {}};
      return LineResult::kFollowUp;
    }
  }
  if (line.find('|') != string_view::npos) {
    auto cols = Lowered(SplitOn(line, '|'));
    if (IndexOf(cols, "nodename") >= 0 && IndexOf(cols, "timestart") >= 0) {
      t = {TableState::Kind::kSacctPipe, cols, {}, false, {}};
      return LineResult::kFollowUp;
    }
  }
  auto words = Lowered(Words(line));
  if (IndexOf(words, "nodename") >= 0 && IndexOf(words, "timestart") >= 0) {
    t = {TableState::Kind::kSacctFixed, {}, {}, true, std::string(line)};
    return LineResult::kFollowUp;
  }
  if (words.size() >= 4 && words[0] == "reason" && words[1] == "user" && words[2] == "timestamp" &&
      words.back() == "nodelist") {
    t = {TableState::Kind::kSinfoReason, words, {}, false, {}};
    return LineResult::kFollowUp;
  }
  return LineResult::kNotUnderstood;
}

// The dash line under a fixed-width sacctmgr header gives the column spans.
LineResult TakeDashes(string_view line, TableState& t) {
  t.awaiting_dashes = false;
  if (line.find_first_not_of("- \t") != string_view::npos || line.find('-') == string_view::npos) {
    t.kind = TableState::Kind::kNone;
    return LineResult::kNotUnderstood;
  }
  size_t i = 0;
  while (i < line.size() && t.spans.size() < kMaxColumns) {
    while (i < line.size() && line[i] != '-') ++i;
    size_t j = i;
    while (j < line.size() && line[j] == '-') ++j;
    if (j > i) {
      t.spans.emplace_back(i, j);
      string_view head = i < t.header_line.size() ? string_view(t.header_line).substr(i, j - i) : string_view();
      t.columns.push_back(ToLower(Trim(head)));
    }
    i = j;
  }
  return LineResult::kFollowUp;
}

void EmitNodes(EventKind kind, const std::string& nodes, LogTime time, const std::string& reason,
               std::vector<IncidentEvent>& out) {
  if (std::string why = HostlistProblem(nodes, kMaxNodesPerLine); !why.empty()) {
    IncidentEvent e;
    e.out_of_range = std::move(why);
    out.push_back(std::move(e));
    return;
  }
  for (std::string& node : ExpandHostlist(nodes, kMaxNodesPerLine)) {
    IncidentEvent e;
    e.kind = kind;
    e.time = time;
    e.host = std::move(node);
    e.detail = reason;
    out.push_back(std::move(e));
  }
}

LineResult SacctRow(const std::vector<std::string>& row, const TableState& t, std::vector<IncidentEvent>& out) {
  std::string node = Field(row, IndexOf(t.columns, "nodename"));
  auto start = ParseIsoLogTime(Field(row, IndexOf(t.columns, "timestart")));
  if (!start) return LineResult::kNotUnderstood;
  if (node.empty()) return LineResult::kFollowUp;  // a cluster event (cpu count changes), not a node's
  std::string state = Field(row, IndexOf(t.columns, "state"));
  const std::string upper = ToUpper(state);
  EventKind kind = upper.find("DOWN") != std::string::npos || upper.find("FAIL") != std::string::npos
                       ? EventKind::kNodeDown
                       : EventKind::kNodeDrain;
  EmitNodes(kind, node, *start, Field(row, IndexOf(t.columns, "reason")), out);
  if (auto end = ParseIsoLogTime(Field(row, IndexOf(t.columns, "timeend"))))
    EmitNodes(EventKind::kNodeResume, node, *end, "", out);
  return LineResult::kEvent;
}

// "REASON USER TIMESTAMP NODELIST": the reason may hold spaces, so the row is read from the right.
LineResult SinfoRow(string_view line, std::vector<IncidentEvent>& out) {
  auto w = Words(line);
  if (w.size() < 4) return LineResult::kNotUnderstood;
  auto when = ParseIsoLogTime(w[w.size() - 2]);
  if (!when) return LineResult::kNotUnderstood;
  std::string reason;
  for (size_t i = 0; i + 3 < w.size(); ++i) reason += (i ? " " : "") + w[i];
  EmitNodes(EventKind::kNodeDrain, w.back(), *when, reason, out);
  return LineResult::kEvent;
}

LineResult CsvRow(string_view line, const TableState& t, std::vector<IncidentEvent>& out) {
  auto row = SplitCsv(line);
  std::string event = Field(row, IndexOf(t.columns, "event"));
  LogTime time = ParseAnyTime(Field(row, IndexOf(t.columns, "time")));
  if (event.empty() || time.axis == TimeAxis::kNone) return LineResult::kNotUnderstood;
  IncidentEvent e;
  e.kind = TimelineEventKind(event);
  e.time = time;
  e.address = Field(row, IndexOf(t.columns, "component"));
  e.host = Field(row, IndexOf(t.columns, "host"));
  e.action = ToLower(event);
  e.detail = Field(row, IndexOf(t.columns, "detail"));
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

}  // namespace

LineResult ParseTableLine(string_view line, FileState& state, std::vector<IncidentEvent>& out) {
  TableState& t = state.table;
  if (t.awaiting_dashes) return TakeDashes(line, t);
  if (DetectHeader(line, t) == LineResult::kFollowUp) return LineResult::kFollowUp;
  switch (t.kind) {
    case TableState::Kind::kCsvTimeline: return CsvRow(line, t, out);
    case TableState::Kind::kSacctPipe: return SacctRow(SplitOn(line, '|'), t, out);
    case TableState::Kind::kSacctFixed: {
      std::vector<std::string> row;
      for (size_t k = 0; k < t.spans.size(); ++k) {
        size_t b = t.spans[k].first;
        size_t e = k + 1 == t.spans.size() ? line.size() : t.spans[k].second;  // the last column (Reason) runs on
        row.emplace_back(b < line.size() ? Trim(line.substr(b, e - b)) : string_view());
      }
      return SacctRow(row, t, out);
    }
    case TableState::Kind::kSinfoReason: return SinfoRow(line, out);
    case TableState::Kind::kNone: break;
  }
  return LineResult::kNotUnderstood;
}

std::vector<std::string> SplitCsv(string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size() && out.size() <= kMaxColumns; ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  for (auto& f : out) f = std::string(Trim(f));
  return out;
}

}  // namespace rackchaos::incident
