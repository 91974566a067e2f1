// What an imported Xid means beyond its code: how severe it is and which earlier Xid it follows from.
//
// Severity comes from the healer's catalogue (healer/xid.h): an Xid whose recommended action resets
// the GPU, reboots the node or otherwise takes the part out of service is fatal; restart_app and none
// are non-fatal. NVLink Xids (74, 144-150) print their own word ("fatal error detected on link",
// "NETIR_LINK_EVT Fatal", "RLW_REMAP Nonfatal"), which wins. Codes the catalogue does not know stay
// unknown.
//
// "Caused by": the driver prints some Xids as consequences of another one on the same GPU: 45
// ("preemptive cleanup, due to previous errors"), 154 (the recovery action the error before it asks
// for) and 63 (a row remapped after an ECC error: 48, 94, 95, 140). Such an Xid is linked to the
// latest earlier Xid of the same host and PCI address on the same time axis, at most
// kCausedByWindowSeconds before it, that is not itself a consequence. Drivers from 590 on name the
// cause themselves ("45, ..., Ch 00000001 caused by previous Xid 149"): such a line is linked to the
// latest earlier Xid of that code on the same GPU, at any distance. Pure functions.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "runner/incident/incident.h"

namespace rackchaos::incident {

inline constexpr double kCausedByWindowSeconds = 120;

// `action` is healer::XidActionName() of the line's recommended action; `message` the driver's text.
Severity XidSeverity(int code, std::string_view action, std::string_view message);

// True for the codes that follow from another Xid (45, 154, 63).
bool IsConsequenceXid(int code);
// The code a driver message names as its cause ("caused by previous Xid 149" -> 149).
std::optional<int> NamedCause(std::string_view message);

// Sets IncidentEvent::caused_by on the Xids of `events` (in time order) that follow from an earlier one.
void LinkXidCauses(std::vector<IncidentEvent>& events);

}  // namespace rackchaos::incident
