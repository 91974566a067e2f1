// Restarts in place: a requeued job that gets back every tray it had but a few (the drained ones)
// touches only the trays that change, not all 25,000 of a 100k-GPU job.
//
// The scheduler's answer is the same as Place() after a full release: the first `need` free regular
// trays in tray order, where the job's own usable trays count as free. With the free trays listed
// (a scan of one byte per tray) and the job's lost seats known (TouchTray keeps them), that is a merge
// of two sorted lists, copied a run at a time.
//
// A release leaves the job's thermal residual on each tray it frees (ThermalRelease: carry = carry *
// decay + residual). A tray the job keeps owes that step; it is logged once per restart in the job's
// carry_log and applied by SettleCarry, in order and with the same arithmetic, before anyone reads
// the tray's carry or the tray changes hands. Temperatures are bit-identical to a full release.
//
// Only the plain case takes this path; anything else (spare racks, TP/EP blocks, a partial last tray,
// hot spares, a shrunk job, another job waiting) releases and places in full as before.
#include <algorithm>
#include <bit>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

void SimBackend::SeatJob(size_t k, JobId job, int gpus) {
  Seat& s = seat_[k];
  const ComponentId tray = topo_.trays()[k];
  if (s.job != kNoJob && s.job != job && !usable_[k]) jobs_[s.job].lost_seats.erase(tray);
  if (job != kNoJob && s.job != job) {
    s.settled = static_cast<uint32_t>(jobs_[job].carry_log.size());
    if (!usable_[k]) jobs_[job].lost_seats.insert(tray);
  }
  s.job = job;
  s.job_gpus = gpus;
  UpdateFree(k);
}

void SimBackend::SettleCarry(size_t k) const {
  Seat& s = seat_[k];
  if (s.job == kNoJob) return;
  const std::vector<Job::CarryStep>& log = jobs_[s.job].carry_log;
  if (s.settled >= log.size()) return;
  // The same job, steps and carry as the last settle (the log only grows): the same result, bit for bit.
  SettleMemo& m = settle_memo_;
  const uint64_t bits = std::bit_cast<uint64_t>(s.carry);
  if (m.job == s.job && m.from == s.settled && m.to == log.size() && m.carry_at == s.carry_at && m.carry_bits == bits) {
    s.carry = m.carry;
    s.carry_at = m.at;
    s.settled = m.to;
    return;
  }
  m = SettleMemo{s.job, s.settled, static_cast<uint32_t>(log.size()), bits, s.carry_at, {}, 0};
  for (; s.settled < log.size(); ++s.settled) {
    const Job::CarryStep& step = log[s.settled];
    double decay = step.decay;  // the same value Decay() gives for the same two instants: one exp per step
    if (s.settled == 0 || s.carry_at != log[s.settled - 1].at) {
      if (s.carry_at != settle_since_ || step.at != settle_at_) {
        settle_since_ = s.carry_at;
        settle_at_ = step.at;
        settle_decay_ = Decay(s.carry_at, step.at);
      }
      decay = settle_decay_;
    }
    s.carry = s.carry * decay + step.residual;
    s.carry_at = step.at;
  }
  m.carry = s.carry;
  m.at = s.carry_at;
}

bool SimBackend::RestartInPlace(Job& j, const std::string& detail) {
  const int per_tray = topo_.model().gpus_per_tray;
  const size_t need = static_cast<size_t>(j.cfg.gpus / per_tray);
  const int block = j.cfg.grouped ? j.cfg.tp * j.cfg.ep : 1;
  if (!opt_.restart_in_place || opt_.spare_racks > 0 || block > 1 || j.cfg.gpus % per_tray != 0 || j.placed_gpus != j.cfg.gpus ||
      j.trays.size() != need || j.spare_trays != 0 || !j.started_once || !j.trays.sorted())
    return false;
  for (const Job& other : jobs_)
    if (other.id != j.id && other.state == JobState::kQueued) return false;  // it might take the trays first
  // The free regular trays now, in the window Place() tries first (the job's own region; the whole
  // cluster without regions); with the job's usable ones they are what Place() would choose from. A job
  // not wholly inside that window, or that would not fit in it, takes the full path (other windows).
  const std::vector<ComponentId>& all = topo_.trays();
  const std::vector<ComponentId>& had = j.trays.ids();
  const std::vector<std::pair<size_t, size_t>> windows = RegionWindows(j);
  if (windows.empty() || had.empty()) return false;
  const size_t lo = windows.front().first, hi = std::min(windows.front().second, all.size());
  if (slot(had.front()) < lo || slot(had.back()) >= hi) return false;
  std::vector<ComponentId> free;
  for (size_t k = lo; k < hi; ++k)
    if (free_[k] && spare_[k] == TrayUse::kRegular) free.push_back(all[k]);
  if (free.size() + had.size() - j.lost_seats.size() < need) return false;  // hot spares or waiting

  // The new placement: the first `need` of (free + kept) in tray order, and what the job leaves.
  std::vector<ComponentId> next, left;
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
      const size_t run_end = static_cast<size_t>(std::lower_bound(had.begin() + a, had.begin() + end, stop) - had.begin());
      const size_t take = std::min(run_end - a, need - next.size());
      next.insert(next.end(), had.begin() + a, had.begin() + a + take);
      a += take;
    }
  };
  std::vector<ComponentId> joined;
  for (ComponentId f : free) {
    keep_below(f);
    if (next.size() == need) break;
    next.push_back(f);
    joined.push_back(f);
  }
  keep_below(kNoComponent);
  left.insert(left.end(), had.begin() + a, had.end());  // past the cut, lost or not

  // The job stops as BackToQueue stops it, then leaves, keeps and joins trays.
  std::vector<ComponentId> loud;
  for (ComponentId g : loud_gpus_)
    if (JobOfGpu(g) == j.id) loud.push_back(g);
  StopForRequeue(j, detail);
  const Time now = clock_.Now();
  const double since_last = j.carry_log.empty() ? 1 : Decay(j.carry_log.back().at, now);
  j.carry_log.push_back({now, TemperatureAt(j.env, now) - idle_steady_c_, since_last});
  for (ComponentId tray : left) {
    const size_t k = slot(tray);
    SettleCarry(k);  // takes this release's step too
    SeatJob(k, kNoJob, 0);
  }
  // ReleaseTrays re-solves the job's loud GPUs with no job on them. On a kept tray the job is there but
  // queued, which draws the same idle power, and its fresh reference trajectory is idle now: the same.
  j.env = ThermalState{idle_steady_c_, now, idle_steady_c_, full_tau_s_};
  for (ComponentId g : loud) UpdateThermal(g);
  for (ComponentId tray : joined) SeatJob(slot(tray), j.id, per_tray);
  j.trays = TrayList::Ascending(std::move(next));  // a merge of two ascending lists
  NoteGroupFabrics(j);  // as Place() does
  StartAfterOverhead(j, "placed on " + std::to_string(j.trays.size()) + " trays");
  GrowShrunkJobs();
  ++restarts_in_place_;
  return true;
}

}  // namespace rackchaos::cluster
