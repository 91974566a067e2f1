// process_crash: the training process on a GPU dies (a software bug, NCCL watchdog, silent data
// corruption caught by a check): the job fails at once and must be restarted from its checkpoint. No
// hardware is harmed, so there is nothing to revert. Real mode: `kill -SEGV` of the rank's PID.
#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

class ProcessCrashInjector : public Injector {
 public:
  std::string_view name() const override { return "process_crash"; }
  std::string_view summary() const override { return "kill the job's process on a GPU (a software failure)"; }
  std::string_view targets() const override {
    return "a GPU whose rank belongs to a job (r01.tray02.gpu0)";
  }
  std::string_view simulation() const override {
    return "The job's process on that GPU dies: the job fails at once and restarts from its last checkpoint. "
           "No hardware changes, so there is nothing to revert.";
  }
  std::string_view real_mode() const override {
    return "None yet: no inventory action carries it, so such plans are refused on a site inventory (the "
           "intended command is `kill -SEGV` of the rank's PID).";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    return kNone;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kProcessCrash}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    return NeedKind(name(), cluster::Kind::kGpu, "a GPU", "r01.tray05.gpu1", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params&,
                        FaultId fault) const override {
    RC_RETURN_IF_ERROR(b.CrashProcesses(t.component, fault));
    return Applied{0, "processes killed"};
  }

  Status Revert(cluster::Backend&, const cluster::Topology&, const cluster::Target&, const Applied&, FaultId) const override {
    return Status::Ok();  // a dead process is not brought back; the job restarts from its checkpoint
  }
};

}  // namespace

const Injector& ProcessCrash() {
  static const ProcessCrashInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
