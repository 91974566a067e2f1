// NCCL as a training job's output shows it (slurm-JOB.out, torchrun or srun output, the journal):
//   - PyTorch's ProcessGroupNCCL watchdog: "[Rank 3] Watchdog caught collective operation timeout:
//     WorkNCCL(SeqNum=5, OpType=ALLREDUCE, ..., Timeout(ms)=600000) ran for 600013 milliseconds before
//     timing out.", behind "[E ProcessGroupNCCL.cpp:737] " (PyTorch 1.x-2.1, no time) or
//     "[rank3]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] " (2.2 and later, a glog stamp);
//   - NCCL's own "HOST:PID:TID [DEV] [FILE:LINE] NCCL WARN MESSAGE" (INFO lines are understood and
//     dropped);
//   - errors surfaced to the application: "NCCL error: remote process exited or there was a network
//     error, NCCL version 2.14.3" (also "NCCL error in: FILE:LINE, REASON, NCCL version ..."), with
//     the "ncclRemoteError: ..." / "Last error:" lines after it as follow-ups.
// The watchdog's own follow-ups (the exception it raises with the same text, "Some NCCL operations
// have failed or timed out", "To avoid data inconsistency ...") are understood, not events.
#include "core/strings.h"
#include "runner/incident/line_parsers.h"

namespace rackchaos::incident {
namespace {

using std::string_view;

// "NCCL" or "nccl" anywhere (most lines of a log are noise that has neither; find() runs on memchr).
bool NamesNccl(string_view s) { return s.find("CCL") != string_view::npos || s.find("ccl") != string_view::npos; }

// The number right after `key` in `s` ("SeqNum=" -> 1580); nullopt when absent. A number of more than
// 15 digits reads as kHuge (past every bound, never cut to its first digits).
constexpr long long kHuge = 1'000'000'000'000'000LL;
std::optional<long long> NumberAfter(string_view s, string_view key) {
  size_t at = s.find(key);
  if (at == string_view::npos) return std::nullopt;
  s.remove_prefix(at + key.size());
  long long v = 0;
  size_t n = 0;
  for (; n < s.size() && IsDigit(s[n]); ++n) v = n < 15 ? v * 10 + (s[n] - '0') : kHuge;
  if (n == 0) return std::nullopt;
  return v;
}

// Stores `v` in `field` when it is at most `max`; else says so in the event (the import then fails).
void Bounded(std::optional<long long> v, long long max, const char* what, std::optional<int>& field,
             IncidentEvent& e) {
  if (!v) return;
  if (*v <= max) {
    field = static_cast<int>(*v);
  } else if (e.out_of_range.empty()) {
    e.out_of_range = std::string(what) + " " + (*v == kHuge ? std::string("of more than 15 digits") : std::to_string(*v)) +
                     " is out of range; expected 0 to " + std::to_string(max);
  }
}

string_view WordAfter(string_view s, string_view key) {
  size_t at = s.find(key);
  if (at == string_view::npos) return {};
  s.remove_prefix(at + key.size());
  size_t n = 0;
  while (n < s.size() && n < 64 && s[n] != ',' && s[n] != ')' && s[n] != ' ') ++n;
  return s.substr(0, n);
}

// "[Rank 3]", "[PG 1 Rank 3]", or PyTorch's per-rank prefix "[rank3]:".
std::optional<long long> RankOf(string_view s) {
  for (string_view key : {string_view("Rank "), string_view("[rank")}) {
    if (auto r = NumberAfter(s, key)) return r;
  }
  return std::nullopt;
}

// The time of a line: its glog stamp ("[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]"), else
// the log prefix's.
LogTime TimeOf(string_view line, const SplitLine& split) {
  for (size_t at = line.find('['); at != string_view::npos && at < 96; at = line.find('[', at + 1)) {
    if (auto t = ParseGlogTime(line.substr(at + 1, 40))) return *t;
  }
  return split.time;
}

LineResult WatchdogTimeout(string_view line, const SplitLine& split, std::vector<IncidentEvent>& out) {
  if (line.find("terminated with exception") != string_view::npos) return LineResult::kFollowUp;  // the same timeout, rethrown
  IncidentEvent e;
  e.kind = EventKind::kNcclTimeout;
  e.time = TimeOf(line, split);
  e.host = std::string(split.host);
  Bounded(RankOf(line), kMaxNcclRank, "the NCCL rank", e.rank, e);
  std::string op(WordAfter(line, "OpType="));
  e.detail = (op.empty() ? std::string("collective") : op);
  if (auto seq = NumberAfter(line, "SeqNum=")) e.detail += " SeqNum=" + std::to_string(*seq);
  if (auto ran = NumberAfter(line, "ran for ")) e.detail += " ran " + std::to_string(*ran) + " ms";
  if (auto limit = NumberAfter(line, "Timeout(ms)=")) e.detail += " (timeout " + std::to_string(*limit) + " ms)";
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

// "gpu-r01-t03:91811:91902 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : ..." (the FILE:LINE came
// with NCCL 2.x; Open MPI may put "[1,12]<stdout>:" before the host).
LineResult Warn(string_view line, size_t warn_at, const SplitLine& split, std::vector<IncidentEvent>& out) {
  IncidentEvent e;
  e.kind = EventKind::kNcclWarn;
  e.time = TimeOf(line, split);
  e.detail = std::string(line.substr(warn_at + 11));  // after " NCCL WARN "
  while (!e.detail.empty() && (e.detail.back() == ' ' || e.detail.back() == '\r')) e.detail.pop_back();
  string_view head = line.substr(0, warn_at);
  size_t open = head.rfind(" [");
  if (open != string_view::npos) {
    Bounded(NumberAfter(head.substr(open), "["), kMaxNcclDevice, "the CUDA device", e.device, e);
    string_view who = head.substr(0, open);
    if (size_t sp = who.rfind(' '); sp != string_view::npos) who = who.substr(sp + 1);
    if (size_t gt = who.rfind('>'); gt != string_view::npos) who = who.substr(gt + 1);  // "[1,12]<stdout>:host:pid:tid"
    if (!who.empty() && who.front() == ':') who.remove_prefix(1);
    // host:pid:tid; the host is what is left after the last two numbers.
    size_t tid = who.rfind(':');
    size_t pid = tid == string_view::npos || tid == 0 ? string_view::npos : who.rfind(':', tid - 1);
    if (pid != string_view::npos && pid > 0) e.host = std::string(who.substr(0, pid));
  }
  if (e.host.empty()) e.host = std::string(split.host);
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

// "NCCL error: remote process exited or there was a network error, NCCL version 2.14.3" and
// "NCCL error in: /path/ProcessGroupNCCL.cpp:1287, unhandled system error, NCCL version 2.17.1".
LineResult NcclError(string_view line, size_t at, const SplitLine& split, std::vector<IncidentEvent>& out) {
  string_view reason = line.substr(at + 10);  // after "NCCL error"
  if (reason.starts_with(" in:")) {
    size_t comma = reason.find(", ");
    reason = comma == string_view::npos ? string_view() : reason.substr(comma + 2);
  } else if (reason.starts_with(":")) {
    reason.remove_prefix(1);
  }
  while (!reason.empty() && reason.front() == ' ') reason.remove_prefix(1);
  if (size_t v = reason.find(", NCCL version"); v != string_view::npos) reason = reason.substr(0, v);
  IncidentEvent e;
  e.kind = EventKind::kNcclError;
  e.time = TimeOf(line, split);
  e.host = std::string(split.host);
  Bounded(RankOf(line.substr(0, at)), kMaxNcclRank, "the NCCL rank", e.rank, e);
  e.detail = std::string(reason);
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

bool IsNcclResultName(string_view s) {
  // "[rank3]: ncclRemoteError: ..." -> the text after any "[rank3]: " prefix.
  if (s.starts_with("[rank")) {
    size_t close = s.find("]: ");
    if (close != string_view::npos && close < 16) s.remove_prefix(close + 3);
  }
  for (string_view name : {"ncclRemoteError:", "ncclSystemError:", "ncclInternalError:", "ncclUnhandledCudaError:",
                           "ncclInvalidUsage:", "ncclInvalidArgument:"}) {
    if (s.starts_with(name)) return true;
  }
  return false;
}

}  // namespace

LineResult ParseNcclLine(string_view line, const SplitLine& split, FileState& state, std::vector<IncidentEvent>& out) {
  string_view body = split.body;
  if (split.tag == "kernel") return LineResult::kNotUnderstood;  // the kernel prints none of these
  if (state.nccl_last_error_pending) {  // the text after "Last error:" is the error itself
    state.nccl_last_error_pending = false;
    if (!body.empty()) return LineResult::kFollowUp;
  }
  // Every line of these families names NCCL ("ProcessGroupNCCL", "NCCL WARN", "ncclRemoteError") or is
  // "Last error:": one scan turns away the noise that makes up most of a kernel log.
  if (!NamesNccl(body) && !body.ends_with("Last error:"))
    return LineResult::kNotUnderstood;
  if (body.find("Watchdog caught collective operation timeout") != string_view::npos) return WatchdogTimeout(body, split, out);
  if (size_t warn = body.find(" NCCL WARN "); warn != string_view::npos) return Warn(body, warn, split, out);
  if (body.find(" NCCL INFO ") != string_view::npos) return LineResult::kFollowUp;
  if (size_t err = body.find("NCCL error"); err != string_view::npos && body.find("NCCL version") != string_view::npos)
    return NcclError(body, err, split, out);
  if (IsNcclResultName(body)) return LineResult::kFollowUp;
  if (body == "Last error:" || body.ends_with("]: Last error:")) {
    state.nccl_last_error_pending = true;
    return LineResult::kFollowUp;
  }
  for (string_view followup : {"Exception (either an error or timeout) detected by watchdog", "Timeout at NCCL work",
                               "Some NCCL operations have failed or timed out",
                               "To avoid data inconsistency, we are taking the entire process down"}) {
    if (body.find(followup) != string_view::npos) return LineResult::kFollowUp;
  }
  (void)line;
  return LineResult::kNotUnderstood;
}

}  // namespace rackchaos::incident
