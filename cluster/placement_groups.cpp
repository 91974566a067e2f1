// Parallel groups at a placement (JobConfig::grouped, cluster/placement.h).
//
// Ranks are numbered tp fastest, then dp, then pp (Megatron's order) and fill the job's sorted trays in
// order, so a group stays inside one NVLink domain when its first and last rank do. A crossing group
// sends over the NICs and takes an NVLink hop in each domain holding one of its ranks; a group that
// spans leaf groups crosses the spines of the pods its ranks sit in, and the super-spines when it spans
// pods. What that does to a step is the fabric's part (sim_links.cpp, sim_spines.cpp).
//
// Cost: GroupFabrics walks the groups once per placement (a crossing group jumps from domain to domain;
// the pods of groups spanning leaf groups walk their ranks); RankCrossing is O(log trays).
#include <algorithm>
#include <string>
#include <vector>

#include "cluster/placement.h"

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

std::array<KindPlacement, 2> GroupFabrics(const Topology& topo, const JobConfig& cfg, const Placement& at) {
  std::array<KindPlacement, 2> kinds{};
  if (!cfg.grouped || at.gpus <= 0) return kinds;
  const int64_t tp = cfg.tp, pp = cfg.pp, dp = at.gpus / (tp * pp), per_tray = topo.model().gpus_per_tray;
  const std::vector<ComponentId>& trays = at.trays.ids();
  auto rack = [&](int64_t r) { return topo.at(trays[static_cast<size_t>(r / per_tray)]).rack; };
  // The job's ranks by domain (trays are sorted): domain dom[i] holds ranks [starts[i], starts[i + 1]).
  std::vector<int64_t> starts;
  std::vector<int> dom;
  for (size_t t = 0; t < trays.size(); ++t)
    if (const int d = topo.DomainOfRack(topo.at(trays[t]).rack); dom.empty() || dom.back() != d) {
      starts.push_back(static_cast<int64_t>(t) * per_tray);
      dom.push_back(d);
    }
  // One kind: `groups` groups of `count` ranks `stride` apart, the g-th starting at first(g).
  auto note = [&](KindPlacement& kind, int64_t groups, int64_t count, int64_t stride, auto first) {
    std::vector<uint8_t> pods(static_cast<size_t>(topo.Pods()), 0);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t a = first(g), z = a + stride * (count - 1);
      if (!GroupCrosses(topo, at, a, stride, count)) {
        if (count > 1) kind.nvlink_domains.push_back(topo.DomainOfRack(rack(a)));
        continue;
      }
      for (int64_t r = a; r <= z;) {  // each domain holding a rank: jump to the group's first rank past it
        const size_t i = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), r) - starts.begin()) - 1;
        kind.hop_domains.push_back(dom[i]);
        if (i + 1 == starts.size()) break;
        r = a + (starts[i + 1] - a + stride - 1) / stride * stride;
      }
      if (topo.LeafGroupOfRack(rack(a)) == topo.LeafGroupOfRack(rack(z))) continue;
      kind.spans_pods = kind.spans_pods || topo.PodOfRack(rack(a)) != topo.PodOfRack(rack(z));
      for (int64_t r = a; r <= z; r += stride) pods[static_cast<size_t>(topo.PodOfRack(rack(r)))] = 1;
    }
    for (std::vector<int>* v : {&kind.nvlink_domains, &kind.hop_domains}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    for (size_t p = 0; p < pods.size(); ++p)
      if (pods[p]) kind.spine_pods.push_back(static_cast<int>(p));
  };
  note(kinds[kDp], tp * pp, dp, tp, [&](int64_t g) { return g % tp + tp * dp * (g / tp); });
  note(kinds[kPp], tp * dp, pp, tp * dp, [](int64_t g) { return g; });
  return kinds;
}

bool GroupCrosses(const Topology& topo, const Placement& at, int64_t first, int64_t stride, int64_t count) {
  if (count < 2) return false;
  const int64_t per_tray = topo.model().gpus_per_tray, last = first + stride * (count - 1);
  auto domain = [&](int64_t rank) {
    return topo.DomainOfRack(topo.at(at.trays[static_cast<size_t>(rank / per_tray)]).rack);
  };
  return domain(first) != domain(last);
}

int RankCrossing(const Topology& topo, const JobConfig& cfg, const Placement& at, ComponentId gpu_id) {
  constexpr int kBoth = 1 << kDp | 1 << kPp;
  if (!cfg.grouped) return kBoth;
  const std::vector<ComponentId>& ids = at.trays.ids();
  const auto it = std::lower_bound(ids.begin(), ids.end(), topo.TrayOf(gpu_id));
  if (it == ids.end() || *it != topo.TrayOf(gpu_id)) return 0;
  const int64_t rank = (it - ids.begin()) * int64_t{topo.model().gpus_per_tray} + topo.at(gpu_id).index;
  const int64_t tp = cfg.tp, pp = cfg.pp, dp = at.gpus / (tp * pp);
  const int64_t t = rank % tp, d = rank / tp % dp, s = rank / (tp * dp);
  return (GroupCrosses(topo, at, t + tp * dp * s, tp, dp) ? 1 << kDp : 0) |
         (GroupCrosses(topo, at, t + tp * d, tp * dp, pp) ? 1 << kPp : 0);
}

// The one rule for which spines a job crosses: the simulator slows it by it, `rackchaos blast` reports
// by it (runner/cli/blast_cmd.cpp).
SpineCrossing CrossingOf(const Topology& topo, const JobConfig& cfg, const Placement& at) {
  SpineCrossing c;
  const auto& trays = at.trays.ids();
  if (trays.empty()) return c;
  if (cfg.grouped) {
    for (int kind : {kDp, kPp}) {
      const KindPlacement& k = at.kinds[static_cast<size_t>(kind)];
      (kind == kDp ? c.dp : c.pp) = {k.spine_pods, k.spans_pods};
    }
    return c;
  }
  const int group = topo.LeafGroupOfRack(topo.at(trays.front()).rack);
  bool spans = false;
  for (ComponentId t : trays) {
    spans = spans || topo.LeafGroupOfRack(topo.at(t).rack) != group;
    c.dp.pods.push_back(topo.PodOfRack(topo.at(t).rack));
  }
  std::sort(c.dp.pods.begin(), c.dp.pods.end());
  c.dp.pods.erase(std::unique(c.dp.pods.begin(), c.dp.pods.end()), c.dp.pods.end());
  if (!spans) c.dp.pods.clear();
  c.dp.spans_pods = c.dp.pods.size() > 1;
  return c;
}

FabricShares FabricSharesOf(const JobConfig& cfg, const Placement& at, int cross) {
  const CommShares sh = SharesOf(cfg);
  if (cross < 0)
    cross = !cfg.grouped ? 1 << kDp | 1 << kPp
                         : (at.kinds[kDp].crosses() ? 1 << kDp : 0) | (at.kinds[kPp].crosses() ? 1 << kPp : 0);
  const bool dp = cross >> kDp & 1, pp = cross >> kPp & 1;
  FabricShares f{sh.nvlink(), (dp ? sh.dp : 0) + (pp ? sh.pp : 0)};
  if (!dp) f.nvlink += sh.dp;
  if (!pp) f.nvlink += sh.pp;
  return f;
}

}  // namespace rackchaos::cluster
