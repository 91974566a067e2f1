// Degraded links in the simulator (cluster/sim_fabric.h): a NIC or NVLink port that stays up at a
// fraction of its line rate, and what each kind of a job's groups gets from the links it uses.
//
// A degraded link carries its share of every collective more slowly, so the job's exposed collective
// time over that fabric grows by 1 / fraction (a ring or tree all-reduce runs at its slowest link).
// Nothing is logged and the link reads up; what a site sees is the job's own measurements: the rank
// behind the link takes longer to send its share (StepReport::comm_s), the others only wait for it.
//
// Each kind of group (cluster/placement.h) waits for its slowest link: a group inside one domain on the
// NVLink ports and degraded ports of its ranks at its domain's bandwidth (adaptive mode); a group
// across domains on min(its ranks' NICs and spines, its NVLink hop: ports, degraded ports and bandwidth
// of the domains it spans), each against the nominal bottleneck (NVLink is a multiple of the NIC). Only
// a rank whose DP or PP group crosses domains sends over its NIC, and a degraded NIC slows only the
// kinds whose group crosses at that rank. Cost: the job's odd GPUs, degraded links and impaired racks
// only, O(log trays) each.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>

#include "cluster/sim_fabric.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

// Two link_degrade on one link overlap: the lowest rate held wins.
void Fabric::SetLinkBandwidth(Target link, double fraction, FaultId cause) {
  ApplyLinkBandwidth(link, bandwidth_holds_.Place({link.component, link.port}, link.component, cause, fraction, 1), cause);
}

void Fabric::ReleaseLinkBandwidth(Target link, FaultId cause) {
  ApplyLinkBandwidth(link, bandwidth_holds_.Release({link.component, link.port}, link.component, cause, 1), cause);
}

// A hold at 100% leaves the link at full rate: it is not listed as degraded.
void Fabric::ApplyLinkBandwidth(Target link, const Holds<std::pair<ComponentId, int>>::State& s, FaultId cause) {
  const ComponentId c = link.component;
  const std::pair<ComponentId, int> key{c, link.port};
  if (s.held && s.value < 1)
    degraded_[key] = {s.value, s.cause};
  else
    degraded_.erase(key);
  const FaultId why = s.held ? s.cause : cause;
  ctx_.Physics(c, "link_bandwidth", s.value, why);
  for (ComponentId g : RanksBehind(c, link.port))  // a NIC's GPUs lose that much scale-out bandwidth
    if (g != c) ctx_.Physics(g, "link_bandwidth", s.value, why);
  if (JobId job = topo_.at(c).kind == Kind::kGpu ? seats_.JobOfGpu(c) : seats_.JobOnTray(topo_.TrayOf(c)); job != kNoJob)
    jobs_.RefreshJob(job);
}

// The GPUs whose traffic crosses the link: an NVLink port's GPU; a NIC's GPUs (GB200 pairs NIC i
// with GPU i; with fewer NICs than GPUs, each NIC serves an equal block).
std::vector<ComponentId> Fabric::RanksBehind(ComponentId link, int port) const {
  if (port >= 0) return {link};
  const RackModel& m = topo_.model();
  std::vector<ComponentId> out;
  const int index = topo_.at(link).index;
  for (ComponentId g : topo_.GpusOfTray(topo_.TrayOf(link)))
    if (topo_.at(g).index * m.nics_per_tray / std::max(1, m.gpus_per_tray) == index) out.push_back(g);
  return out;
}

Fabric::SlowLinks Fabric::SlowLinksOf(const SimJob& job) const {
  SlowLinks s;
  for (const auto& [key, d] : degraded_) {
    const auto [link, port] = key;
    bool used = false;
    for (ComponentId g : RanksBehind(link, port))
      used = used || (seats_.JobOfGpu(g) == job.id && (port >= 0 || GpuUsesNic(topo_, job.cfg, job.at, g)));
    if (!used) continue;
    double& worst = port >= 0 ? s.nvlink : s.nic;
    if (d.fraction < worst) {
      worst = d.fraction;
      if (d.fraction <= std::min(s.nvlink, s.nic)) s.cause = d.cause;
    }
  }
  return s;
}

// Each rank's send time: nominal collective time with jitter, divided by the slowest link it sends over.
// Ranks behind a degraded link are listed (with their nominal compute time) if not already; the bulk is
// summarized as the scheduler's step report summarizes compute times. Draws from its own stream, so
// plans without degraded links draw exactly what they drew before.
void Fabric::AddCommTimes(const SimJob& j, StepReport& r) {
  const double nom = j.cfg.step_time.Seconds();
  const FabricShares sh = FabricSharesOf(j.cfg, j.at);  // DP and PP inside one domain go over NVLink
  const double comm_nominal = nom * (sh.nvlink + sh.scaleout);
  const double compute_nominal = nom - comm_nominal;
  std::map<ComponentId, double> slow;  // rank GPU -> its comm time at full speed divided by this
  for (const auto& [key, d] : degraded_)
    for (ComponentId g : RanksBehind(key.first, key.second)) {
      if (seats_.JobOfGpu(g) != j.id) continue;
      const FabricShares rank = FabricSharesOf(j.cfg, j.at, RankCrossing(topo_, j.cfg, j.at, g));
      const double share = key.second >= 0 ? rank.nvlink : rank.scaleout;
      if (share <= 0) continue;  // its groups send nothing over that fabric
      const double t = (comm_nominal - nom * share + nom * share / d.fraction) / std::max(comm_nominal, 1e-9);
      slow[g] = std::max(slow[g], t);
    }
  if (slow.empty() || comm_nominal <= 0) return;
  for (const auto& [g, factor] : slow)
    if (std::find(r.rank_gpus.begin(), r.rank_gpus.end(), g) == r.rank_gpus.end()) {
      const double noise = std::clamp(comm_rng_.Normal(0, opt_.step_jitter), -0.2, 0.2);
      r.rank_gpus.push_back(g);
      r.compute_s.push_back(static_cast<float>(compute_nominal * (1 + noise)));
    }
  r.bulk_ranks = j.at.gpus - static_cast<int64_t>(r.rank_gpus.size());
  for (ComponentId g : r.rank_gpus) {
    auto it = slow.find(g);
    const double noise = std::clamp(comm_rng_.Normal(0, opt_.step_jitter), -0.2, 0.2);
    r.comm_s.push_back(static_cast<float>(comm_nominal * (it == slow.end() ? 1 : it->second) * (1 + noise)));
  }
  if (r.bulk_ranks > 0) {
    const double n = static_cast<double>(r.bulk_ranks), sigma = opt_.step_jitter;
    r.bulk_comm_median_s = comm_nominal * (1 + std::clamp(comm_rng_.Normal(0, 1.2533 * sigma / std::sqrt(n)), -0.2, 0.2));
    r.bulk_comm_mad_s = comm_nominal * 0.6745 * sigma * std::max(0.0, 1 + comm_rng_.Normal(0, 1.1 / std::sqrt(n)));
  }
}

namespace {

// NVLink over scale-out bandwidth per GPU (GB200: 900 GB/s against a 400 Gb/s NIC, 18); without
// both numbers NVLink is never a crossing group's bottleneck.
double NvlinkOverNic(const RackModel& m) {
  const double nic = m.nic_gbit_per_s / 8 * m.nics_per_tray / std::max(1, m.gpus_per_tray);
  return nic > 0 && m.nvlink_gbytes_per_s > 0 ? m.nvlink_gbytes_per_s / nic : std::numeric_limits<double>::max();
}

}  // namespace

// Per kind: min over its groups of each group's slowest link. Ranks are folded by whether their own
// group of the kind crosses; only odd GPUs and degraded links are visited.
std::array<Fabric::KindLinks, 2> Fabric::GroupLinksOf(const SimJob& j) const {
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
  for (ComponentId g : jobs_.odd_gpus()) {
    if (seats_.JobOfGpu(g) != j.id || !NvlinkDown(g)) continue;
    const int up_links = m.nvlink_links_per_gpu - std::popcount(NvlinkDown(g)), cross = RankCrossing(topo_, j.cfg, j.at, g);
    for (int kind : {kDp, kPp}) {
      double& p = ports[kind][cross >> kind & 1];
      p = std::min(p, static_cast<double>(up_links) / m.nvlink_links_per_gpu);
    }
  }
  for (const auto& [key, d] : degraded_)
    for (ComponentId g : RanksBehind(key.first, key.second)) {
      if (seats_.JobOfGpu(g) != j.id) continue;
      const int cross = RankCrossing(topo_, j.cfg, j.at, g);
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
    const KindPlacement& place = j.at.kinds[static_cast<size_t>(kind)];
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
    k[kind].bw = std::min(inside * nvlink_slow[kind][0], std::min(nic[kind], ratio * across * nvlink_slow[kind][1]) / nominal);
  }
  return k;
}

}  // namespace rackchaos::cluster
