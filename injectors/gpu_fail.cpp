// gpu_fail: a GPU fails in hardware (falls off the bus, uncorrectable ECC, GSP error); the driver prints
// the Xid given (default 79). It stays failed until the fault is reverted (the GPU is repaired or
// swapped). Real mode: a real GPU cannot be failed on purpose, so only an inventory whose GPUs can be
// (a test bed's stand-ins, tests/rig; a site's own injection hook) defines the gpu_fail action; `dcgmi
// test --inject -f 230` exercises the telemetry path only (REAL-COMMANDS.md §2c).
#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

class GpuFailInjector : public Injector {
 public:
  std::string_view name() const override { return "gpu_fail"; }
  std::string_view summary() const override { return "fail a GPU in hardware (Xid 79 by default) until repaired"; }
  std::string_view targets() const override {
    return "a GPU (r01.tray03.gpu2)";
  }
  std::string_view simulation() const override {
    return "The GPU fails in hardware: the driver logs the given Xid and the GPU stops serving; jobs on it "
           "hang or fail. It stays failed until the fault is reverted (the GPU repaired or swapped), so give "
           "it a `for:`.";
  }
  std::string_view real_mode() const override {
    return "Inventory action gpu_fail, an on/off action with {gpu} and {xid}: apply makes the GPU fail with that "
           "Xid, verify exits 0 while it is failed, revert repairs it. A real GPU cannot be failed on purpose, so "
           "a site inventory usually has no such action (plans with gpu_fail are then refused); a test bed with "
           "stand-in GPUs has one (tests/rig: `rig gpu {host} fail {gpu} {xid}`, its Xid line in the tray's "
           "kernel log and DCGM's Xid gauge). `dcgmi test --inject -f 230` exercises only the telemetry path.";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kParams = {
        {"xid", ParamType::kInteger, "79", "the Xid the driver prints: 79 off the bus, 48 DBE, 95 uncontained ECC, 119 GSP"},
    };
    return kParams;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kGpuFailure}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    return NeedKind(name(), cluster::Kind::kGpu, "a GPU", "r01.tray05.gpu1", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    int xid = static_cast<int>(p.count("xid") ? p.at("xid") : 79);
    RC_RETURN_IF_ERROR(b.SetGpuFailed(t.component, true, xid, fault));
    return Applied{static_cast<double>(xid), "xid=" + std::to_string(xid)};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied& a,
                FaultId fault) const override {
    return b.SetGpuFailed(t.component, false, static_cast<int>(a.baseline), fault);
  }
};

}  // namespace

const Injector& GpuFail() {
  static const GpuFailInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
