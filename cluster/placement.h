// Placement: where jobs sit and which fabric their parallel groups use, as pure functions of the
// topology, the free trays and the job. No simulator, clock or random draw: the simulator's scheduler
// (cluster/sim_scheduler.h) places every job with ChooseTrays, and `rackchaos blast` / `rackchaos spof`
// ask PlaceAtStart where a plan's jobs sit when its run starts and CrossingOf which spines their groups
// cross, without building a simulator. One rule, so the analysis and the run cannot disagree.
//
// The rule (the scheduler knows only what Slurm knows: drains and nodes that are down, not which GPU
// is secretly slow):
// - A job takes whole trays: the first free ones in tray order, regular trays before hot spares. Spare
//   racks' trays (SimOptions::spare_racks, cluster/spare_racks.h) only for a job requeued from a lost
//   NVLink domain, and then first.
// - With regions a job is placed inside one region, the one it last ran in first, then the others in
//   plan order; a region that is down is skipped (RegionWindows).
// - A grouped job (JobConfig::grouped) keeps each block of tp*ep consecutive ranks (whole TP and EP
//   groups) inside one NVLink domain: when the first free trays would split a block, it fills domain by
//   domain, each with a whole number of blocks. Pipeline stages and data-parallel replicas may span
//   domains.
// - An elastic job under remediation.shrink that does not fit restarts on the whole trays free (down to
//   min_gpus); a grouped one drops whole sets of ep data-parallel replicas (tp*pp*ep GPUs) and keeps
//   whole blocks per domain.
// Cost: a job's trays per attempt, found through an index of the free trays (TrayPool::NextFree); a
// grouped job that must fill domain by domain, one pass over a region's tray slots.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cluster/job.h"
#include "cluster/topology.h"
#include "core/status.h"
#include "core/tray_list.h"

namespace rackchaos::cluster {

// What a tray is kept for: regular work, a hot spare (cluster.spare_trays), or a spare rack's tray
// (cluster.spares.racks: only for jobs whose NVLink domain was lost).
enum class TrayUse : uint8_t { kRegular, kHotSpare, kSpareRack };

// Per tray slot (Topology::TraySlot): whether it is free (usable and nobody on it) and its use, with the
// free counts and an index of the free slots by use kept in step. All trays start free. Depends on the
// topology and the spare options only.
class TrayPool {
 public:
  TrayPool(const Topology& topo, int spare_racks, const std::vector<int>& region_spare_racks);

  // The first free slot of use `u` in [k, hi), else hi. O(slots / 4096): a million-GPU region has 200,000
  // trays, nearly all taken, and placement and restarts look for the first few free ones.
  size_t NextFree(TrayUse u, size_t k, size_t hi) const;
  // Calls fn(k) for the free slots of use `u` in [lo, hi) in order, while it returns true.
  template <typename Fn>
  void ForEachFree(TrayUse u, size_t lo, size_t hi, Fn&& fn) const {
    const std::vector<uint64_t>& bits = index_[static_cast<size_t>(u)].bits;
    hi = std::min(hi, free_.size());
    for (size_t k = NextFree(u, lo, hi); k < hi; k = NextFree(u, k / 64 * 64 + 64, hi))
      for (uint64_t word = bits[k / 64] & (~uint64_t{0} << (k % 64)); word != 0; word &= word - 1) {
        const size_t slot = k / 64 * 64 + static_cast<size_t>(std::countr_zero(word));
        if (slot >= hi || !fn(slot)) return;
      }
  }
  bool free(size_t k) const { return free_[k] != 0; }
  TrayUse use(size_t k) const { return use_[k]; }
  const std::vector<uint8_t>& free_flags() const { return free_; }
  const std::vector<TrayUse>& uses() const { return use_; }
  size_t free_count() const { return free_count_; }
  size_t free_spare_rack() const { return free_spare_rack_; }  // free trays of spare racks, within free_count()
  bool has_spare_racks() const { return spare_racks_; }
  // O(1).
  void SetFree(size_t k, bool free) {
    const uint8_t f = free;
    if (f == free_[k]) return;
    free_count_ = free_count_ + f - free_[k];
    if (spare_racks_ && use_[k] == TrayUse::kSpareRack) free_spare_rack_ = free_spare_rack_ + f - free_[k];
    free_[k] = f;
    FreeIndex& index = index_[static_cast<size_t>(use_[k])];
    uint64_t& word = index.bits[k / 64];
    const uint64_t summary_bit = uint64_t{1} << (k / 64 % 64);
    if (f) {
      if (word == 0) index.words[k / 4096] |= summary_bit;
      word |= uint64_t{1} << (k % 64);
    } else if ((word &= ~(uint64_t{1} << (k % 64))) == 0) {
      index.words[k / 4096] &= ~summary_bit;
    }
  }

 private:
  // The free slots of one use: bit k of `bits` per slot, bit w of `words` set while bits[w] is not 0.
  struct FreeIndex {
    std::vector<uint64_t> bits, words;
  };
  std::vector<uint8_t> free_;
  std::vector<TrayUse> use_;
  std::array<FreeIndex, 3> index_;  // by TrayUse
  size_t free_count_ = 0, free_spare_rack_ = 0;
  bool spare_racks_ = false;
};

// AddJob's checks: at least one GPU and no more than the cluster has, collective shares below 1, a
// grouped job's degrees (CheckGroups). Invalid names the job and what would be valid.
Status CheckJob(const JobConfig& job, const Topology& topo);

// Tray slot windows [lo, hi) to place a job in: the whole cluster without regions; else one per region
// that is up (`region_down`, per region), `home_region` first (-1: none).
std::vector<std::pair<size_t, size_t>> RegionWindows(const Topology& topo, int home_region,
                                                     const std::vector<uint8_t>& region_down);

// A job asking for trays.
struct PlaceAsk {
  const JobConfig& cfg;
  int home_region = -1;      // the region it last ran in, tried first
  bool domain_lost = false;  // requeued from a lost NVLink domain: spare racks first
  bool may_shrink = false;   // remediation.shrink and the job has run before: min_gpus applies
};
// Where it goes: the trays (sorted), the GPUs placed (the first `gpus` of those trays; below cfg.gpus
// when shrunk) and how many of the trays are regular ones (0 when the domain rule placed them).
struct Seating {
  std::vector<ComponentId> trays;
  int gpus = 0;
  size_t regular = 0;
};
// The placement the rule above gives now; nullopt when the job must wait.
std::optional<Seating> ChooseTrays(const Topology& topo, const TrayPool& pool, const PlaceAsk& ask,
                                   const std::vector<uint8_t>& region_down);
// The trays the rule takes for `gpus` GPUs (`need` trays) among the free trays of `pool` and slots
// [lo, hi) only; nothing when that placement does not exist. `regular` (optional) as in Seating.
std::vector<ComponentId> PickTrays(const Topology& topo, const TrayPool& pool, const JobConfig& cfg, bool domain_lost,
                                   int gpus, size_t need, size_t lo = 0, size_t hi = SIZE_MAX,
                                   size_t* regular = nullptr);

// ---- parallel groups (placement_groups.cpp)

// Kinds of groups that may leave an NVLink domain: data parallel and pipeline parallel.
inline constexpr int kDp = 0, kPp = 1;
// Per kind of group of a grouped job, from its placement: the NVLink domains holding a group that stays
// inside one domain (it sends over NVLink) and those holding a rank of a group that crosses domains (its
// NVLink hop there, then the NICs), both sorted; the pods holding ranks of its groups that span leaf
// groups (their traffic crosses the spines); whether some group spans pods (the super-spines).
struct KindPlacement {
  std::vector<int> nvlink_domains, hop_domains;
  bool spans_pods = false;
  std::vector<int> spine_pods;
  bool crosses() const { return !hop_domains.empty(); }
};
// Where a job runs.
struct Placement {
  TrayList trays;  // sorted; its GPUs are the first `gpus` GPUs of these trays
  int gpus = 0;
  std::array<KindPlacement, 2> kinds;  // GroupFabrics of the placement; empty for an ungrouped job
};
// Which fabric each group sends over (JobConfig's rank order): a group inside one domain uses NVLink
// there; a group across domains the NICs and an NVLink hop in every domain holding one of its ranks.
// Ungrouped jobs: DP over the NICs, as always (nothing noted). One walk over the groups.
std::array<KindPlacement, 2> GroupFabrics(const Topology& topo, const JobConfig& cfg, const Placement& at);
// A group of `count` ranks `stride` apart from `first` crosses NVLink domains. O(1).
bool GroupCrosses(const Topology& topo, const Placement& at, int64_t first, int64_t stride, int64_t count);
// A rank's DP and PP groups: bit kDp set when its DP group crosses domains, bit kPp its PP group. Both
// for an ungrouped job's GPUs; 0 for a GPU not on the job's trays. O(log trays).
int RankCrossing(const Topology& topo, const JobConfig& cfg, const Placement& at, ComponentId gpu);
// The GPU is a rank whose DP or PP group crosses domains (every rank of an ungrouped job).
inline bool GpuUsesNic(const Topology& topo, const JobConfig& cfg, const Placement& at, ComponentId gpu) {
  return RankCrossing(topo, cfg, at, gpu) != 0;
}

// The spines a job's traffic crosses at its placement, the rule a lost spine slows it by
// (sim_spines.cpp): per kind of group, the pods whose spines carry its groups that span leaf groups,
// and whether one spans pods (the super-spines). A grouped job: only its DP and PP groups that span
// leaf groups; else the whole job (as dp), when its trays span leaf groups.
struct SpineCrossing {
  struct Groups {
    std::vector<int> pods;  // sorted; empty: these groups cross no spine
    bool spans_pods = false;
  };
  Groups dp, pp;
};
SpineCrossing CrossingOf(const Topology& topo, const JobConfig& cfg, const Placement& at);

// The exposed shares of a step sent over NVLink and over the NICs by a rank whose DP and PP groups
// cross as `cross` says (RankCrossing); -1: the job's, with a kind over the NICs if any group crosses.
struct FabricShares {
  double nvlink = 0, scaleout = 0;
};
FabricShares FabricSharesOf(const JobConfig& cfg, const Placement& at, int cross = -1);

// ---- a plan's jobs when its run starts

// Per job (in order) the placement the simulator gives it at time zero, every tray healthy and free:
// empty trays for a job CheckJob rejects or that stays queued. What SimBackend::Start places, without one.
std::vector<Placement> PlaceAtStart(const Topology& topo, const std::vector<JobConfig>& jobs, int spare_racks,
                                    const std::vector<int>& region_spare_racks);

}  // namespace rackchaos::cluster
