// The Xid/SXid catalogue: which codes the healer acts on and how (NVIDIA's XID catalogue, RACK-FACTS.md),
// and the names and descriptions reports print. The line parser is healer/xid.cpp.
#include "healer/xid.h"

namespace rackchaos::healer {
namespace {

// The codes the healer acts on, per NVIDIA's XID catalogue (RACK-FACTS.md). 154's action comes from
// the recovery action it carries; 92 is trended, not acted on.
struct CatalogueEntry {
  int code;
  XidAction action;
  const char* description;
};

constexpr CatalogueEntry kCatalogue[] = {
    {13, XidAction::kRestartApp, "Graphics engine exception"},
    {31, XidAction::kRestartApp, "GPU memory page fault"},
    {43, XidAction::kRestartApp, "GPU stopped processing (application channel reset)"},
    {45, XidAction::kNone, "Preemptive cleanup, due to previous errors"},
    {46, XidAction::kResetGpu, "GPU stopped processing"},
    {48, XidAction::kResetGpu, "Double-bit ECC error"},
    {62, XidAction::kResetGpu, "Internal micro-controller halt"},
    {63, XidAction::kNone, "Row remapping (page retirement) event"},  // applied at the next reset
    {64, XidAction::kResetGpu, "Row remapping (page retirement) failure"},
    {74, XidAction::kCheckNvlink, "NVLink error"},
    {79, XidAction::kRebootNode, "GPU has fallen off the bus"},
    {92, XidAction::kInvestigate, "High single-bit ECC error rate"},
    {94, XidAction::kRestartApp, "Contained ECC error"},
    {95, XidAction::kResetGpu, "Uncontained ECC error"},
    {109, XidAction::kResetGpu, "Context switch timeout"},
    {119, XidAction::kResetGpu, "GSP RPC timeout"},
    {120, XidAction::kResetGpu, "GSP error"},
    {136, XidAction::kResetGpu, "GPU error requiring a reset"},
    {140, XidAction::kResetGpu, "Unrecoverable ECC error escape"},
    {143, XidAction::kResetGpu, "GPU initialization failure"},
    {144, XidAction::kCheckNvlink, "NVLink 5 error"},
    {145, XidAction::kCheckNvlink, "NVLink 5 error"},
    {146, XidAction::kCheckNvlink, "NVLink 5 error"},
    {147, XidAction::kCheckNvlink, "NVLink 5 error"},
    {148, XidAction::kCheckNvlink, "NVLink 5 error"},
    {149, XidAction::kCheckNvlink, "NVLink 5 error"},
    {150, XidAction::kCheckNvlink, "NVLink 5 error"},
    {154, XidAction::kInvestigate, "GPU recovery action changed"},
};

const CatalogueEntry* FindEntry(int code) {
  for (const CatalogueEntry& entry : kCatalogue) {
    if (entry.code == code) return &entry;
  }
  return nullptr;
}

}  // namespace

XidAction RecommendedAction(int xid, std::optional<int> recovery_action) {
  if (xid != 154) {
    const CatalogueEntry* entry = FindEntry(xid);
    return entry ? entry->action : XidAction::kInvestigate;
  }
  if (!recovery_action || *recovery_action < 0 || *recovery_action > 7) return XidAction::kInvestigate;
  // NVML's nvmlDeviceGpuRecoveryAction_t values, in order.
  static constexpr XidAction kByRecoveryAction[] = {
      XidAction::kNone,          XidAction::kResetGpu,    XidAction::kRebootNode, XidAction::kDrainP2P,
      XidAction::kDrainAndReset, XidAction::kRecoverImex, XidAction::kBusReset,   XidAction::kSystemReboot};
  return kByRecoveryAction[*recovery_action];
}

XidAction RecommendedSxidAction(SxidSeverity severity, bool sxid_detail) {
  if (sxid_detail) return XidAction::kNone;
  switch (severity) {
    case SxidSeverity::kFatal: return XidAction::kCheckNvlink;
    case SxidSeverity::kNonFatal: return XidAction::kNone;
    case SxidSeverity::kUnspecified: break;
  }
  return XidAction::kInvestigate;
}

const char* XidActionName(XidAction action) {
  switch (action) {
    case XidAction::kNone: return "none";
    case XidAction::kRestartApp: return "restart_app";
    case XidAction::kResetGpu: return "reset_gpu";
    case XidAction::kRebootNode: return "reboot_node";
    case XidAction::kDrainAndReset: return "drain_and_reset";
    case XidAction::kCheckNvlink: return "check_nvlink";
    case XidAction::kDrainP2P: return "drain_p2p";
    case XidAction::kRecoverImex: return "recover_imex";
    case XidAction::kBusReset: return "bus_reset";
    case XidAction::kSystemReboot: return "system_reboot";
    case XidAction::kInvestigate: return "investigate";
  }
  return "investigate";
}

const char* SxidSeverityName(SxidSeverity severity) {
  switch (severity) {
    case SxidSeverity::kFatal: return "fatal";
    case SxidSeverity::kNonFatal: return "non_fatal";
    case SxidSeverity::kUnspecified: break;
  }
  return "unspecified";
}

const char* XidDescription(int xid) {
  const CatalogueEntry* entry = FindEntry(xid);
  return entry ? entry->description : "unknown XID";
}

}  // namespace rackchaos::healer
