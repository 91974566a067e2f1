// tray_pull: a compute tray is removed; its GPUs, CPUs and NICs vanish. With `for:` it is reinserted
// after that long and boots. Real mode: Redfish ComputerSystem.Reset ForceOff / On on the tray's BMC,
// after a drain (REAL-COMMANDS.md §7).
#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

class TrayPullInjector : public Injector {
 public:
  std::string_view name() const override { return "tray_pull"; }
  std::string_view summary() const override { return "remove a compute tray (reinserted after `for:`, then it boots)"; }
  std::string_view targets() const override {
    return "a compute tray (r01.tray11)";
  }
  std::string_view simulation() const override {
    return "The tray vanishes with its GPUs, CPUs and NICs: its NIC links go down (the switch ports lose "
           "carrier), heartbeats stop and jobs on it hang until the healer acts or the collective timeout "
           "fires. With `for:` the tray is reinserted after that long (links up) and boots (the model's "
           "node_boot time).";
  }
  std::string_view real_mode() const override {
    return "Inventory action tray_pull, an on/off action, usually with run_on a management host: apply "
           "powers the tray off (Redfish ComputerSystem.Reset ForceOff at {bmc}, after a drain), revert "
           "powers it on, verify exits 0 while it is off and 1 when on (poll until the BMC state settles).";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    return kNone;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kTrayPresence}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    return NeedKind(name(), cluster::Kind::kComputeTray, "a compute tray", "r01.tray11", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params&,
                        FaultId fault) const override {
    RC_RETURN_IF_ERROR(b.SetTrayPresent(t.component, false, fault));
    return Applied{1, "removed"};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.SetTrayPresent(t.component, true, fault);
  }
};

}  // namespace

const Injector& TrayPull() {
  static const TrayPullInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
