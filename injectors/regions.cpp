// Faults of a region (plans with cluster.regions): its object store slowed or failed, its checkpoint
// store failed, or the whole region down. Simulator only: no site command templates exist for them, so
// real mode refuses them naming the inventory action it would need (as storage.cpp does).
#include <algorithm>
#include <cstdio>
#include <string>

#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

using cluster::Kind;

enum class What { kObjectDegrade, kObjectFail, kCheckpointFail, kOutage };

struct Text {
  const char* name;
  Kind kind;
  const char* example;
  const char* summary;
  const char* simulation;
  const char* real_mode;
};

const Text& TextOf(What w) {
  static const Text kTexts[] = {
      {"object_store_degrade", Kind::kObjectStore, "east.objstore",
       "slow a region's object store: trays whose NVMe cache is lost read their input slower",
       "The region's object store serves `bandwidth` of the catalogue's object_store rate. Only trays whose NVMe "
       "cache is lost (cache_fail) read from it: a job on such a tray whose input (workload.jobs[].input_mb_per_s) "
       "then takes longer to read than a step stalls on data, every step lasting the read. The region's health "
       "probe reports the store failing its read service level at its next poll. Revert restores the rate.",
       "Not available: no inventory action exists for a region's object store (it would be a store_rate action, "
       "e.g. a QoS limit on the store's gateway), so a plan with this fault is refused in real mode."},
      {"object_store_fail", Kind::kObjectStore, "east.objstore",
       "fail a region's object store: jobs reading from it (trays with a lost cache) hang",
       "The region's object store serves nothing. A job with a tray reading from it (its cache lost by cache_fail) "
       "hangs: its data loader waits, the other ranks wait at the next collective, and the collective timeout "
       "fires unless the store comes back first. The region's health probe reports it at its next poll. Revert "
       "restores the store.",
       "Not available: no inventory action exists for a region's object store (it would be a store_rate action), "
       "so a plan with this fault is refused in real mode."},
      {"checkpoint_store_fail", Kind::kCheckpointStore, "east.ckptstore",
       "fail a region's checkpoint store: checkpoint writes are not acknowledged, jobs train on",
       "The region's checkpoint store cannot acknowledge writes. A job checkpointing there keeps training (as with "
       "asynchronous checkpointing: the save fails in the background) but no checkpoint counts, so what a restart "
       "would redo grows until a write succeeds after the revert. The region's health probe reports it at its next "
       "poll.",
       "Not available: no inventory action exists for a region's checkpoint store (it would be a store_rate "
       "action), so a plan with this fault is refused in real mode."},
      {"region_outage", Kind::kRegion, "east",
       "take a whole region down: every rack loses power, its stores with them",
       "Every rack of the region loses power (as power_fail beyond redundancy: heartbeats stop, jobs hang) and its "
       "checkpoint store is gone: a job's acknowledged checkpoints not yet copied to the next region "
       "(checkpoint.copy_time, or checkpoint.size_gb over cluster.region_link_gbytes_per_s) are lost, so its "
       "restart in another region goes back to the newest far copy. The region's health probe reports it "
       "unreachable at its next poll. Revert powers the racks back; they boot and return to the pool.",
       "Not available: no inventory action exists to take a whole region down (it would be a region_outage action, "
       "e.g. fencing a site's uplinks), so a plan with this fault is refused in real mode."},
  };
  return kTexts[static_cast<int>(w)];
}

class RegionInjector : public Injector {
 public:
  explicit RegionInjector(What what) : what_(what), text_(TextOf(what)) {}

  std::string_view name() const override { return text_.name; }
  std::string_view summary() const override { return text_.summary; }
  std::string_view targets() const override {
    return what_ == What::kOutage           ? "a region (east) of a plan with cluster.regions"
           : what_ == What::kCheckpointFail ? "a region's checkpoint store (east.ckptstore)"
                                            : "a region's object store (east.objstore)";
  }
  std::string_view simulation() const override { return text_.simulation; }
  std::string_view real_mode() const override { return text_.real_mode; }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    static const std::vector<ParamInfo> kRead = {
        {"bandwidth", ParamType::kFraction, "20%", "share of the object store's read rate left, e.g. 20%"},
    };
    return what_ == What::kObjectDegrade ? kRead : kNone;
  }
  std::vector<cluster::Verb> verbs() const override {
    return {what_ == What::kOutage ? cluster::Verb::kRegionOutage : cluster::Verb::kStoreRate};
  }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    const char* wanted = what_ == What::kOutage ? "a region" : what_ == What::kCheckpointFail
                                                                  ? "a region's checkpoint store"
                                                                  : "a region's object store";
    return NeedKind(name(), text_.kind, wanted, text_.example, topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    if (what_ == What::kOutage) {
      RC_RETURN_IF_ERROR(b.SetRegionDown(t.component, true, fault));
      return Applied{1, "region down"};
    }
    const double rate = what_ == What::kObjectDegrade ? std::clamp(p.count("bandwidth") ? p.at("bandwidth") : 0.2, 0.001, 1.0) : 0;
    RC_RETURN_IF_ERROR(b.SetStoreRate(t.component, rate, fault));
    char detail[64];
    std::snprintf(detail, sizeof detail, "rate=%.4g%% baseline=100%%", rate * 100);
    return Applied{1, detail};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology&, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    if (what_ == What::kOutage) return b.SetRegionDown(t.component, false, fault);
    return b.Release(cluster::Held::kStoreRate, t, fault);
  }

 private:
  What what_;
  const Text& text_;
};

}  // namespace

const Injector& ObjectStoreDegrade() {
  static const RegionInjector kInjector(What::kObjectDegrade);
  return kInjector;
}

const Injector& ObjectStoreFail() {
  static const RegionInjector kInjector(What::kObjectFail);
  return kInjector;
}

const Injector& CheckpointStoreFail() {
  static const RegionInjector kInjector(What::kCheckpointFail);
  return kInjector;
}

const Injector& RegionOutage() {
  static const RegionInjector kInjector(What::kOutage);
  return kInjector;
}

}  // namespace rackchaos::injectors
