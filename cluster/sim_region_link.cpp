// Shared resources of a region: the link to the next region, which the far checkpoint copies in flight
// over it share, and the object store's read capacity, which the jobs streaming from it share.
//
// - Link: each region copies to the next over one link of cluster.region_link_gbytes_per_s [guess]. The
//   copies in flight share it equally (a TCP-like fair share): with n of them each moves at link / n.
//   Between a copy's start and end nothing changes, so each copy's bytes left are settled only then
//   (closed form: left -= share x elapsed) and one timer per link waits for the copy with the fewest
//   bytes left. A copy with a fixed checkpoint.copy_time does not use the link.
//   Other traffic (cluster.region_link_background_percent) takes its share off the top: the copies
//   share what is left.
// - Destination: a copy lands in the next region's checkpoint store. When that region goes down or its
//   store fails, the copies in flight to it are lost (physics `far_copy_lost` on that store, value the
//   lost checkpoint's steps): the far region keeps its older copy, a link copy's share goes to the
//   others on its link, and no copy starts while it is down. Once it is back, each job waiting for it
//   copies its newest acknowledged checkpoint.
// - Object store: cluster.object_store_gbytes_per_s [guess] per region, times the store's share while
//   degraded. The running jobs with input_from: object_store each ask input_mb_per_s per GPU at full
//   speed (a hung job keeps its share until it stops); while their sum fits, each reads at the catalogue's per-GPU rate as before. Beyond it the
//   capacity is shared max-min fairly per GPU (water filling: a GPU asking less than the fair level gets
//   what it asks; the others split the rest), and a job reading less than it asks stalls on data.
//
// Cost: a copy's start or end costs the copies on its link; a reader's start or stop refreshes the
// other readers of its region; a far store's failure or return one pass over the jobs. Nothing without
// regions.
#include <algorithm>
#include <cmath>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

static bool Reading(JobState s) { return s == JobState::kRunning || s == JobState::kHung; }

bool SimBackend::CopiesOverLink(const Job& j) const {
  return opt_.region_link_gbytes_per_s > 0 && j.cfg.checkpoint_size_gb > 0 && j.region >= 0 &&
         static_cast<size_t>(j.region) < links_.size();
}

// The plan caps the share at 99%; a caller setting SimOptions directly gets the same cap, never a link of 0.
double SimBackend::LinkRate() const {
  return opt_.region_link_gbytes_per_s * (1 - std::clamp(opt_.region_link_background, 0.0, 0.99));
}

void SimBackend::SettleLink(RegionLink& link) {
  if (!link.flows.empty()) {
    const double moved = LinkRate() / static_cast<double>(link.flows.size()) *
                         (clock_.Now() - link.since).Seconds();
    for (LinkFlow& f : link.flows) f.left_gb -= moved;
  }
  link.since = clock_.Now();
}

void SimBackend::ScheduleLink(size_t k) {
  RegionLink& link = links_[k];
  if (link.timer) clock_.Cancel(link.timer);
  link.timer = 0;
  if (link.flows.empty()) return;
  double least = link.flows.front().left_gb;
  for (const LinkFlow& f : link.flows) least = std::min(least, f.left_gb);
  const double share = LinkRate() / static_cast<double>(link.flows.size());
  const auto us = static_cast<int64_t>(std::ceil(std::max(0.0, least) / share * 1e6));
  link.timer = clock_.CallAfter(Duration::Micros(us), [this, k] { OnLinkCopyDone(k); });
}

void SimBackend::StartLinkCopy(Job& j) {
  const size_t k = static_cast<size_t>(j.region);
  SettleLink(links_[k]);
  links_[k].flows.push_back({j.id, j.cfg.checkpoint_size_gb});
  j.copy_on_link = true;
  ScheduleLink(k);
}

void SimBackend::CancelLinkCopy(Job& j) {
  if (!j.copy_on_link) return;
  j.copy_on_link = false;
  for (size_t k = 0; k < links_.size(); ++k) {
    auto& flows = links_[k].flows;
    auto it = std::find_if(flows.begin(), flows.end(), [&](const LinkFlow& f) { return f.job == j.id; });
    if (it == flows.end()) continue;
    SettleLink(links_[k]);
    flows.erase(it);
    ScheduleLink(k);
    return;
  }
}

// The copies whose bytes are all moved (within a microsecond of the share, the timer's rounding) end,
// in the order they started; the others go on at the larger share.
void SimBackend::OnLinkCopyDone(size_t k) {
  RegionLink& link = links_[k];
  link.timer = 0;
  const double slack = LinkRate() / static_cast<double>(std::max<size_t>(1, link.flows.size())) * 2e-6;
  SettleLink(link);
  std::vector<JobId> done;
  std::erase_if(link.flows, [&](const LinkFlow& f) {
    if (f.left_gb > slack) return false;
    done.push_back(f.job);
    return true;
  });
  ScheduleLink(k);
  for (JobId id : done) {
    jobs_[id].copy_on_link = false;
    FarCopyDone(id);
  }
}

int SimBackend::FarRegion(const Job& j) const {
  const size_t n = topo_.regions().size();
  return n < 2 || j.region < 0 ? -1 : static_cast<int>((static_cast<size_t>(j.region) + 1) % n);
}

bool SimBackend::FarStoreDown(int region) const {
  const RegionState& r = region_[static_cast<size_t>(region)];
  return r.down || r.checkpoint_failed;
}

// The far region went down or its checkpoint store failed: the copies landing there are cut off. The
// far region keeps what it had; the job's newest acknowledged checkpoint waits for FarStoreBack.
void SimBackend::FarCopiesLost(int region, FaultId cause) {
  const ComponentId store = topo_.regions()[static_cast<size_t>(region)].checkpoint_store;
  for (Job& j : jobs_) {
    if (j.copy_to != region || (!j.copy_timer && !j.copy_on_link)) continue;
    if (j.copy_timer) clock_.Cancel(j.copy_timer);
    j.copy_timer = 0;
    CancelLinkCopy(j);  // its share goes to the copies left on the link
    j.copy_to = -1;
    Physics(store, "far_copy_lost", j.copying_steps, cause);
  }
}

void SimBackend::FarStoreBack(int region) {
  if (FarStoreDown(region)) return;  // the region is back but not its store, or the other way round
  for (Job& j : jobs_)
    if (j.cfg.checkpoint_copy > Duration{} && !j.copy_timer && !j.copy_on_link && j.ack_total > j.remote_total &&
        FarRegion(j) == region)
      CopyCheckpoint(j.id);
}

// Per GPU, what `j` reads from its region's object store when the readers' demand exceeds the store's
// capacity; nothing when it fits (each GPU then reads at the catalogue's rate).
std::optional<double> SimBackend::ObjectStoreFairShare(const Job& j) const {
  if (!(opt_.object_store_gbytes_per_s > 0) || j.region < 0) return std::nullopt;
  const RegionState& r = region_[static_cast<size_t>(j.region)];
  std::vector<std::pair<double, double>> readers;  // (per-GPU demand, GPUs)
  double demand = 0;
  for (const Job& o : jobs_)
    if (o.cfg.input_from_object_store && o.region == j.region && (o.id == j.id || Reading(o.state))) {
      readers.push_back({o.cfg.input_gbytes_per_s, static_cast<double>(o.placed_gpus)});
      demand += o.cfg.input_gbytes_per_s * o.placed_gpus;
    }
  double left = opt_.object_store_gbytes_per_s * r.object_store;
  if (demand <= left) return std::nullopt;
  std::sort(readers.begin(), readers.end());
  double gpus = 0;
  for (const auto& [d, g] : readers) gpus += g;
  for (const auto& [d, g] : readers) {  // water filling: the smallest demands are met first
    if (d * gpus > left) break;
    left -= d * g;
    gpus -= g;
  }
  const double level = gpus > 0 ? left / gpus : 0;
  return std::min(j.cfg.input_gbytes_per_s, level);
}

// A reader may have started or stopped (a job's state changed): the others of its region get a new
// share. `reading_` remembers which jobs read, so only a start or a stop costs the refresh.
void SimBackend::ObjectStoreReadersChanged(const Job& j) {
  if (!(opt_.object_store_gbytes_per_s > 0) || j.region < 0) return;
  if (reading_.count(j.id) == Reading(j.state)) return;
  if (Reading(j.state)) reading_.insert(j.id);
  else reading_.erase(j.id);
  std::vector<JobId> others;
  for (const Job& o : jobs_)
    if (o.id != j.id && o.cfg.input_from_object_store && o.region == j.region) others.push_back(o.id);
  for (JobId o : others) RefreshJob(o);
}

}  // namespace rackchaos::cluster
