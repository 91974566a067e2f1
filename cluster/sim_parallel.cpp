// Jobs placed and timed by their parallel groups (JobConfig::grouped).
//
// Placement: a block of tp*ep consecutive ranks (whole TP and EP groups) sits inside one NVLink domain
// (a topology rack); pipeline stages and data-parallel replicas may span racks. The scheduler first
// takes the trays it would take for any job (the first free ones); only when that puts a block across
// two domains does it fill domain by domain, each with a whole number of blocks.
//
// Step time: a synchronous step waits for every group, so each kind of group costs its exposed share
// over the slowest link any group of that kind crosses: TP all-reduce and the MoE all-to-all over NVLink,
// DP all-reduce and pipeline sends over the scale-out NICs (sim_jobs.cpp, RefreshJob).
#include <algorithm>
#include <numeric>
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
  if (int64_t{j.tp} * j.pp * j.dp != j.gpus)
    return Status::Invalid(who + "tp*pp*dp = " + std::to_string(int64_t{j.tp} * j.pp * j.dp) + " but gpus is " +
                           std::to_string(j.gpus));
  if (j.ep < 1 || j.dp % j.ep != 0)
    return Status::Invalid(who + "ep " + std::to_string(j.ep) + " does not divide dp " + std::to_string(j.dp) +
                           "; expert groups are carved from the data-parallel ranks (e.g. ep: " + Divisors(j.dp, 8) +
                           ")");
  if (int64_t{j.tp} * j.ep > m.gpus())
    return Status::Invalid(who + "tp*ep = " + std::to_string(int64_t{j.tp} * j.ep) +
                           " GPUs must fit in one NVLink domain of " + std::to_string(m.gpus()) + " GPUs (" + m.name +
                           ")");
  if (j.ep_share < 0 || j.pp_share < 0 || SharesOf(j).compute() <= 0)
    return Status::Invalid(who + "collective shares must be >= 0 and sum below 100%");
  return Status::Ok();
}

// True when no block of `block` consecutive ranks crosses from one rack to another. The job's ranks are
// the first `gpus` GPUs of `trays` (sorted, so each rack's trays are contiguous), a tray at a time.
bool SimBackend::BlocksInDomains(const std::vector<ComponentId>& trays, int gpus, int block) const {
  const int64_t per_tray = topo_.model().gpus_per_tray;
  for (size_t i = 0; i + 1 < trays.size(); ++i) {
    const int64_t end = static_cast<int64_t>(i + 1) * per_tray;  // first rank of tray i + 1
    if (end >= gpus) break;
    if (end % block != 0 && topo_.at(trays[i]).rack != topo_.at(trays[i + 1]).rack) return false;
  }
  return true;
}

// Fills racks in order, each with a whole number of blocks (a multiple of `unit` trays) or with all the
// job still needs. Regular trays first; hot spares only if the regular ones cannot hold the job; spare
// racks' trays (sim_spare_racks.cpp) only for a job whose NVLink domain was lost.
// Returns the trays (sorted), or nothing when no such placement exists now.
std::vector<ComponentId> SimBackend::PlaceByDomain(int gpus, int block, bool spare_racks_ok) const {
  const int per_tray = topo_.model().gpus_per_tray;
  const size_t unit = static_cast<size_t>(std::lcm(block, per_tray) / per_tray);
  const std::vector<ComponentId>& all = topo_.trays();
  for (uint8_t allow_spares : {0, 1}) {
    std::vector<ComponentId> out;
    int left = gpus;
    for (size_t k = 0; k < all.size() && left > 0;) {
      const int rack = topo_.at(all[k]).rack;
      std::vector<ComponentId> here;
      for (; k < all.size() && topo_.at(all[k]).rack == rack; ++k)
        if (free_[k] && (spare_[k] == 2 ? spare_racks_ok : allow_spares || !spare_[k])) here.push_back(all[k]);
      const size_t rest = static_cast<size_t>((left + per_tray - 1) / per_tray);
      const size_t take = here.size() >= rest ? rest : here.size() / unit * unit;
      out.insert(out.end(), here.begin(), here.begin() + static_cast<std::ptrdiff_t>(take));
      left -= static_cast<int>(std::min(take * static_cast<size_t>(per_tray), static_cast<size_t>(left)));
    }
    if (left <= 0) return out;
  }
  return {};
}

}  // namespace rackchaos::cluster
