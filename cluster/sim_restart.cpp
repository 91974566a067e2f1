// Seats, restarts in place and spare racks (cluster/sim_scheduler.h).
//
// Restarts in place: a requeued job that gets back every tray it had but a few (the drained ones)
// touches only the trays that change, not all 25,000 of a 100k-GPU job. The scheduler's answer is the
// same as placing after a full release: the first `need` free regular trays in tray order, where the
// job's own usable trays count as free. With the free trays found in order (TrayPool::NextFree, only as
// far as the merge needs them) and the job's lost seats known (TouchTray keeps them), that
// is a merge of two sorted lists, copied a run at a time. The trays it keeps owe the release's thermal carry, which thermal logs once and settles per tray
// (sim_thermal_jobs.cpp). Only the plain case takes this path; anything else (spare racks, TP/EP blocks,
// a partial last tray, hot spares, a shrunk job, another job waiting) releases and places in full.
//
// Spare racks (SimOptions::spare_racks): a job that comes back to the queue while a rack it ran on is
// UNHEALTHY (a switch tray lost in full-bandwidth mode, or power beyond the shelves' redundancy) or
// short of coolant flow (its CDU or pumps) may be placed on a spare rack's trays (cluster/placement.h);
// the scheduler records each move as a `spare_rack` action naming the spare rack. Only plans with spare
// racks pay anything (one pass over the requeued job's trays).
#include <algorithm>

#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_region_health.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

void Scheduler::SeatJob(size_t k, JobId job, int gpus) {
  const ComponentId tray = topo_.trays()[k];
  const JobId was = seats_.job_at(k);
  if (was != kNoJob && was != job && !seats_.usable(k)) jobs_[was].lost_seats.erase(tray);
  if (job != kNoJob && was != job) {
    thermal_.StartCarry(k, job);
    if (!seats_.usable(k)) jobs_[job].lost_seats.insert(tray);
  }
  seats_.Seat(k, job, gpus);
}

void Scheduler::TouchTray(ComponentId tray_id) {
  ctx_.SettleOwed();
  const size_t k = topo_.TraySlot(tray_id);
  const bool usable = nodes_.TrayUsable(tray_id);
  if (usable != seats_.usable(k) && seats_.job_at(k) != kNoJob) {  // its job will not get it back on a restart
    if (usable) jobs_[seats_.job_at(k)].lost_seats.erase(tray_id);
    else jobs_[seats_.job_at(k)].lost_seats.insert(tray_id);
  }
  seats_.SetUsable(k, usable);
}

bool Scheduler::RestartInPlace(SimJob& j, const std::string& detail, bool owed) {
  const int per_tray = topo_.model().gpus_per_tray;
  const size_t need = static_cast<size_t>(j.cfg.gpus / per_tray);
  const int block = j.cfg.grouped ? j.cfg.tp * j.cfg.ep : 1;
  if (!opt_.restart_in_place || opt_.spare_racks > 0 || block > 1 || j.cfg.gpus % per_tray != 0 ||
      j.at.gpus != j.cfg.gpus || j.at.trays.size() != need || j.spare_trays != 0 || !j.started_once ||
      !j.at.trays.sorted())
    return false;
  for (const SimJob& other : jobs_)
    if (other.id != j.id && other.state == JobState::kQueued) return false;  // it might take the trays first
  // The free regular trays now, in the window placement tries first (the job's own region; the whole
  // cluster without regions); with the job's usable ones they are what placement would choose from. A
  // job not wholly inside that window, or that would not fit in it, takes the full path (other windows).
  const std::vector<ComponentId>& all = topo_.trays();
  const std::vector<ComponentId>& had = j.at.trays.ids();
  const std::vector<std::pair<size_t, size_t>> windows = RegionWindows(topo_, j.region, regions_.down_flags());
  if (windows.empty() || had.empty()) return false;
  const size_t lo = windows.front().first, hi = std::min(windows.front().second, all.size());
  if (topo_.TraySlot(had.front()) < lo || topo_.TraySlot(had.back()) >= hi) return false;
  const TrayPool& pool = seats_.pool();
  // The window's free regular trays in tray order, found as the merge below asks for them: it stops at
  // the first `need`, and a million-GPU region has 200,000 trays, nearly all taken.
  size_t scan = lo;
  auto next_free = [&]() -> ComponentId {
    if ((scan = pool.NextFree(TrayUse::kRegular, scan, hi)) >= hi) return kNoComponent;
    return all[scan++];
  };

  // The job keeps every tray it had when it lost no seat and no free tray lies below its last one (a
  // process crash, a hang, a link's flap): the placement is the same, and the job keeps the very list, so
  // the events, the store and the scoring see one shared placement (TrayList::SameAs) and no new 25,000
  // ids are copied, compared or stored.
  const size_t first_free = pool.NextFree(TrayUse::kRegular, lo, hi);
  const bool same = j.lost_seats.empty() && (first_free >= hi || all[first_free] > had.back());
  // The new placement: the first `need` of (free + kept) in tray order, and what the job leaves.
  std::vector<ComponentId> next, left, joined;
  if (!same) {
    next.reserve(need);
    size_t a = 0;  // next tray of `had` to consider
    auto lost = j.lost_seats.begin();
    // Copies had[a..) below `bound`, skipping lost seats, until the placement is full.
    auto keep_below = [&](ComponentId bound) {
      const size_t end = static_cast<size_t>(std::lower_bound(had.begin() + a, had.end(), bound) - had.begin());
      while (a < end && next.size() < need) {
        for (; lost != j.lost_seats.end() && *lost < had[a]; ++lost) {}
        if (lost != j.lost_seats.end() && *lost == had[a]) {
          left.push_back(had[a++]);
          continue;
        }
        const ComponentId stop = lost == j.lost_seats.end() ? bound : std::min(bound, *lost);
        const size_t run_end =
            static_cast<size_t>(std::lower_bound(had.begin() + a, had.begin() + end, stop) - had.begin());
        const size_t take = std::min(run_end - a, need - next.size());
        next.insert(next.end(), had.begin() + a, had.begin() + a + take);
        a += take;
      }
    };
    for (ComponentId f = next_free(); f != kNoComponent; f = next_free()) {
      keep_below(f);
      if (next.size() == need) break;
      next.push_back(f);
      joined.push_back(f);
    }
    keep_below(kNoComponent);
    if (next.size() < need) return false;  // hot spares or waiting: nothing changed yet
    left.insert(left.end(), had.begin() + a, had.end());  // past the cut, lost or not
  }

  // The job stops as BackToQueue stops it, then leaves, keeps and joins trays. ReleaseTrays would
  // re-solve the job's loud GPUs with no job on them; on a kept tray the job is there but queued, which
  // draws the same idle power, and its fresh reference trajectory is idle now: the same.
  const std::vector<ComponentId> loud = thermal_.LoudGpusOf(j.id);
  if (owed) {  // it left its trays at its crash as far as anyone saw: its events name none
    Placement at = std::move(j.at);
    j.at = {};
    StopForRequeue(j, detail);
    j.at = std::move(at);
  } else {
    StopForRequeue(j, detail);
  }
  thermal_.LogCarryStep(j.id);
  for (ComponentId tray : left) {
    const size_t k = topo_.TraySlot(tray);
    thermal_.SettleCarry(k);  // takes this release's step too
    SeatJob(k, kNoJob, 0);
  }
  for (ComponentId g : loud) thermal_.UpdateThermal(g);
  for (ComponentId tray : joined) SeatJob(topo_.TraySlot(tray), j.id, per_tray);
  if (!same) {
    // A merge of two ascending lists of compute trays (its kept and joined ones): scoring need not count them.
    const int64_t tray_gpus = static_cast<int64_t>(next.size()) * per_tray;
    j.at.trays = TrayList::Ascending(std::move(next), tray_gpus);
    j.at.kinds = GroupFabrics(topo_, j.cfg, j.at);      // as Place() does
  }
  StartAfterOverhead(j, "placed on " + std::to_string(j.at.trays.size()) + " trays");
  GrowShrunkJobs();
  ++restarts_in_place_;
  return true;
}

bool Scheduler::DomainLost(const SimJob& j) const {
  int last = -1;
  for (ComponentId tray : j.at.trays) {
    const int r = topo_.at(tray).rack;
    if (r == last) continue;
    last = r;
    const ComponentId rack = topo_.racks()[static_cast<size_t>(r)];
    if (fabric_.DomainHealthOf(rack) == DomainHealth::kUnhealthy || thermal_.CduFlow(static_cast<size_t>(r)) < 1)
      return true;
  }
  return false;
}

void Scheduler::NoteSpareRackUse(const SimJob& j) {
  std::set<ComponentId> racks;
  for (ComponentId tray : j.at.trays)
    if (seats_.pool().use(topo_.TraySlot(tray)) == TrayUse::kSpareRack) racks.insert(topo_.RackOf(tray));
  for (ComponentId rack : racks)
    ctx_.Record(ActionTaken{
        "spare_rack", rack, j.id, true,
        "job '" + j.cfg.name + "' moved to spare rack " + topo_.at(rack).name + ": its NVLink domain was lost"});
}

std::string Scheduler::RecountFreeTrays() const {
  const TrayPool& pool = seats_.pool();
  size_t free = 0, free_spare_rack = 0;
  std::string out;
  for (size_t k = 0; k < topo_.trays().size(); ++k) {
    const bool is_free = nodes_.TrayUsable(topo_.trays()[k]) && seats_.job_at(k) == kNoJob;
    if (is_free != pool.free(k)) out += "tray slot " + std::to_string(k) + " free_ is stale; ";
    free += is_free;
    free_spare_rack += is_free && opt_.spare_racks > 0 && pool.use(k) == TrayUse::kSpareRack;
  }
  if (free != pool.free_count())
    out += "free_count_ " + std::to_string(pool.free_count()) + ", recounted " + std::to_string(free) + "; ";
  if (free_spare_rack != pool.free_spare_rack())
    out += "free_spare_rack_ " + std::to_string(pool.free_spare_rack()) + ", recounted " +
           std::to_string(free_spare_rack) + "; ";
  return out;
}

}  // namespace rackchaos::cluster
