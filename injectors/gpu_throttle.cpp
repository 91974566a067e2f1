// gpu_throttle: caps a GPU's power so it runs slower; a synchronous job slows to its pace.
// Real mode: `nvidia-smi -i GPU -pl W`, reverted to the recorded baseline (REAL-COMMANDS.md §2a).
#include <cstdio>

#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

std::string Watts(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fW", w);
  return buf;
}

class GpuThrottleInjector : public Injector {
 public:
  std::string_view name() const override { return "gpu_throttle"; }
  std::string_view summary() const override { return "cap a GPU's power limit (power_cap: W, or share: % of TDP)"; }
  std::string_view targets() const override {
    return "a GPU (r01.tray05.gpu1)";
  }
  std::string_view simulation() const override {
    return "The GPU's power limit is set to power_cap (or share x TDP), clamped to the model's minimum "
           "power; its speed becomes (cap/TDP)^(1/3) of full clock and a synchronous job runs at its pace. "
           "Revert ends this fault's cap: the baseline limit comes back, or another fault's lower cap still in force.";
  }
  std::string_view real_mode() const override {
    return "Inventory action gpu_throttle, a value action: baseline prints the current limit in W "
           "(`nvidia-smi -i {gpu} --query-gpu=power.limit --format=csv,noheader,nounits`), apply sets "
           "{watts} (`nvidia-smi -i {gpu} -pl {watts}`), revert sets {baseline}; both are read back within "
           "1%. With other gpu_throttle faults on the GPU the lowest cap is set, a revert sets the lowest "
           "of the others' and the last sets {baseline}. Needs persistence mode.";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kParams = {
        {"power_cap", ParamType::kWatts, "", "power limit to set, e.g. 600W (clamped to the GPU's minimum)"},
        {"share", ParamType::kFraction, "", "power limit as a share of TDP, e.g. 50%; used when power_cap is absent (default 50%)"},
    };
    return kParams;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kPowerCap}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    return NeedKind(name(), cluster::Kind::kGpu, "a GPU", "r01.tray05.gpu1", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    RC_ASSIGN_OR_RETURN(double baseline, b.GetPowerCap(t.component));
    double cap = p.count("power_cap") ? p.at("power_cap")
                                      : topo.model().gpu_tdp_w * (p.count("share") ? p.at("share") : 0.5);
    RC_RETURN_IF_ERROR(b.SetPowerCap(t.component, cap, fault));
    return Applied{baseline, "power_cap=" + Watts(cap) + " baseline=" + Watts(baseline)};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.Release(cluster::Held::kPowerCap, t, fault);
  }
};

}  // namespace

const Injector& GpuThrottle() {
  static const GpuThrottleInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
