// Kernel lines: NVIDIA Xid / SXid (parsed by healer/xid.h, which knows every driver variant), the
// NVRM lines that repeat an Xid's news, and Mellanox/ConnectX (mlx5_core) link state changes in both
// wordings: the netdev's "Link down" / "Link up" and, since Linux 6.15, the RDMA core's
// "Port: N Link DOWN|INIT|ARMED|ACTIVE|ACTIVE_DEFER" (IB/cache: log messages for IB device state changes).
#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "core/strings.h"
#include "healer/xid.h"
#include "runner/incident/line_parsers.h"
#include "runner/incident/xid_links.h"

namespace rackchaos::incident {
namespace {

using std::string_view;

string_view Token(string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  size_t n = s.find(' ');
  string_view t = s.substr(0, n);
  s = n == string_view::npos ? string_view() : s.substr(n + 1);
  return t;
}

bool LooksLikePci(string_view t) {
  return t.size() >= 7 && t.size() <= 16 && t.find(':') != string_view::npos &&
         t.find_first_not_of("0123456789abcdefABCDEF:.") == string_view::npos;
}

// Drops the "mlx5_port_module_event:1131:(pid 0): " an mlx5_core_err() prints before its text.
std::string_view SkipFunctionPrefix(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 64) return s;
  std::string_view rest = s.substr(colon + 1);
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0 || !rest.substr(digits).starts_with(":(pid ")) return s;
  size_t close = rest.find("): ", digits);
  if (close == std::string_view::npos || close > digits + 24) return s;
  return rest.substr(close + 3);
}

// "Port: 1 Link ACTIVE" (the RDMA core since Linux 6.15): DOWN is a link down, ACTIVE (or
// ACTIVE_DEFER) a link up; INIT and ARMED are the steps between, understood but not events.
LineResult PortStateChange(std::string_view s, IncidentEvent& e) {
  s.remove_prefix(5);  // "Port:"
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  int port = 0;
  size_t n = 0;
  // Up to 9 digits are read (a larger port is past kMaxNicPort all the same: CheckEventNumbers refuses it).
  for (; n < s.size() && std::isdigit(static_cast<unsigned char>(s[n])); ++n)
    port = n < 9 ? port * 10 + (s[n] - '0') : 999'999'999;
  if (n == 0) return LineResult::kNotUnderstood;
  s.remove_prefix(n);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (!s.starts_with("Link ")) return LineResult::kNotUnderstood;
  std::string_view state = s.substr(5);
  while (!state.empty() && (state.back() == ' ' || state.back() == '\r')) state.remove_suffix(1);
  e.link = port;
  if (state == "DOWN") {
    e.kind = EventKind::kNicDown;
    e.severity = Severity::kFatal;
    return LineResult::kEvent;
  }
  if (state == "ACTIVE" || state == "ACTIVE_DEFER") {
    e.kind = EventKind::kNicUp;
    return LineResult::kEvent;
  }
  if (state == "INIT" || state == "ARMED" || state == "NOP") return LineResult::kFollowUp;
  return LineResult::kNotUnderstood;
}

// "mlx5_core 0000:1a:00.0 ibp26s0: Link down", "mlx5_core 0000:08:00.0 mlx5_0: Port: 1 Link DOWN",
// "mlx5_core 0000:1a:00.0: Port module event: module 0, Cable unplugged", and the same behind an
// mlx5_core_err() function prefix ("mlx5_port_module_event:1131:(pid 0): Port module event[error]:
// module 0, Cable error, High Temperature": an error disables the module). Other mlx5_core lines are
// not understood (and counted).
LineResult ParseMlx5(const SplitLine& split, std::vector<IncidentEvent>& out) {
  string_view s = split.body;
  if (Token(s) != "mlx5_core") return LineResult::kNotUnderstood;
  string_view pci = Token(s);
  if (!pci.empty() && pci.back() == ':') pci.remove_suffix(1);
  if (!LooksLikePci(pci)) return LineResult::kNotUnderstood;
  string_view iface;
  string_view probe = s;
  string_view next = Token(probe);
  if (!next.empty() && next.back() == ':' && next.size() > 1 && next.size() < 32) {
    iface = next.substr(0, next.size() - 1);
    s = probe;
  }
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  s = SkipFunctionPrefix(s);
  IncidentEvent e;
  if (StartsWithIgnoreCase(s, "Link down")) {
    e.kind = EventKind::kNicDown;
    e.severity = Severity::kFatal;
  } else if (StartsWithIgnoreCase(s, "Link up")) {
    e.kind = EventKind::kNicUp;
  } else if (s.starts_with("Port: ")) {
    LineResult r = PortStateChange(s, e);
    if (r != LineResult::kEvent) return r;
  } else if (StartsWithIgnoreCase(s, "Port module event") &&
             (s.find("Cable unplugged") != string_view::npos || s.starts_with("Port module event[error]"))) {
    e.kind = EventKind::kNicDown;
    e.severity = Severity::kFatal;
  } else if (StartsWithIgnoreCase(s, "Port module event")) {
    return LineResult::kFollowUp;  // "Cable plugged": the link comes up with its own "Link up" line
  } else {
    return LineResult::kNotUnderstood;
  }
  e.time = split.time;
  e.host = std::string(split.host);
  e.address = ToLower(pci);
  e.iface = std::string(iface);
  e.detail = std::string(s);
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

}  // namespace

// "NVRM: The NVIDIA GPU 0000:b3:00.0" / "NVRM: (PCI ID: 10de:26b5) installed in this system has" /
// "NVRM: fallen off the bus and is not responding to commands.": one message over three lines (dmesg
// indents the continuations without a stamp), a GPU off the bus with no Xid line. The GPU's address is
// kept from the first line; the last line makes the event, an Xid 79 as the healer's catalogue knows it.
LineResult ParseNvrmGpuMessage(const SplitLine& split, FileState& state, std::vector<IncidentEvent>& out) {
  string_view body = split.body;
  if (body.starts_with("NVRM: The NVIDIA GPU ")) {
    string_view rest = body.substr(21);
    string_view pci = Token(rest);
    if (!LooksLikePci(pci)) return LineResult::kNotUnderstood;
    state.nvrm_gpu = std::string(pci);
    state.nvrm_gpu_time = split.time;
    return LineResult::kFollowUp;
  }
  if (state.nvrm_gpu.empty() || !body.starts_with("NVRM: ")) return LineResult::kNotUnderstood;
  if (body.find("fallen off the bus") == string_view::npos) return LineResult::kFollowUp;  // "(PCI ID: ...) installed"
  IncidentEvent e;
  e.kind = EventKind::kXid;
  e.code = 79;
  e.time = split.time.axis == TimeAxis::kNone ? state.nvrm_gpu_time : split.time;
  e.host = std::string(split.host);
  // "0000:b3:00.0" -> "0000:b3:00", as Xid lines print a GPU.
  e.address = ToLower(state.nvrm_gpu.substr(0, state.nvrm_gpu.rfind('.')));
  e.action = healer::XidActionName(healer::RecommendedAction(79, std::nullopt));
  e.severity = XidSeverity(79, e.action, "");
  e.detail = "GPU has fallen off the bus (no Xid line)";
  state.nvrm_gpu.clear();
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

// "Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:02): 94, ..." attributes the Xid to a MIG instance; the
// healer's parser reads the device form only. Returns the line without the instance part (and the
// part), or nothing when the line has none.
std::optional<std::pair<std::string, std::string>> WithoutMigInstance(string_view line) {
  size_t at = line.find("Xid (PCI:");
  if (at == string_view::npos) return std::nullopt;
  size_t close = line.find(')', at);
  size_t mig = line.find(" GPU-I:", at);
  if (close == string_view::npos || mig == string_view::npos || mig > close || close - at > 64) return std::nullopt;
  return std::make_pair(std::string(line.substr(0, mig)) + std::string(line.substr(close)),
                        std::string(line.substr(mig + 1, close - mig - 1)));
}

LineResult ParseKernelLine(string_view line, const SplitLine& split, FileState& state, std::vector<IncidentEvent>& out) {
  if (split.body.find("Xid (") != string_view::npos) {
    auto mig = WithoutMigInstance(line);
    auto x = healer::ParseXidLine(mig ? string_view(mig->first) : line);
    if (!x) return LineResult::kNotUnderstood;
    if (x->sxid_detail) return LineResult::kFollowUp;
    IncidentEvent e;
    e.kind = x->is_sxid ? EventKind::kSxid : EventKind::kXid;
    e.time = split.time;
    e.host = x->host.empty() ? std::string(split.host) : x->host;
    e.address = x->pci;
    e.iface = x->nvswitch;
    e.code = x->code;
    e.link = x->link;
    e.recovery_action = x->recovery_action;
    e.action = healer::XidActionName(x->action);
    e.detail = x->message;
    if (mig) e.detail += " [" + mig->second + "]";
    if (x->is_sxid) {
      e.severity = x->severity == healer::SxidSeverity::kFatal      ? Severity::kFatal
                   : x->severity == healer::SxidSeverity::kNonFatal ? Severity::kNonFatal
                                                                    : Severity::kUnknown;
    } else {
      e.severity = XidSeverity(e.code, e.action, e.detail);
    }
    out.push_back(std::move(e));
    return LineResult::kEvent;
  }
  if (split.body.starts_with("mlx5_core")) return ParseMlx5(split, out);
  // The driver repeats an Xid's news on lines of its own: "NVRM: GPU 0000:3b:00.0: GPU has fallen off
  // the bus." after Xid 79, "NVRM: GPU at PCI:0000:3b:00: GPU-<uuid>" naming the GPU of the next Xid.
  if (split.body.starts_with("NVRM: GPU ") &&
      (split.body.ends_with("GPU has fallen off the bus.") || split.body.starts_with("NVRM: GPU at PCI:")))
    return LineResult::kFollowUp;
  if (split.body.starts_with("NVRM: ")) return ParseNvrmGpuMessage(split, state, out);
  return LineResult::kNotUnderstood;
}

}  // namespace rackchaos::incident
