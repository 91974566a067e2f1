// link_down: an NVLink port of one GPU ("r01.tray03.gpu2.nvlink5"), or a GPU's scale-out NIC link
// ("r01.tray03.nic2"). Real mode: `nv set interface acpN link state down` on the switch tray, or
// `ip link set dev IF down` / `mlxlink --port_state DN` on the host (REAL-COMMANDS.md §1).
#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

using cluster::Kind;

class LinkDownInjector : public Injector {
 public:
  std::string_view name() const override { return "link_down"; }
  std::string_view summary() const override {
    return "take an NVLink port (<gpu>.nvlinkN) or a scale-out NIC link (<tray>.nicN) down";
  }
  std::string_view targets() const override {
    return "an NVLink port of a GPU (r01.tray03.gpu2.nvlink5) or a GPU's scale-out NIC (r01.tray03.nic2)";
  }
  std::string_view simulation() const override {
    return "The port goes down: the driver logs Xid 145 and the GPU's NVLink bandwidth falls by one link in "
           "18 (a NIC: its link goes down and traffic over it stops). A synchronous job slows to its slowest "
           "collective. Revert brings the link back up.";
  }
  std::string_view real_mode() const override {
    return "Inventory action link_down (NIC) or nvlink_down (NVLink port), an on/off action: apply takes the "
           "link down (`ip link set dev {iface} down`, or `nv set interface acp{port} link state down` on "
           "the switch tray), revert brings it up, verify exits 0 while it is down and 1 when up. Never map "
           "the interface that carries SSH.";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    return kNone;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kNvlinkPort, cluster::Verb::kNicLink}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    Kind k = topo.at(t.component).kind;
    if ((k == Kind::kGpu && t.port >= 0) || k == Kind::kNic) return Status::Ok();
    return WrongTarget(name(), "an NVLink port (e.g. r01.tray03.gpu2.nvlink5) or a NIC", "r01.tray03.nic2", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Params&,
                        FaultId fault) const override {
    Status s = topo.at(t.component).kind == Kind::kNic ? b.SetNicLink(t.component, false, fault)
                                                       : b.SetNvlinkPort(t.component, t.port, false, fault);
    RC_RETURN_IF_ERROR(s);
    return Applied{1, "state=down baseline=up"};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return topo.at(t.component).kind == Kind::kNic ? b.SetNicLink(t.component, true, fault)
                                                   : b.SetNvlinkPort(t.component, t.port, true, fault);
  }
};

}  // namespace

const Injector& LinkDown() {
  static const LinkDownInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
