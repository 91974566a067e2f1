// The storage path of a compute tray: storage_degrade (its NVMe cache reads at part of its rate: a worn
// or throttling drive, a degraded RAID member) and cache_fail (the cache is lost with the checkpoint shards on it:
// reads go to the region's object store). Simulator only: no site command templates exist for them yet.
#include <algorithm>
#include <cstdio>
#include <string>

#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

constexpr double kMinRead = 0.001;  // a cache at 0 is cache_fail

class StorageInjector : public Injector {
 public:
  explicit StorageInjector(bool lost) : lost_(lost) {}

  std::string_view name() const override { return lost_ ? "cache_fail" : "storage_degrade"; }
  std::string_view summary() const override {
    return lost_ ? "lose a compute tray's NVMe cache: its GPUs read their input from the object store"
                 : "slow a compute tray's NVMe cache read rate to part of its rate";
  }
  std::string_view targets() const override { return "a compute tray (r01.tray05): its local NVMe cache"; }
  std::string_view simulation() const override {
    return lost_ ? "The tray's GPUs read their job's input from the region's object store at the catalogue's "
                   "object_store rate instead of the cache's. A job whose input (workload.jobs[].input_mb_per_s) "
                   "then takes longer to read than a step stalls on data: every step lasts the read. Nothing is "
                   "logged; the starved ranks report a longer compute phase in the step reports. A job with "
                   "checkpoint.copy_time on the tray loses its acknowledged checkpoint if the copy to the other "
                   "region is not done: its next restart goes back to the newest far copy. Revert restores the "
                   "cache."
                 : "The tray's cache reads at `bandwidth` of the catalogue's cache rate. A job whose input "
                   "(workload.jobs[].input_mb_per_s) then takes longer to read than a step stalls on data: every "
                   "step lasts the read. Nothing is logged; the starved ranks report a longer compute phase in the "
                   "step reports. Revert restores the rate.";
  }
  std::string_view real_mode() const override {
    return "Not available: no inventory action exists for a tray's storage path, so a plan with this fault "
           "is refused in real mode.";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    static const std::vector<ParamInfo> kRead = {
        {"bandwidth", ParamType::kFraction, "20%", "share of the cache's read rate left, e.g. 20%"},
    };
    return lost_ ? kNone : kRead;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kStorageRead}; }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    return NeedKind(name(), cluster::Kind::kComputeTray, "a compute tray", "r01.tray05", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    const double read = lost_ ? 0 : std::clamp(p.count("bandwidth") ? p.at("bandwidth") : 0.2, kMinRead, 1.0);
    RC_RETURN_IF_ERROR(b.SetStorageRead(t.component, read, fault));
    if (lost_) return Applied{1, "cache lost baseline=100%"};
    char detail[64];
    std::snprintf(detail, sizeof detail, "read=%.4g%% baseline=100%%", read * 100);
    return Applied{1, detail};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.Release(cluster::Held::kStorageRead, t, fault);
  }

 private:
  bool lost_;
};

}  // namespace

const Injector& StorageDegrade() {
  static const StorageInjector kInjector(false);
  return kInjector;
}

const Injector& CacheFail() {
  static const StorageInjector kInjector(true);
  return kInjector;
}

}  // namespace rackchaos::injectors
