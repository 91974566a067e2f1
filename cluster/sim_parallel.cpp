// Jobs placed and timed by their parallel groups (JobConfig::grouped).
//
// Placement: a block of tp*ep consecutive ranks (whole TP and EP groups) sits inside one NVLink domain
// (a rack, or a pair of racks for GB200 NVL36x2); pipeline stages and data-parallel replicas may span
// domains. The scheduler first takes the trays it would take for any job (the first free ones); only
// when that puts a block across two domains does it fill domain by domain, each with a whole number of
// blocks. A shrunk elastic job keeps the rule: it drops whole sets of ep data-parallel replicas
// (tp*pp*ep GPUs) and is placed in whole blocks per domain.
//
// Step time: a synchronous step waits for every group, so each kind of group costs its exposed share
// over its slowest group (sim_jobs.cpp, RefreshJob): TP all-reduce and the MoE all-to-all over NVLink;
// each DP and each PP group at the slowest link among its own ranks on the fabric it uses: NVLink when
// it sits inside one domain (at that domain's bandwidth in adaptive mode), else the slower of the
// scale-out NICs (and the spines when it spans leaf groups) and its NVLink hop inside each domain it
// spans. Only a rank whose DP or PP group crosses domains sends over its NIC, and a degraded NIC slows
// only the kinds whose group crosses at that rank: a NIC down or degraded behind any other rank does
// not touch the job. An impaired domain slows only the groups with ranks in it.
//
// Cost: NoteGroupFabrics walks the groups once per placement (a crossing group jumps from domain to
// domain; the pods of groups spanning leaf groups walk their ranks); a recompute looks only at the job's
// odd GPUs, degraded links and impaired racks, O(log trays) each.
#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

namespace {

// "1, 2, 3 or 6": the first `most` divisors of n.
std::string Divisors(int n, int most) {
  std::vector<int> d;
  for (int k = 1; k <= n && static_cast<int>(d.size()) < most; ++k)
    if (n % k == 0) d.push_back(k);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) out += (i == 0 ? "" : i + 1 == d.size() ? " or " : ", ") + std::to_string(d[i]);
  return out;
}

}  // namespace

CommShares SharesOf(const JobConfig& j) {
  if (!j.grouped) return {j.nvlink_share, j.scaleout_share, 0, 0};
  return {j.tp > 1 ? j.nvlink_share : 0, j.dp > 1 ? j.scaleout_share : 0, j.ep > 1 ? j.ep_share : 0,
          j.pp > 1 ? j.pp_share : 0};
}

Status CheckGroups(const JobConfig& j, const RackModel& m) {
  if (!j.grouped) return Status::Ok();
  const std::string who = "job '" + j.name + "': ";
  const int64_t tp_pp = int64_t{j.tp} * j.pp, product = tp_pp * j.dp;
  const std::string tp_pp_text = std::to_string(j.tp) + "*" + std::to_string(j.pp);
  if (j.gpus % tp_pp != 0)
    return Status::Invalid(who + "gpus " + std::to_string(j.gpus) + " is not divisible by tp*pp = " + tp_pp_text +
                           " = " + std::to_string(tp_pp) + "; choose tp and pp whose product divides gpus");
  if (product != j.gpus)
    return Status::Invalid(who + "tp*pp*dp = " + tp_pp_text + "*" + std::to_string(j.dp) + " = " +
                           std::to_string(product) + " but gpus is " + std::to_string(j.gpus) +
                           "; make the product equal gpus (e.g. dp: " + std::to_string(j.gpus / tp_pp) + ")");
  if (j.ep < 1 || j.dp % j.ep != 0)
    return Status::Invalid(who + "ep " + std::to_string(j.ep) + " does not divide dp " + std::to_string(j.dp) +
                           "; expert groups are carved from the data-parallel ranks (e.g. ep: " + Divisors(j.dp, 8) +
                           ")");
  if (int64_t{j.tp} * j.ep > m.domain_gpus())
    return Status::Invalid(who + "tp*ep = " + std::to_string(int64_t{j.tp} * j.ep) +
                           " GPUs must fit in one NVLink domain of " + std::to_string(m.domain_gpus()) + " GPUs (" +
                           m.name + ")");
  if (j.ep_share < 0 || j.pp_share < 0 || SharesOf(j).compute() <= 0)
    return Status::Invalid(who + "collective shares must be >= 0 and sum below 100%");
  return Status::Ok();
}

// True when no block of `block` consecutive ranks crosses from one NVLink domain to another. The job's
// ranks are the first `gpus` GPUs of `trays` (sorted, so each domain's trays are contiguous), a tray at
// a time.
bool SimBackend::BlocksInDomains(const std::vector<ComponentId>& trays, int gpus, int block) const {
  const int64_t per_tray = topo_.model().gpus_per_tray;
  for (size_t i = 0; i + 1 < trays.size(); ++i) {
    const int64_t end = static_cast<int64_t>(i + 1) * per_tray;  // first rank of tray i + 1
    if (end >= gpus) break;
    if (end % block != 0 &&
        topo_.DomainOfRack(topo_.at(trays[i]).rack) != topo_.DomainOfRack(topo_.at(trays[i + 1]).rack))
      return false;
  }
  return true;
}

// Fills NVLink domains in order, each with a whole number of blocks (a multiple of `unit` trays) or with
// all the job still needs. Regular trays first; hot spares only if the regular ones cannot hold the job;
// spare racks' trays (sim_spare_racks.cpp) only for a job whose NVLink domain was lost.
// Returns the trays (sorted), or nothing when no such placement exists now.
std::vector<ComponentId> SimBackend::PlaceByDomain(int gpus, int block, bool spare_racks_ok,
                                                  const std::vector<uint8_t>& free, size_t lo, size_t hi) const {
  const int per_tray = topo_.model().gpus_per_tray;
  const size_t unit = static_cast<size_t>(std::lcm(block, per_tray) / per_tray);
  const std::vector<ComponentId>& all = topo_.trays();
  for (uint8_t allow_spares : {0, 1}) {
    std::vector<ComponentId> out;
    int left = gpus;
    const size_t end = std::min(hi, all.size());  // the tray slots of one region, or all
    for (size_t k = lo; k < end && left > 0;) {
      const int domain = topo_.DomainOfRack(topo_.at(all[k]).rack);
      std::vector<ComponentId> here;
      for (; k < end && topo_.DomainOfRack(topo_.at(all[k]).rack) == domain; ++k)
        if (free[k] && (spare_[k] == TrayUse::kSpareRack ? spare_racks_ok : allow_spares || spare_[k] == TrayUse::kRegular))
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

// The trays Place takes for `gpus` GPUs (`need` trays) among `free` (per tray slot): the first free
// ones, regular before hot spares (spare racks first for a job whose domain was lost); for a grouped job
// whose blocks that would split, whole blocks per domain. Nothing when that placement does not exist.
std::vector<ComponentId> SimBackend::PickTrays(const Job& job, int gpus, size_t need,
                                               const std::vector<uint8_t>& free, size_t lo, size_t hi,
                                               size_t* regular) const {
  std::vector<ComponentId> trays;
  trays.reserve(need);
  const std::vector<ComponentId>& all = topo_.trays();
  static constexpr TrayUse kRegularFirst[] = {TrayUse::kRegular, TrayUse::kHotSpare},
                           kSpareRackFirst[] = {TrayUse::kSpareRack, TrayUse::kRegular, TrayUse::kHotSpare};
  size_t regulars = 0;
  for (TrayUse use :
       job.domain_lost ? std::span<const TrayUse>(kSpareRackFirst) : std::span<const TrayUse>(kRegularFirst)) {
    const size_t before = trays.size();
    for (size_t k = lo; k < std::min(hi, all.size()) && trays.size() < need; ++k)
      if (free[k] && spare_[k] == use) trays.push_back(all[k]);
    if (use == TrayUse::kRegular) regulars = trays.size() - before;
  }
  if (regular) *regular = regulars;
  if (trays.size() < need) return {};
  if (!std::is_sorted(trays.begin(), trays.end())) std::sort(trays.begin(), trays.end());  // spares came last
  const int block = job.cfg.grouped ? job.cfg.tp * job.cfg.ep : 1;
  if (block > 1 && !BlocksInDomains(trays, gpus, block)) {  // block > 1: a grouped job
    if (regular) *regular = 0;  // not known: no restart in place (sim_restart.cpp)
    return PlaceByDomain(gpus, block, job.domain_lost, free, lo, hi);  // free trays, but maybe not in whole blocks
  }
  return trays;
}

// Whether a shrunk job would find its full size again, in whole blocks per domain, once it gives back
// its own trays (those that are present, booted and undrained).
bool SimBackend::GrowFits(const Job& job) const {
  std::vector<uint8_t> free = free_;
  for (ComponentId tray : job.trays) {
    const Tray& t = tray_[slot(tray)];
    free[slot(tray)] = free[slot(tray)] || (t.present && !t.booting && !t.drained);
  }
  const int per_tray = topo_.model().gpus_per_tray;
  return !PickTrays(job, job.cfg.gpus, static_cast<size_t>((job.cfg.gpus + per_tray - 1) / per_tray), free).empty();
}

// The most GPUs a shrunk grouped job can restart on: a multiple of tp*pp*ep (whole sets of ep
// data-parallel replicas, so dp stays a multiple of ep), at most `most`, that whole blocks per domain
// can hold in the free trays it may use; 0 when that is below min_gpus.
int SimBackend::ShrunkGroupedSize(const Job& job, int most) const {
  const JobConfig& c = job.cfg;
  const int per_tray = topo_.model().gpus_per_tray, block = c.tp * c.ep;
  const int64_t unit_gpus = std::lcm(block, per_tray), step = int64_t{c.tp} * c.pp * c.ep;
  int64_t fits = 0;  // GPUs that whole units (of whole blocks) per domain hold
  const std::vector<ComponentId>& all = topo_.trays();
  for (size_t k = 0; k < all.size();) {
    const int domain = topo_.DomainOfRack(topo_.at(all[k]).rack);
    int64_t here = 0;
    for (; k < all.size() && topo_.DomainOfRack(topo_.at(all[k]).rack) == domain; ++k)
      here += free_[k] && (spare_[k] == TrayUse::kSpareRack ? job.domain_lost : true);
    fits += here * per_tray / unit_gpus * unit_gpus;
  }
  const int64_t size = std::min<int64_t>(most, fits) / step * step;
  return size >= std::max(c.min_gpus, 1) ? static_cast<int>(size) : 0;
}

// Which fabric each group sends over, from the placement (JobConfig's rank order): a group inside one
// domain uses NVLink there; a group across domains uses the NICs and an NVLink hop in every domain
// holding one of its ranks. Ungrouped jobs: DP over the NICs, as always (nothing noted).
void SimBackend::NoteGroupFabrics(Job& j) const {
  j.kinds = {};
  if (!j.cfg.grouped || j.placed_gpus <= 0) return;
  const int64_t tp = j.cfg.tp, pp = j.cfg.pp, dp = j.placed_gpus / (tp * pp), per_tray = topo_.model().gpus_per_tray;
  const std::vector<ComponentId>& trays = j.trays.ids();
  auto rack = [&](int64_t r) { return topo_.at(trays[static_cast<size_t>(r / per_tray)]).rack; };
  // The job's ranks by domain (trays are sorted): domain dom[i] holds ranks [starts[i], starts[i + 1]).
  std::vector<int64_t> starts;
  std::vector<int> dom;
  for (size_t t = 0; t < trays.size(); ++t)
    if (const int d = topo_.DomainOfRack(topo_.at(trays[t]).rack); dom.empty() || dom.back() != d) {
      starts.push_back(static_cast<int64_t>(t) * per_tray);
      dom.push_back(d);
    }
  // One kind: `groups` groups of `count` ranks `stride` apart, the g-th starting at first(g).
  auto note = [&](Job::KindPlacement& kind, int64_t groups, int64_t count, int64_t stride, auto first) {
    std::vector<uint8_t> pods(static_cast<size_t>(topo_.Pods()), 0);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t a = first(g), z = a + stride * (count - 1);
      if (!GroupCrosses(j, a, stride, count)) {
        if (count > 1) kind.nvlink_domains.push_back(topo_.DomainOfRack(rack(a)));
        continue;
      }
      for (int64_t r = a; r <= z;) {  // each domain holding a rank: jump to the group's first rank past it
        const size_t i = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), r) - starts.begin()) - 1;
        kind.hop_domains.push_back(dom[i]);
        if (i + 1 == starts.size()) break;
        r = a + (starts[i + 1] - a + stride - 1) / stride * stride;
      }
      if (topo_.LeafGroupOfRack(rack(a)) == topo_.LeafGroupOfRack(rack(z))) continue;
      kind.spans_pods = kind.spans_pods || topo_.PodOfRack(rack(a)) != topo_.PodOfRack(rack(z));
      for (int64_t r = a; r <= z; r += stride) pods[static_cast<size_t>(topo_.PodOfRack(rack(r)))] = 1;
    }
    for (std::vector<int>* v : {&kind.nvlink_domains, &kind.hop_domains}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    for (size_t p = 0; p < pods.size(); ++p)
      if (pods[p]) kind.spine_pods.push_back(static_cast<int>(p));
  };
  note(j.kinds[kDp], tp * pp, dp, tp, [&](int64_t g) { return g % tp + tp * dp * (g / tp); });
  note(j.kinds[kPp], tp * dp, pp, tp * dp, [](int64_t g) { return g; });
}

// A group of `count` ranks, `stride` apart from `first`: ranks fill trays in order and trays are sorted,
// so the group stays in one domain when its first and last rank do.
bool SimBackend::GroupCrosses(const Job& j, int64_t first, int64_t stride, int64_t count) const {
  if (count < 2) return false;
  const int64_t per_tray = topo_.model().gpus_per_tray, last = first + stride * (count - 1);
  auto domain = [&](int64_t rank) {
    return topo_.DomainOfRack(topo_.at(j.trays[static_cast<size_t>(rank / per_tray)]).rack);
  };
  return domain(first) != domain(last);
}

int SimBackend::RankCrossing(const Job& j, ComponentId gpu_id) const {
  constexpr int kBoth = 1 << kDp | 1 << kPp;
  if (!j.cfg.grouped) return kBoth;
  const std::vector<ComponentId>& ids = j.trays.ids();
  const auto it = std::lower_bound(ids.begin(), ids.end(), topo_.TrayOf(gpu_id));
  if (it == ids.end() || *it != topo_.TrayOf(gpu_id)) return 0;
  const int64_t rank = (it - ids.begin()) * int64_t{topo_.model().gpus_per_tray} + topo_.at(gpu_id).index;
  const int64_t tp = j.cfg.tp, pp = j.cfg.pp, dp = j.placed_gpus / (tp * pp);
  const int64_t t = rank % tp, d = rank / tp % dp, s = rank / (tp * dp);
  return (GroupCrosses(j, t + tp * dp * s, tp, dp) ? 1 << kDp : 0) |
         (GroupCrosses(j, t + tp * d, tp * dp, pp) ? 1 << kPp : 0);
}

// True when the GPU is a rank of the job whose DP or PP group crosses NVLink domains (every rank of an
// ungrouped job). O(log trays).
bool SimBackend::GpuUsesNic(const Job& j, ComponentId gpu_id) const { return RankCrossing(j, gpu_id) != 0; }

// NVLink over scale-out bandwidth per GPU (GB200: 900 GB/s against a 400 Gb/s NIC, 18); without
// both numbers NVLink is never a crossing group's bottleneck.
static double NvlinkOverNic(const RackModel& m) {
  const double nic = m.nic_gbit_per_s / 8 * m.nics_per_tray / std::max(1, m.gpus_per_tray);
  return nic > 0 && m.nvlink_gbytes_per_s > 0 ? m.nvlink_gbytes_per_s / nic : std::numeric_limits<double>::max();
}

// Per kind: min over its groups of each group's slowest link. A group inside one domain: the NVLink
// ports and degraded ports of its ranks, at its domain's bandwidth (adaptive mode). A group across
// domains: min(its ranks' NICs and spines, its NVLink hop: ports, degraded ports and bandwidth of the
// domains it spans), each against the nominal bottleneck (NVLink is a multiple of the NIC). Ranks are
// folded by whether their own group of the kind crosses; only odd GPUs and degraded links are visited.
std::array<SimBackend::KindLinks, 2> SimBackend::GroupLinksOf(const Job& j) const {
  std::array<KindLinks, 2> k;
  // [kind][0: groups inside one domain, 1: groups across domains]
  double ports[2][2] = {{1, 1}, {1, 1}}, nvlink_slow[2][2] = {{1, 1}, {1, 1}};
  FaultId nvlink_cause[2][2] = {{kNoFault, kNoFault}, {kNoFault, kNoFault}};
  std::array<double, 2> nic{1, 1};
  auto fold = [&k](int kind, double f, FaultId c) {
    if (f < k[kind].slow) {
      k[kind].slow = f;
      k[kind].cause = c;
    }
  };
  const RackModel& m = topo_.model();
  for (ComponentId g : odd_gpus_) {
    if (JobOfGpu(g) != j.id || !gpu(g).nvlink_down) continue;
    const int up_links = m.nvlink_links_per_gpu - std::popcount(gpu(g).nvlink_down), cross = RankCrossing(j, g);
    for (int kind : {kDp, kPp}) {
      double& p = ports[kind][cross >> kind & 1];
      p = std::min(p, static_cast<double>(up_links) / m.nvlink_links_per_gpu);
    }
  }
  for (const auto& [key, d] : degraded_)
    for (ComponentId g : RanksBehind(key.first, key.second)) {
      if (JobOfGpu(g) != j.id) continue;
      const int cross = RankCrossing(j, g);
      for (int kind : {kDp, kPp}) {
        const int crosses = cross >> kind & 1;
        if (key.second >= 0 && d.fraction < nvlink_slow[kind][crosses]) {
          nvlink_slow[kind][crosses] = d.fraction;
          nvlink_cause[kind][crosses] = d.cause;
        } else if (key.second < 0 && crosses) {
          nic[kind] = std::min(nic[kind], d.fraction);
          fold(kind, d.fraction, d.cause);
        }
      }
    }
  const double ratio = NvlinkOverNic(m), nominal = std::min(1.0, ratio);
  auto hop = [&](double nvlink) { return std::min(1.0, ratio * nvlink) / nominal; };  // a crossing group's pace
  for (int kind : {kDp, kPp}) {
    const Job::KindPlacement& place = j.kinds[static_cast<size_t>(kind)];
    FaultId unused = kNoFault;  // a domain's cause is the job's NVLink cause (RefreshJob)
    const bool impaired = !impaired_racks_.empty();
    const double inside = ports[kind][0] * (impaired ? DomainsBandwidth(place.nvlink_domains, unused) : 1);
    const double across = ports[kind][1] * (impaired ? DomainsBandwidth(place.hop_domains, unused) : 1);
    fold(kind, nvlink_slow[kind][0], nvlink_cause[kind][0]);
    if (hop(across) > 0) fold(kind, hop(across * nvlink_slow[kind][1]) / hop(across), nvlink_cause[kind][1]);
    FaultId spine_cause = kNoFault;
    const double spine = KindSpineShare(j, kind, spine_cause);  // its groups that span leaf groups
    nic[kind] = std::min(nic[kind], spine);
    fold(kind, spine, spine_cause);
    k[kind].ports = std::min(inside, place.crosses() ? hop(across) : 1.0);
    k[kind].bw = std::min(inside * nvlink_slow[kind][0],
                          std::min(nic[kind], ratio * across * nvlink_slow[kind][1]) / nominal);
  }
  return k;
}

// Whether the job sends over the tray's NIC `nic`: some rank of the job behind it uses its NIC.
bool SimBackend::NicCarriesJob(const Job& j, ComponentId tray, size_t nic) const {
  if (!j.cfg.grouped) return true;  // ungrouped: any NIC of its trays (the model before groups)
  const RackModel& m = topo_.model();
  const int job_gpus = seat_[slot(tray)].job_gpus;
  for (ComponentId g : topo_.GpusOfTray(tray)) {
    const int k = topo_.at(g).index;
    if (k < job_gpus && static_cast<size_t>(k * m.nics_per_tray / std::max(1, m.gpus_per_tray)) == nic &&
        GpuUsesNic(j, g))
      return true;
  }
  return false;
}

// The exposed shares of a step sent over NVLink and over the NICs by a rank whose DP and PP groups
// cross as `cross` says (RankCrossing); -1: the job's, with a kind over the NICs if any group crosses.
SimBackend::FabricShares SimBackend::FabricSharesOf(const Job& j, int cross) const {
  const CommShares sh = SharesOf(j.cfg);
  if (cross < 0)
    cross = !j.cfg.grouped ? 1 << kDp | 1 << kPp
                           : (j.kinds[kDp].crosses() ? 1 << kDp : 0) | (j.kinds[kPp].crosses() ? 1 << kPp : 0);
  const bool dp = cross >> kDp & 1, pp = cross >> kPp & 1;
  FabricShares f{sh.nvlink(), (dp ? sh.dp : 0) + (pp ? sh.pp : 0)};
  if (!dp) f.nvlink += sh.dp;
  if (!pp) f.nvlink += sh.pp;
  return f;
}

}  // namespace rackchaos::cluster
