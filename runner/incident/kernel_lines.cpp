// Kernel lines: NVIDIA Xid / SXid (parsed by healer/xid.h, which knows every driver variant) and
// Mellanox/ConnectX (mlx5_core) link state changes.
#include <cctype>

#include "healer/xid.h"
#include "runner/incident/line_parsers.h"

namespace rackchaos::incident {
namespace {

using std::string_view;

bool StartsWithIgnoreCase(string_view s, string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

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

// "mlx5_core 0000:1a:00.0 ibp26s0: Link down", "mlx5_core 0000:1a:00.0: Port module event: module 0,
// Cable unplugged". Other mlx5_core lines are not understood (and counted).
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
  IncidentEvent e;
  if (StartsWithIgnoreCase(s, "Link down")) {
    e.kind = EventKind::kNicDown;
  } else if (StartsWithIgnoreCase(s, "Link up")) {
    e.kind = EventKind::kNicUp;
  } else if (StartsWithIgnoreCase(s, "Port module event") && s.find("Cable unplugged") != string_view::npos) {
    e.kind = EventKind::kNicDown;
  } else if (StartsWithIgnoreCase(s, "Port module event")) {
    return LineResult::kFollowUp;  // "Cable plugged": the link comes up with its own "Link up" line
  } else {
    return LineResult::kNotUnderstood;
  }
  e.time = split.time;
  e.host = std::string(split.host);
  e.address = std::string(pci);
  for (char& c : e.address) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  e.iface = std::string(iface);
  e.detail = std::string(s);
  out.push_back(std::move(e));
  return LineResult::kEvent;
}

}  // namespace

LineResult ParseKernelLine(string_view line, const SplitLine& split, std::vector<IncidentEvent>& out) {
  if (split.body.find("Xid (") != string_view::npos) {
    auto x = healer::ParseXidLine(line);
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
    e.fatal = x->severity == healer::SxidSeverity::kFatal;
    e.action = healer::XidActionName(x->action);
    e.detail = x->message;
    out.push_back(std::move(e));
    return LineResult::kEvent;
  }
  if (split.body.starts_with("mlx5_core")) return ParseMlx5(split, out);
  return LineResult::kNotUnderstood;
}

}  // namespace rackchaos::incident
