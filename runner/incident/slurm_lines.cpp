// Slurm node state changes, job requeues and kills on failed nodes, from the slurmctld log (plain or
// through syslog/journal) and from `scontrol show node` records. The tables (`sacctmgr show event`, `sinfo -R`) are in
// table_lines.cpp.
#include <cctype>
#include <cstdint>

#include "core/strings.h"
#include "runner/incident/line_parsers.h"

namespace rackchaos::incident {
namespace {

using std::string_view;
constexpr size_t kMaxPendingReasons = 4096;

string_view Word(string_view s) {
  size_t n = 0;
  while (n < s.size() && !std::isspace(static_cast<unsigned char>(s[n])) && s[n] != ',') ++n;
  return s.substr(0, n);
}

// Slurm state words ("IDLE+DRAIN", "DRAINING", "DOWN*", "MIXED") -> the event they mean.
EventKind KindOfState(string_view state) {
  std::string s = ToUpper(state);
  if (s.find("DOWN") != std::string::npos || s.find("FAIL") != std::string::npos) return EventKind::kNodeDown;
  if (s.find("DRAIN") != std::string::npos) return EventKind::kNodeDrain;
  return EventKind::kNodeResume;
}

void Emit(EventKind kind, const SplitLine& split, string_view nodes, string_view reason,
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
    e.time = split.time;
    e.host = std::move(node);
    e.detail = std::string(reason);
    out.push_back(std::move(e));
  }
}

// "update_node: node NODE reason set to: REASON" / "... state set to STATE", "drain_nodes: ...".
LineResult ParseUpdateNode(const SplitLine& split, string_view body, FileState& state,
                           std::vector<IncidentEvent>& out) {
  size_t at = body.find(": node ");
  if (at == string_view::npos) return LineResult::kNotUnderstood;
  string_view rest = body.substr(at + 7);
  string_view node = Word(rest);
  rest = Trim(rest.substr(node.size()));
  if (node.empty()) return LineResult::kNotUnderstood;
  if (rest.starts_with("reason set to:")) {
    if (state.pending_reason.size() < kMaxPendingReasons || state.pending_reason.count(std::string(node)))
      state.pending_reason[std::string(node)] = std::string(Trim(rest.substr(14)));
    return LineResult::kFollowUp;
  }
  if (!rest.starts_with("state set to ")) return LineResult::kNotUnderstood;
  string_view st = Word(Trim(rest.substr(13)));
  EventKind kind = KindOfState(st);
  std::string reason;
  if (auto it = state.pending_reason.find(std::string(node)); it != state.pending_reason.end()) {
    if (kind != EventKind::kNodeResume) reason = it->second;
    state.pending_reason.erase(it);
  }
  Emit(kind, split, node, reason, out);
  return LineResult::kEvent;
}

// "Reason=Xid 79 [root@2026-11-30T06:03:10]" inside a `scontrol show node` record.
LineResult ParseScontrolReason(string_view body, FileState& state, std::vector<IncidentEvent>& out) {
  string_view reason = Trim(body.substr(7));
  SplitLine when;
  size_t open = reason.rfind('[');
  if (open != string_view::npos && reason.back() == ']') {
    string_view stamp = reason.substr(open + 1, reason.size() - open - 2);
    if (size_t atsign = stamp.find('@'); atsign != string_view::npos) {
      if (auto t = ParseIsoLogTime(stamp.substr(atsign + 1))) when.time = *t;
    }
    reason = Trim(reason.substr(0, open));
  }
  if (state.scontrol_node.empty()) return LineResult::kNotUnderstood;
  EventKind kind = KindOfState(state.scontrol_state);
  if (kind == EventKind::kNodeResume) kind = EventKind::kNodeDrain;  // a Reason is only kept while drained/down
  Emit(kind, when, state.scontrol_node, reason, out);
  return LineResult::kEvent;
}

LineResult ParseScontrol(string_view body, FileState& state, std::vector<IncidentEvent>& out) {
  if (body.starts_with("NodeName=")) {
    state.scontrol_node = std::string(Word(body.substr(9)));
    state.scontrol_state.clear();
    return LineResult::kFollowUp;
  }
  if (body.starts_with("State=")) {
    state.scontrol_state = std::string(Word(body.substr(6)));
    return LineResult::kFollowUp;
  }
  if (body.starts_with("Reason=")) return ParseScontrolReason(body, state, out);
  return LineResult::kNotUnderstood;
}

// A job id as slurmctld prints it: "81234", "12210_11(12238)" (an array task and its own id), "81234+0".
std::string JobId(string_view s) {
  size_t n = 0;
  while (n < s.size() && n < 40 &&
         (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '_' || s[n] == '(' || s[n] == ')' || s[n] == '+'))
    ++n;
  if (n == 0 || !std::isdigit(static_cast<unsigned char>(s[0]))) return {};
  return std::string(s.substr(0, n));
}

int LeadingNumber(const std::string& id) {
  int v = 0;
  for (size_t i = 0; i < id.size() && i < 9 && std::isdigit(static_cast<unsigned char>(id[i])); ++i)
    v = v * 10 + (id[i] - '0');
  return v;
}

// "requeue job JobId=10 due to failure of node N" (Slurm 20.02 and later print the job as "JobId=N";
// older ones "requeue job 12345 due to failure of node N") and "Killing JobId=48 on failed node N".
LineResult JobOnNode(EventKind kind, const SplitLine& split, string_view body, string_view node_key,
                     FileState& state, std::vector<IncidentEvent>& out) {
  size_t node_at = body.find(node_key);
  string_view head = body.substr(0, node_at);
  size_t id_at = head.find("JobId=");
  id_at = id_at == string_view::npos ? head.find_first_of("0123456789") : id_at + 6;
  if (id_at == string_view::npos) return LineResult::kNotUnderstood;
  std::string id = JobId(head.substr(id_at));
  string_view node = Word(body.substr(node_at + node_key.size()));
  if (id.empty() || node.empty()) return LineResult::kNotUnderstood;
  IncidentEvent e;
  e.kind = kind;
  e.time = split.time;
  e.job = id;
  e.code = LeadingNumber(id);
  e.host = std::string(node);
  e.detail = std::string(Trim(body));
  out.push_back(std::move(e));
  if (kind == EventKind::kJobRequeue) state.last_requeue_job = id;
  return LineResult::kEvent;
}

}  // namespace

LineResult ParseSlurmLine(const SplitLine& split, FileState& state, std::vector<IncidentEvent>& out) {
  string_view body = split.body;
  if (body.starts_with("error: ")) body.remove_prefix(7);
  if (body.starts_with("update_node:") || body.starts_with("drain_nodes:"))
    return ParseUpdateNode(split, body, state, out);
  if (body.starts_with("Nodes ") && body.find(" not responding") != string_view::npos) {
    if (body.find("setting DOWN") == string_view::npos) return LineResult::kFollowUp;
    Emit(EventKind::kNodeDown, split, Word(body.substr(6)), "Not responding", out);
    return LineResult::kEvent;
  }
  if (body.starts_with("Node ") && body.find(" now responding") != string_view::npos) return LineResult::kFollowUp;
  // "validate_node_specs: Node N unexpectedly rebooted boot_time=... last response=..." (then DOWN) and
  // "node N returned to service" / "node_did_resp: node N returned to service" (ReturnToService).
  if (body.starts_with("validate_node_specs: Node ") && body.find(" unexpectedly rebooted") != string_view::npos) {
    Emit(EventKind::kNodeDown, split, Word(body.substr(26)), "Node unexpectedly rebooted", out);
    return LineResult::kEvent;
  }
  if ((body.starts_with("node ") || body.starts_with("node_did_resp: node ")) && body.ends_with(" returned to service")) {
    Emit(EventKind::kNodeResume, split, Word(body.substr(body[4] == ' ' ? 5 : 20)), "", out);
    return LineResult::kEvent;
  }
  if (body.starts_with("requeue ") && body.find(" due to failure of node ") != string_view::npos)
    return JobOnNode(EventKind::kJobRequeue, split, body, " due to failure of node ", state, out);
  if (body.starts_with("Killing JobId=") && body.find(" on failed node ") != string_view::npos)
    return JobOnNode(EventKind::kJobKill, split, body, " on failed node ", state, out);
  if (size_t job = body.find("JobId="); job != string_view::npos && (body.find("equeu") != string_view::npos)) {
    std::string id = JobId(body.substr(job + 6));
    if (id.empty()) return LineResult::kNotUnderstood;
    if (id == state.last_requeue_job) {  // "Requeuing JobId=N" after "requeue job JobId=N due to ..."
      state.last_requeue_job.clear();
      return LineResult::kFollowUp;
    }
    IncidentEvent e;
    e.kind = EventKind::kJobRequeue;
    e.time = split.time;
    e.job = id;
    e.code = LeadingNumber(id);
    e.detail = std::string(Trim(body));
    out.push_back(std::move(e));
    return LineResult::kEvent;
  }
  if (split.time.axis == TimeAxis::kNone) return ParseScontrol(body, state, out);
  return LineResult::kNotUnderstood;
}

namespace {

// Walks a Slurm hostlist ("gpu[01-04,07],login1"): one element up to each ',' outside brackets; an
// element without brackets, or with a range that is not LO-HI in digits (at most 9 each), goes to
// `plain(item)` as it is; each numeric range of prefix[ranges]suffix goes to `range(prefix, lo, hi,
// suffix, text)`. Either returns false to stop the walk.
template <typename Plain, typename Range>
void WalkHostlist(string_view list, Plain plain, Range range) {
  size_t i = 0;
  while (i < list.size()) {
    size_t end = i;
    int depth = 0;
    while (end < list.size() && (depth > 0 || list[end] != ',')) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      ++end;
    }
    string_view item = list.substr(i, end - i);
    i = end + 1;
    size_t open = item.find('['), close = item.find(']');
    if (open == string_view::npos || close == string_view::npos || close < open) {
      if (!item.empty() && !plain(item)) return;
      continue;
    }
    string_view prefix = item.substr(0, open), suffix = item.substr(close + 1);
    string_view ranges = item.substr(open + 1, close - open - 1);
    while (!ranges.empty()) {
      size_t comma = ranges.find(',');
      string_view r = ranges.substr(0, comma);
      ranges = comma == string_view::npos ? string_view() : ranges.substr(comma + 1);
      size_t dash = r.find('-');
      string_view lo = r.substr(0, dash), hi = dash == string_view::npos ? lo : r.substr(dash + 1);
      if (lo.empty() || hi.empty() || lo.size() > 9 || hi.size() > 9 || lo.find_first_not_of("0123456789") != string_view::npos ||
          hi.find_first_not_of("0123456789") != string_view::npos) {
        if (!plain(item)) return;
        break;
      }
      if (!range(prefix, lo, hi, suffix, r)) return;
    }
  }
}

}  // namespace

std::string HostlistProblem(string_view list, size_t limit) {
  uint64_t names = 0;
  std::string problem;
  WalkHostlist(
      list, [&](string_view) { return ++names, true; },
      [&](string_view, string_view lo, string_view hi, string_view, string_view r) {
        const long a = std::stol(std::string(lo)), b = std::stol(std::string(hi));
        if (b < a) {
          problem = "the hostlist range " + Quote(r) + " runs backwards; expected LOW-HIGH with LOW <= HIGH";
          return false;
        }
        names += static_cast<uint64_t>(b - a + 1);
        return true;
      });
  if (!problem.empty()) return problem;
  if (names > limit)
    return "the hostlist " + Quote(list) + " names " + std::to_string(names) + " nodes; expected 1 to " +
           std::to_string(limit) + " on one line";
  return "";
}

std::vector<std::string> ExpandHostlist(string_view list, size_t limit) {
  std::vector<std::string> out;
  WalkHostlist(
      list,
      [&](string_view item) {
        if (out.size() < limit) out.emplace_back(item);
        return out.size() < limit;
      },
      [&](string_view prefix, string_view lo, string_view hi, string_view suffix, string_view) {
        const long a = std::stol(std::string(lo)), b = std::stol(std::string(hi));
        for (long n = a; n <= b && out.size() < limit; ++n) {
          std::string num = std::to_string(n);
          if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');
          out.push_back(std::string(prefix) + num + std::string(suffix));
        }
        return out.size() < limit;
      });
  return out;
}

}  // namespace rackchaos::incident
