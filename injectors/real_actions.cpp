#include "injectors/real_actions.h"

namespace rackchaos::injectors {
namespace {

using cluster::Verb;
constexpr const char* kATray = "a tray";
constexpr const char* kTheSite = "the site";

}  // namespace

// One row per action. A fault action needs `apply` and `revert` (and `verify` or `baseline` by its
// check); a healer action takes `apply` and optionally `run_on`.
const std::vector<RealAction>& RealActions() {
  static const std::vector<RealAction> kTable = {
      // name, healer, verb, injector, target, target_text, placeholders, check, checked_by[, value, wire_scale]
      {"link_down", false, Verb::kNicLink, "link_down", RealTarget::kNic, "a NIC", {"iface", "nic"},
       RealCheck::kVerify, "verify", "", 1},
      {"link_degrade", false, Verb::kLinkBandwidth, "link_degrade", RealTarget::kNic, "a NIC",
       {"iface", "nic", "bandwidth", "rate"}, RealCheck::kVerify, "verify", "", 1},
      {"nvlink_down", false, Verb::kNvlinkPort, "link_down", RealTarget::kNvlinkPort,
       "an NVLink port (`<gpu>.nvlinkN`)", {"gpu", "port"}, RealCheck::kVerify, "verify", "", 1},
      {"gpu_throttle", false, Verb::kPowerCap, "gpu_throttle", RealTarget::kGpu, "", {"gpu", "watts", "baseline"},
       RealCheck::kBaseline, "baseline", "watts", 1},
      {"valve_fail", false, Verb::kValve, "valve_fail", RealTarget::kValve, "",
       {"valve_endpoint", "valve_object", "opening", "baseline"}, RealCheck::kBaseline, "baseline", "opening", 100},
      {"tray_pull", false, Verb::kTrayPresence, "tray_pull", RealTarget::kTray, "", {}, RealCheck::kVerify, "verify",
       "", 1},
      // A real GPU cannot be failed on purpose: for a test bed whose GPUs are stand-ins (tests/rig) or a
      // site's fault-injection hook (a driver that logs an injected Xid).
      {"gpu_fail", false, Verb::kGpuFailure, "gpu_fail", RealTarget::kGpu, "", {"gpu", "xid"}, RealCheck::kVerify,
       "verify", "", 1},
      // The healer's: how it observes the site, and how it carries out its decisions.
      {"observe_tray", true, std::nullopt, "healer", RealTarget::kTray, kATray, {}, RealCheck::kOutput,
       "output: step <n> <compute_s> <step_s> [<send_s>]", "", 1},
      {"observe_links", true, std::nullopt, "healer", RealTarget::kSite, kTheSite, {}, RealCheck::kOutput,
       "output: <host> <iface> up or down", "", 1},
      {"observe_jobs", true, std::nullopt, "healer", RealTarget::kSite, kTheSite, {}, RealCheck::kOutput,
       "output: <job> <STATE> <checkpoint step> <hosts>", "", 1},
      {"drain", true, Verb::kDrain, "healer", RealTarget::kTray, kATray, {"reason"}, RealCheck::kExit,
       "exit 0 = drained", "", 1},
      {"resume", true, Verb::kResume, "healer", RealTarget::kTray, kATray, {}, RealCheck::kExit,
       "exit 0 = back in service", "", 1},
      {"diagnostic", true, Verb::kDiagnostic, "healer", RealTarget::kTray, kATray, {}, RealCheck::kExit,
       "exit 0 = passed", "", 1},
      {"start_job", true, std::nullopt, "healer", RealTarget::kSite, kTheSite, {"job", "ranks"}, RealCheck::kExit,
       "exit 0 = started", "", 1},
      {"stop_job", true, std::nullopt, "healer", RealTarget::kSite, kTheSite, {"job"}, RealCheck::kExit,
       "exit 0 = stopped", "", 1},
      {"requeue_job", true, Verb::kRequeueJob, "healer", RealTarget::kSite, kTheSite, {"job", "reason"},
       RealCheck::kExit, "exit 0 = requeued", "", 1},
      {"gpu_reset", true, Verb::kGpuReset, "healer", RealTarget::kGpu, "a GPU", {"gpu"}, RealCheck::kExit,
       "exit 0 = reset (`nvidia-smi -r -i {gpu}`)", "", 1},
      // Asks for the node's reboot and returns; the healer diagnoses the node remediation.reboot_wait later.
      {"reboot", true, Verb::kReboot, "healer", RealTarget::kTray, kATray, {}, RealCheck::kExit,
       "exit 0 = reboot started (`ipmitool ... chassis power cycle`)", "", 1},
  };
  return kTable;
}

const RealAction* FindRealAction(std::string_view name) {
  for (const RealAction& a : RealActions())
    if (a.name == name) return &a;
  return nullptr;
}

const RealAction* RealActionFor(cluster::Verb verb) {
  for (const RealAction& a : RealActions())
    if (a.verb == verb) return &a;
  return nullptr;
}

bool TargetFits(RealTarget kind, const cluster::Topology& topo, const cluster::Target& target) {
  const cluster::Kind k = topo.at(target.component).kind;
  switch (kind) {
    case RealTarget::kNic: return k == cluster::Kind::kNic;
    case RealTarget::kNvlinkPort: return k == cluster::Kind::kGpu && target.port >= 0;
    case RealTarget::kGpu: return k == cluster::Kind::kGpu;
    case RealTarget::kValve: return k == cluster::Kind::kValve;
    case RealTarget::kTray: return k == cluster::Kind::kComputeTray;
    case RealTarget::kSite: return true;
  }
  return false;
}

std::vector<const RealAction*> RealActionsOf(std::string_view injector, const cluster::Topology& topo,
                                             const cluster::Target& target) {
  std::vector<const RealAction*> all, fitting;
  for (const RealAction& a : RealActions()) {
    if (a.healer || a.injector != injector) continue;
    all.push_back(&a);
    if (TargetFits(a.target, topo, target)) fitting.push_back(&a);
  }
  return fitting.empty() ? all : fitting;
}

}  // namespace rackchaos::injectors
