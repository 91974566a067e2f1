// Degraded links in the simulator: a NIC or NVLink port that stays up at a fraction of its line rate.
//
// The link carries its share of every collective more slowly, so the job's exposed collective time over
// that fabric grows by 1 / fraction (a ring or tree all-reduce runs at its slowest link). Nothing is
// logged and the link reads up; what a site sees is the job's own measurements: the rank behind the
// link takes longer to send its share (StepReport::comm_s), the others only wait for it.
#include <algorithm>
#include <cmath>
#include <map>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

// A held bandwidth takes effect (SetLinkBandwidth and Release: sim_holds.cpp). A hold at 100% leaves
// the link at full rate: it is not listed as degraded.
void SimBackend::ApplyLinkBandwidth(Target link, const Holds<std::pair<ComponentId, int>>::State& s, FaultId cause) {
  const ComponentId c = link.component;
  const std::pair<ComponentId, int> key{c, link.port};
  if (s.held && s.value < 1)
    degraded_[key] = {s.value, s.cause};
  else
    degraded_.erase(key);
  const FaultId why = s.held ? s.cause : cause;
  Physics(c, "link_bandwidth", s.value, why);
  for (ComponentId g : RanksBehind(c, link.port))  // a NIC's GPUs lose that much scale-out bandwidth
    if (g != c) Physics(g, "link_bandwidth", s.value, why);
  if (JobId job = topo_.at(c).kind == Kind::kGpu ? JobOfGpu(c) : seat_[slot(topo_.TrayOf(c))].job; job != kNoJob)
    RefreshJob(job);
}

// The GPUs whose traffic crosses the link: an NVLink port's GPU; a NIC's GPUs (GB200 pairs NIC i
// with GPU i; with fewer NICs than GPUs, each NIC serves an equal block).
std::vector<ComponentId> SimBackend::RanksBehind(ComponentId link, int port) const {
  if (port >= 0) return {link};
  const RackModel& m = topo_.model();
  std::vector<ComponentId> out;
  const int index = topo_.at(link).index;
  for (ComponentId g : topo_.GpusOfTray(topo_.TrayOf(link)))
    if (topo_.at(g).index * m.nics_per_tray / std::max(1, m.gpus_per_tray) == index) out.push_back(g);
  return out;
}

SimBackend::SlowLinks SimBackend::SlowLinksOf(JobId job) const {
  SlowLinks s;
  for (const auto& [key, d] : degraded_) {
    const auto [link, port] = key;
    bool used = false;
    for (ComponentId g : RanksBehind(link, port))
      used = used || (JobOfGpu(g) == job && (port >= 0 || GpuUsesNic(jobs_[job], g)));
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
// summarized as OnStepReport summarizes compute times. Draws from its own stream, so plans without
// degraded links draw exactly what they drew before.
void SimBackend::AddCommTimes(const Job& j, StepReport& r) {
  const double nom = j.cfg.step_time.Seconds();
  const FabricShares sh = FabricSharesOf(j);  // DP and PP inside one domain go over NVLink
  const double comm_nominal = nom * (sh.nvlink + sh.scaleout);
  const double compute_nominal = nom - comm_nominal;
  std::map<ComponentId, double> slow;  // rank GPU -> its comm time at full speed divided by this
  for (const auto& [key, d] : degraded_)
    for (ComponentId g : RanksBehind(key.first, key.second)) {
      if (JobOfGpu(g) != j.id) continue;
      const FabricShares rank = FabricSharesOf(j, RankCrossing(j, g));  // what this rank's groups send where
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
  r.bulk_ranks = j.placed_gpus - static_cast<int64_t>(r.rank_gpus.size());
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

}  // namespace rackchaos::cluster
