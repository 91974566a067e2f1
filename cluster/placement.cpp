// Which trays a job takes (cluster/placement.h). The grouped rule: the scheduler first takes the trays
// it would take for any job (the first free ones); only when that puts a block of tp*ep ranks across two
// NVLink domains does it fill domain by domain, each with a whole number of blocks.
#include "cluster/placement.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <span>
#include <string>

#include "cluster/spare_racks.h"

namespace rackchaos::cluster {

TrayPool::TrayPool(const Topology& topo, int spare_racks, const std::vector<int>& region_spare_racks)
    : spare_racks_(spare_racks > 0) {
  free_.assign(topo.trays().size(), 1);
  use_.reserve(topo.trays().size());
  for (ComponentId tray : topo.trays()) use_.push_back(topo.at(tray).spare ? TrayUse::kHotSpare : TrayUse::kRegular);
  free_count_ = free_.size();
  if (spare_racks_) {
    const auto& racks = topo.racks();
    for (RackRange range : SpareRackRanges(topo, spare_racks, region_spare_racks))
      for (int k = range.first; k < range.end; ++k)
        for (ComponentId tray : topo.ChildrenOf(racks[static_cast<size_t>(k)]))
          if (topo.at(tray).kind == Kind::kComputeTray) {
            use_[topo.TraySlot(tray)] = TrayUse::kSpareRack;
            free_spare_rack_ += free_[topo.TraySlot(tray)];
          }
  }
  for (FreeIndex& index : index_) {
    index.bits.assign((free_.size() + 63) / 64, 0);
    index.words.assign((index.bits.size() + 63) / 64, 0);
  }
  for (size_t k = 0; k < free_.size(); ++k) {  // every slot starts free
    FreeIndex& index = index_[static_cast<size_t>(use_[k])];
    index.bits[k / 64] |= uint64_t{1} << (k % 64);
    index.words[k / 4096] |= uint64_t{1} << (k / 64 % 64);
  }
}

size_t TrayPool::NextFree(TrayUse u, size_t k, size_t hi) const {
  hi = std::min(hi, free_.size());
  if (k >= hi) return hi;
  const FreeIndex& index = index_[static_cast<size_t>(u)];
  size_t w = k / 64;
  uint64_t word = index.bits[w] & (~uint64_t{0} << (k % 64));
  while (word == 0) {  // the next word with a free slot, through the summary
    if (++w >= index.bits.size()) return hi;
    size_t s = w / 64;
    uint64_t summary = index.words[s] & (~uint64_t{0} << (w % 64));
    while (summary == 0) {
      if (++s >= index.words.size()) return hi;
      summary = index.words[s];
    }
    w = s * 64 + static_cast<size_t>(std::countr_zero(summary));
    if (w * 64 >= hi) return hi;
    word = index.bits[w];
  }
  return std::min(hi, w * 64 + static_cast<size_t>(std::countr_zero(word)));
}

Status CheckJob(const JobConfig& config, const Topology& topo) {
  if (config.gpus < 1) return Status::Invalid("job '" + config.name + "' needs at least one GPU");
  if (config.gpus > static_cast<int>(topo.gpus().size()))
    return Status::Invalid("job '" + config.name + "' asks for " + std::to_string(config.gpus) + " GPUs; the cluster has " +
                           std::to_string(topo.gpus().size()));
  if (config.nvlink_share < 0 || config.scaleout_share < 0 || config.nvlink_share + config.scaleout_share >= 1)
    return Status::Invalid("job '" + config.name + "': collective shares must be >= 0 and sum below 1");
  return CheckGroups(config, topo.model());
}

std::vector<std::pair<size_t, size_t>> RegionWindows(const Topology& topo, int home_region,
                                                     const std::vector<uint8_t>& region_down) {
  const auto& regions = topo.regions();
  if (regions.empty()) return {{0, topo.trays().size()}};
  const size_t per_rack = static_cast<size_t>(topo.model().compute_trays);
  std::vector<std::pair<size_t, size_t>> out;
  auto add = [&](size_t k) {
    if (region_down[k]) return;
    const size_t lo = static_cast<size_t>(regions[k].first_rack) * per_rack;
    out.push_back({lo, lo + static_cast<size_t>(regions[k].racks) * per_rack});
  };
  if (home_region >= 0) add(static_cast<size_t>(home_region));
  for (size_t k = 0; k < regions.size(); ++k)
    if (static_cast<int>(k) != home_region) add(k);
  return out;
}

namespace {

// True when no block of `block` consecutive ranks crosses from one NVLink domain to another. The job's
// ranks are the first `gpus` GPUs of `trays` (sorted, so each domain's trays are contiguous), a tray at
// a time.
bool BlocksInDomains(const Topology& topo, const std::vector<ComponentId>& trays, int gpus, int block) {
  const int64_t per_tray = topo.model().gpus_per_tray;
  for (size_t i = 0; i + 1 < trays.size(); ++i) {
    const int64_t end = static_cast<int64_t>(i + 1) * per_tray;  // first rank of tray i + 1
    if (end >= gpus) break;
    if (end % block != 0 && topo.DomainOfRack(topo.at(trays[i]).rack) != topo.DomainOfRack(topo.at(trays[i + 1]).rack))
      return false;
  }
  return true;
}

// Fills NVLink domains in order, each with a whole number of blocks (a multiple of `unit` trays) or with
// all the job still needs. Regular trays first; hot spares only if the regular ones cannot hold the job;
// spare racks' trays only for a job whose NVLink domain was lost. Returns the trays (sorted), or nothing
// when no such placement exists now.
std::vector<ComponentId> PlaceByDomain(const Topology& topo, const std::vector<uint8_t>& free,
                                       const std::vector<TrayUse>& use, int gpus, int block, bool spare_racks_ok,
                                       size_t lo, size_t hi) {
  const int per_tray = topo.model().gpus_per_tray;
  const size_t unit = static_cast<size_t>(std::lcm(block, per_tray) / per_tray);
  const std::vector<ComponentId>& all = topo.trays();
  for (uint8_t allow_spares : {0, 1}) {
    std::vector<ComponentId> out;
    int left = gpus;
    const size_t end = std::min(hi, all.size());  // the tray slots of one region, or all
    for (size_t k = lo; k < end && left > 0;) {
      const int domain = topo.DomainOfRack(topo.at(all[k]).rack);
      std::vector<ComponentId> here;
      for (; k < end && topo.DomainOfRack(topo.at(all[k]).rack) == domain; ++k)
        if (free[k] && (use[k] == TrayUse::kSpareRack ? spare_racks_ok : allow_spares || use[k] == TrayUse::kRegular))
          here.push_back(all[k]);
      const size_t rest = static_cast<size_t>((left + per_tray - 1) / per_tray);
      const size_t take = here.size() >= rest ? rest : here.size() / unit * unit;
      out.insert(out.end(), here.begin(), here.begin() + static_cast<std::ptrdiff_t>(take));
      left -= static_cast<int>(std::min(take * static_cast<size_t>(per_tray), static_cast<size_t>(left)));
    }
    if (left <= 0) return out;
  }
  return {};
}

// The most GPUs a shrunk grouped job can restart on: a multiple of tp*pp*ep (whole sets of ep
// data-parallel replicas, so dp stays a multiple of ep), at most `most`, that whole blocks per domain
// can hold in the free trays it may use; 0 when that is below min_gpus.
int ShrunkGroupedSize(const Topology& topo, const TrayPool& pool, const JobConfig& c, bool domain_lost, int most) {
  const int per_tray = topo.model().gpus_per_tray, block = c.tp * c.ep;
  const int64_t unit_gpus = std::lcm(block, per_tray), step = int64_t{c.tp} * c.pp * c.ep;
  int64_t fits = 0;  // GPUs that whole units (of whole blocks) per domain hold
  const std::vector<ComponentId>& all = topo.trays();
  for (size_t k = 0; k < all.size();) {
    const int domain = topo.DomainOfRack(topo.at(all[k]).rack);
    int64_t here = 0;
    for (; k < all.size() && topo.DomainOfRack(topo.at(all[k]).rack) == domain; ++k)
      here += pool.free(k) && (pool.use(k) == TrayUse::kSpareRack ? domain_lost : true);
    fits += here * per_tray / unit_gpus * unit_gpus;
  }
  const int64_t size = std::min<int64_t>(most, fits) / step * step;
  return size >= std::max(c.min_gpus, 1) ? static_cast<int>(size) : 0;
}

}  // namespace

std::vector<ComponentId> PickTrays(const Topology& topo, const TrayPool& pool, const JobConfig& cfg, bool domain_lost,
                                   int gpus, size_t need, size_t lo, size_t hi, size_t* regular) {
  std::vector<ComponentId> trays;
  trays.reserve(need);
  const std::vector<ComponentId>& all = topo.trays();
  static constexpr TrayUse kRegularFirst[] = {TrayUse::kRegular, TrayUse::kHotSpare},
                           kSpareRackFirst[] = {TrayUse::kSpareRack, TrayUse::kRegular, TrayUse::kHotSpare};
  size_t regulars = 0;
  for (TrayUse u : domain_lost ? std::span<const TrayUse>(kSpareRackFirst) : std::span<const TrayUse>(kRegularFirst)) {
    const size_t before = trays.size(), end = std::min(hi, all.size());
    if (trays.size() < need)
      pool.ForEachFree(u, lo, end, [&](size_t k) {
        trays.push_back(all[k]);
        return trays.size() < need;
      });
    if (u == TrayUse::kRegular) regulars = trays.size() - before;
  }
  if (regular) *regular = regulars;
  if (trays.size() < need) return {};
  if (!std::is_sorted(trays.begin(), trays.end())) std::sort(trays.begin(), trays.end());  // spares came last
  const int block = cfg.grouped ? cfg.tp * cfg.ep : 1;
  if (block > 1 && !BlocksInDomains(topo, trays, gpus, block)) {  // block > 1: a grouped job
    if (regular) *regular = 0;  // not known: no restart in place (sim_restart.cpp)
    return PlaceByDomain(topo, pool.free_flags(), pool.uses(), gpus, block, domain_lost, lo, hi);  // free trays, maybe not in whole blocks
  }
  return trays;
}

std::optional<Seating> ChooseTrays(const Topology& topo, const TrayPool& pool, const PlaceAsk& ask,
                                   const std::vector<uint8_t>& region_down) {
  const JobConfig& cfg = ask.cfg;
  const int per_tray = topo.model().gpus_per_tray;
  size_t need = static_cast<size_t>((cfg.gpus + per_tray - 1) / per_tray);
  int gpus = cfg.gpus;
  const size_t usable = ask.domain_lost ? pool.free_count() : pool.free_count() - pool.free_spare_rack();
  if (usable < need) {  // an elastic job restarting under remediation.shrink takes the whole trays free
    size_t least = static_cast<size_t>((cfg.min_gpus + per_tray - 1) / per_tray);
    if (!ask.may_shrink || cfg.min_gpus <= 0 || usable < least) return std::nullopt;
    need = usable;
    gpus = static_cast<int>(need) * per_tray;
    if (cfg.grouped) {  // whole sets of ep replicas, in whole blocks per domain
      gpus = ShrunkGroupedSize(topo, pool, cfg, ask.domain_lost, gpus);
      if (gpus == 0) return std::nullopt;
      need = static_cast<size_t>((gpus + per_tray - 1) / per_tray);
    }
  }
  Seating s;
  s.gpus = gpus;
  for (const auto& [lo, hi] : RegionWindows(topo, ask.home_region, region_down))
    if (!(s.trays = PickTrays(topo, pool, cfg, ask.domain_lost, gpus, need, lo, hi, &s.regular))
             .empty())
      break;
  if (s.trays.empty()) return std::nullopt;  // free trays, but not in whole TP/EP blocks per domain: wait
  return s;
}

std::vector<Placement> PlaceAtStart(const Topology& topo, const std::vector<JobConfig>& jobs, int spare_racks,
                                    const std::vector<int>& region_spare_racks) {
  TrayPool pool(topo, spare_racks, region_spare_racks);
  const std::vector<uint8_t> none_down(topo.regions().size(), 0);
  std::vector<Placement> out;
  for (const JobConfig& cfg : jobs) {
    Placement& at = out.emplace_back();
    if (!CheckJob(cfg, topo).ok()) continue;  // the simulator would not have added it
    const int home = cfg.region < static_cast<int>(topo.regions().size()) ? cfg.region : -1;
    auto seating = ChooseTrays(topo, pool, PlaceAsk{cfg, home, false, false}, none_down);
    if (!seating) continue;  // stays queued
    for (ComponentId tray : seating->trays) pool.SetFree(topo.TraySlot(tray), false);
    at.trays = std::move(seating->trays);
    at.gpus = seating->gpus;
    at.kinds = GroupFabrics(topo, cfg, at);
  }
  return out;
}

}  // namespace rackchaos::cluster
