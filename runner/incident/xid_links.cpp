#include "runner/incident/xid_links.h"

#include <map>
#include <optional>
#include <string>

#include "core/strings.h"

namespace rackchaos::incident {
namespace {

// 63 is only a consequence of a memory error; 45 and 154 of any earlier Xid.
bool CanCause(int consequence, int cause) {
  if (consequence != 63) return true;
  return cause == 48 || cause == 94 || cause == 95 || cause == 140;
}

}  // namespace

bool IsConsequenceXid(int code) { return code == 45 || code == 154 || code == 63; }

std::optional<int> NamedCause(std::string_view message) {
  constexpr std::string_view kKey = "caused by previous Xid ";
  size_t at = message.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  int code = 0;
  size_t n = at + kKey.size(), digits = 0;
  for (; n < message.size() && digits < 6 && message[n] >= '0' && message[n] <= '9'; ++n, ++digits)
    code = code * 10 + (message[n] - '0');
  if (digits == 0) return std::nullopt;
  return code;
}

Severity XidSeverity(int code, std::string_view action, std::string_view message) {
  if (action == "check_nvlink") {
    // "Nonfatal" / "Non-fatal" before "fatal": the shorter word is inside the longer ones.
    if (ContainsIgnoreCase(message, "nonfatal") || ContainsIgnoreCase(message, "non-fatal") ||
        ContainsIgnoreCase(message, "non fatal"))
      return Severity::kNonFatal;
    return Severity::kFatal;  // the catalogue drains for an NVLink error unless the driver says otherwise
  }
  if (action == "restart_app" || action == "none") return Severity::kNonFatal;
  if (action == "reset_gpu" || action == "reboot_node" || action == "drain_and_reset" || action == "bus_reset" ||
      action == "system_reboot" || action == "recover_imex" || action == "drain_p2p")
    return Severity::kFatal;
  (void)code;
  return Severity::kUnknown;  // investigate: a code the catalogue does not act on, or 154 without its action
}

void LinkXidCauses(std::vector<IncidentEvent>& events) {
  // Per GPU (host and address): the latest Xid that is not a consequence, by index; and the latest of
  // each code, for the lines that name their cause.
  std::map<std::string, size_t, std::less<>> last_cause;
  std::map<std::string, size_t, std::less<>> last_of_code;  // "host address code"
  std::string key;
  for (size_t i = 0; i < events.size(); ++i) {
    IncidentEvent& e = events[i];
    if (e.kind != EventKind::kXid || e.time.axis == TimeAxis::kNone || e.address.empty()) continue;
    key.assign(e.host).append(" ").append(e.address);
    // Drivers from 590 on say it: "45, pid=..., Ch 00000001 caused by previous Xid 149".
    if (auto named = NamedCause(e.detail)) {
      auto it = last_of_code.find(key + " " + std::to_string(*named));
      if (it != last_of_code.end() && events[it->second].time.axis == e.time.axis) e.caused_by = static_cast<int64_t>(it->second);
      continue;
    }
    last_of_code.insert_or_assign(key + " " + std::to_string(e.code), i);
    if (!IsConsequenceXid(e.code)) {
      last_cause.insert_or_assign(key, i);
      continue;
    }
    auto it = last_cause.find(key);
    if (it == last_cause.end()) continue;
    const IncidentEvent& cause = events[it->second];
    if (cause.time.axis != e.time.axis || e.time.seconds - cause.time.seconds > kCausedByWindowSeconds) continue;
    if (!CanCause(e.code, cause.code)) continue;
    e.caused_by = static_cast<int64_t>(it->second);
  }
}

}  // namespace rackchaos::incident
