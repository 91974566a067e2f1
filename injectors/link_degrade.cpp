// link_degrade: a NIC link or an NVLink port stays up but carries only part of its line rate (a cable
// that trained at a lower speed, a lane down, a congested or flapping-FEC port). Real mode: a token
// bucket on the interface, `tc qdisc add dev IF root tbf rate R ...` (REAL-COMMANDS.md §1).
#include <algorithm>
#include <cstdio>

#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

using cluster::Kind;

constexpr double kMinBandwidth = 0.001;  // a link at 0 is link_down

class LinkDegradeInjector : public Injector {
 public:
  std::string_view name() const override { return "link_degrade"; }
  std::string_view summary() const override {
    return "slow a scale-out NIC link (<tray>.nicN) or an NVLink port (<gpu>.nvlinkN) to part of its rate";
  }
  std::string_view targets() const override {
    return "a GPU's scale-out NIC (r01.tray03.nic2) or an NVLink port of a GPU (r01.tray03.gpu2.nvlink5)";
  }
  std::string_view simulation() const override {
    return "The link stays up and logs nothing; it carries `bandwidth` of its line rate (at least 0.1%). The "
           "job's collectives over that fabric (scale-out for a NIC, NVLink for a port) take 1/bandwidth as "
           "long, so its step time grows, and the rank behind the link reports slow sends in its step "
           "reports (the slow_link detector's input). Revert restores the full rate.";
  }
  std::string_view real_mode() const override {
    return "Inventory action link_degrade (NICs), an on/off action: apply limits the interface "
           "(`tc qdisc add dev {iface} root tbf rate {rate} burst 4kb latency 10ms`), revert removes the limit "
           "(`tc qdisc del dev {iface} root`), verify exits 0 while it is in place (`tc qdisc show dev {iface} "
           "| grep -q tbf`). {bandwidth} is the percentage; {rate} is bandwidth x the line rate in kbit (the "
           "model's NIC rate, or the site's `line_rate` var, e.g. `100mbit` for a lab).";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kParams = {
        {"bandwidth", ParamType::kFraction, "10%", "share of the line rate the link still carries, e.g. 10%"},
    };
    return kParams;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kLinkBandwidth}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    Kind k = topo.at(t.component).kind;
    if ((k == Kind::kGpu && t.port >= 0) || k == Kind::kNic) return Status::Ok();
    return WrongTarget(name(), "a NIC (e.g. r01.tray03.nic2) or an NVLink port", "r01.tray03.gpu2.nvlink5", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    const double bw = std::clamp(p.count("bandwidth") ? p.at("bandwidth") : 0.1, kMinBandwidth, 1.0);
    RC_RETURN_IF_ERROR(b.SetLinkBandwidth(t.component, t.port, bw, fault));
    char detail[64];
    std::snprintf(detail, sizeof detail, "bandwidth=%.4g%% baseline=100%%", bw * 100);
    return Applied{1, detail};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.Release(cluster::Held::kLinkBandwidth, t, fault);
  }
};

}  // namespace

const Injector& LinkDegrade() {
  static const LinkDegradeInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
