// Regions of the simulated cluster: where jobs are placed, each region's object store and checkpoint
// store, and a whole region going down.
//
// - Placement: a job runs inside one region, its own region (where it last ran) first, then the others
//   in plan order; a region that is down is skipped. Spare racks are the last N racks of each region.
// - Object store: a tray whose NVMe cache is lost reads its input from its region's object store
//   (sim_storage.cpp), at the catalogue's rate times the store's share. A failed store (share 0) blocks
//   the data loader of those ranks: the job hangs at its next step until the store is back or the
//   collective timeout fires.
// - Checkpoint store: acknowledges the job's checkpoint writes. While it has failed, a write is not
//   acknowledged and the job keeps training (asynchronous checkpointing, as Megatron's --async-save and
//   PyTorch DCP's async_save do: the save fails in the background, training goes on): its rework grows
//   until a later write succeeds. The far copy (checkpoint.copy_time) goes to the next region.
// - Region outage: every rack of the region loses power (sim_domains.cpp's path: heartbeats stop, jobs
//   hang) and its checkpoint store is gone with it, so a job's acknowledged checkpoints not yet copied
//   to the next region are lost: its restart elsewhere goes back to the newest far copy. The copies in
//   flight into it from the region before are lost too (sim_region_link.cpp), as when its checkpoint
//   store fails.
// What a site sees is each region's health probe (object store read throughput, checkpoint store write,
// the region's endpoints) at its poll, phase drawn per region from the seeded generator.
//
// Cost: nothing without regions; with them one pass over a region's trays per placement attempt.
#include <algorithm>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

std::vector<std::pair<size_t, size_t>> SimBackend::RegionWindows(const Job& job) const {
  const auto& regions = topo_.regions();
  if (regions.empty()) return {{0, topo_.trays().size()}};
  const size_t per_rack = static_cast<size_t>(topo_.model().compute_trays);
  std::vector<std::pair<size_t, size_t>> out;
  auto add = [&](size_t k) {
    if (region_[k].down) return;
    const size_t lo = static_cast<size_t>(regions[k].first_rack) * per_rack;
    out.push_back({lo, lo + static_cast<size_t>(regions[k].racks) * per_rack});
  };
  if (job.region >= 0) add(static_cast<size_t>(job.region));
  for (size_t k = 0; k < regions.size(); ++k)
    if (static_cast<int>(k) != job.region) add(k);
  return out;
}

double SimBackend::ObjectStoreShare(ComponentId tray) const {
  if (region_.empty() || tray == kNoComponent) return 1;
  return region_[static_cast<size_t>(topo_.RegionOf(tray))].object_store;
}

SimBackend::DataStall SimBackend::StreamStall(const Job& j) const {
  DataStall d;
  double share = 1;
  if (!region_.empty() && j.region >= 0) {
    share = region_[static_cast<size_t>(j.region)].object_store;
    d.cause = region_[static_cast<size_t>(j.region)].object_cause;
  }
  double rate = topo_.model().object_store_gbytes_per_s_per_gpu * share;
  if (auto fair = ObjectStoreFairShare(j)) rate = std::min(rate, *fair);  // sim_region_link.cpp
  d.read_s = rate > 0 ? j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds() / rate : 0;  // 0: InputLost hangs it
  return d;
}

FaultId SimBackend::InputLost(const Job& j) const {
  if (region_.empty() || j.cfg.input_gbytes_per_s <= 0) return kNoFault;
  if (j.cfg.input_from_object_store && j.region >= 0) {
    const RegionState& r = region_[static_cast<size_t>(j.region)];
    return r.object_store <= 0 ? r.object_cause : kNoFault;
  }
  for (const auto& [tray, path] : storage_)
    if (path.fraction <= 0 && seat_[slot(tray)].job == j.id) {
      const RegionState& r = region_[static_cast<size_t>(topo_.RegionOf(tray))];
      if (r.object_store <= 0) return r.object_cause;
    }
  return kNoFault;
}

// At the acknowledgement of a snapshot. A failed write leaves the work since the last acknowledged
// checkpoint unsafe: the part this snapshot would have kept is the store's rework at the next restart.
bool SimBackend::CheckpointWriteFails(Job& j) {
  if (region_.empty() || j.region < 0) return false;
  const RegionState& r = region_[static_cast<size_t>(j.region)];
  if (!r.checkpoint_failed) {
    j.unsafe_running = {};
    j.unsafe_cause = kNoFault;
    return false;
  }
  j.unsafe_running = j.pending_running;
  j.unsafe_cause = r.checkpoint_cause;
  Physics(topo_.regions()[static_cast<size_t>(j.region)].checkpoint_store, "checkpoint_write_failed", j.steps,
          r.checkpoint_cause);
  return true;
}

void SimBackend::ChargeUnsafeWork(Job& j, JobChanged& change) {
  if (change.lost_work <= Duration{} || j.unsafe_running <= Duration{}) return;
  change.store_lost_work = std::min(change.lost_work, j.unsafe_running);
  change.store_cause = j.unsafe_cause;
  j.unsafe_running = {};
  j.unsafe_cause = kNoFault;
}

void SimBackend::Probe(ComponentId part, bool ok) {
  const RegionState& r = region_[static_cast<size_t>(topo_.RegionOf(part))];
  Emit(TelemetrySample{part, Metric::kProbeOk, ok ? 1.0 : 0.0},
       NextSlot(r.probe_phase, opt_.probe_period, clock_.Now()));
}

// A held store rate takes effect (SetStoreRate and Release: sim_holds.cpp). A hold at 100% leaves the
// store serving: its probe passes and no fault impairs it.
void SimBackend::ApplyStoreRate(ComponentId store, const Holds<ComponentId>::State& s, FaultId cause) {
  const Component& c = topo_.at(store);
  RegionState& r = region_[static_cast<size_t>(c.index)];
  const bool impaired = s.held && s.value < 1;
  if (c.kind == Kind::kCheckpointStore) {
    const bool was_failed = r.checkpoint_failed;
    r.checkpoint_failed = impaired;
    r.checkpoint_cause = impaired ? s.cause : kNoFault;
    Physics(store, impaired ? "checkpoint_store_failed" : "checkpoint_store_up", s.value, cause);
    Probe(store, !impaired);
    if (impaired && !was_failed) FarCopiesLost(c.index, cause);  // sim_region_link.cpp: copies landing here
    if (!impaired && was_failed) FarStoreBack(c.index);
    return;
  }
  r.object_store = s.value;
  r.object_cause = impaired ? s.cause : kNoFault;
  Physics(store, s.held ? "object_store_read" : "object_store_up", s.value, cause);
  Probe(store, !impaired);
  // Only jobs streaming from this store or with a tray whose cache is lost notice.
  std::vector<JobId> jobs;
  for (const auto& [tray, path] : storage_)
    if (path.fraction <= 0 && topo_.RegionOf(tray) == c.index && seat_[slot(tray)].job != kNoJob)
      jobs.push_back(seat_[slot(tray)].job);
  for (const Job& j : jobs_)
    if (j.cfg.input_from_object_store && j.region == c.index) jobs.push_back(j.id);
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  for (JobId j : jobs) RefreshJob(j);
}

Status SimBackend::SetRegionDown(ComponentId region, bool down, FaultId cause) {
  const Component& c = topo_.at(region);
  if (c.kind != Kind::kRegion) return Status::Invalid(c.name + " is a " + KindName(c.kind) + ", not a region");
  RegionState& r = region_[static_cast<size_t>(c.index)];
  // Two outages of one region overlap: it stays down until the last is reverted (cluster/holds.h).
  const bool was_down = r.down;
  r.down = (down ? region_holds_.Place(region, region, cause, 0, 1) : region_holds_.Release(region, region, cause, 1)).held;
  const Region& reg = topo_.regions()[static_cast<size_t>(c.index)];
  if (r.down != was_down) {
    Physics(region, down ? "region_down" : "region_up", 0, cause);
    if (down)  // the region's checkpoint store goes with it: what was not copied yet is lost
      for (Job& j : jobs_)
        if (j.region == c.index && j.state != JobState::kQueued && j.state != JobState::kFinished)
          LoseLocalCheckpoint(j, reg.checkpoint_store, cause);
    if (down) FarCopiesLost(c.index, cause);  // and so are the copies landing in it (sim_region_link.cpp)
  }
  // The region holds each rack's power off beside the rack's own PSUs: a rack comes back when neither does.
  for (int k = reg.first_rack; k < reg.first_rack + reg.racks; ++k) {
    const ComponentId rack = topo_.racks()[static_cast<size_t>(k)];
    ApplyRackPower(rack, down ? power_holds_.Place(rack, region, cause, 0, 1) : power_holds_.Release(rack, region, cause, 1),
                   cause);
  }
  if (r.down == was_down) return Status::Ok();
  Probe(region, !r.down);
  if (!r.down) {
    FarStoreBack(c.index);  // sim_region_link.cpp: the copies that waited for it
    PlaceQueuedJobs();
  }
  return Status::Ok();
}

}  // namespace rackchaos::cluster
