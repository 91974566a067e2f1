// The storage path of the simulated cluster and the data stalls it causes.
//
// Each GPU reads its job's input (JobConfig::input_gbytes_per_s at full speed) from its tray's local NVMe
// cache, at the catalogue's per-GPU rate; a tray whose cache is lost reads from the region's object store
// at that rate instead. The data loader prefetches the next batch while a step runs, so a step lasts at
// least as long as its slowest tray takes to read one step's input: read = input x nominal step / rate.
// Nothing is logged; what a site sees is the starved ranks' longer compute phase in the step reports
// (they wait on the loader before their collectives), which the straggler test judges.
//
// Cost: the impaired trays only (storage_), never every tray of a job.
#include <algorithm>
#include <cmath>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

// A held read rate takes effect (SetStorageRead and Release: sim_holds.cpp). A hold at 100% leaves
// the path at full rate: it is not listed as impaired.
void SimBackend::ApplyStorageRead(ComponentId tray, const Holds<ComponentId>::State& s, FaultId cause, bool lost) {
  if (s.held && s.value < 1)
    storage_[tray] = {s.value, s.cause};
  else
    storage_.erase(tray);
  Physics(tray, s.held ? "storage_read" : "storage_read_up", s.value, s.held ? s.cause : cause);
  const JobId job = seat_[slot(tray)].job;
  if (job != kNoJob && lost) LoseLocalCheckpoint(jobs_[job], tray, cause);
  if (job != kNoJob) RefreshJob(job);
}

double SimBackend::ReadRate(const StoragePath& s, ComponentId tray) const {
  const RackModel& m = topo_.model();
  // The object store's share is its region's (sim_regions.cpp); 1 without regions.
  return s.fraction > 0 ? m.cache_gbytes_per_s_per_gpu * s.fraction
                        : m.object_store_gbytes_per_s_per_gpu * ObjectStoreShare(tray);
}

SimBackend::DataStall SimBackend::DataStallOf(const Job& j) const {
  DataStall d;
  if (j.cfg.input_gbytes_per_s <= 0 || topo_.model().cache_gbytes_per_s_per_gpu <= 0) return d;
  double rate = ReadRate(StoragePath{});
  if (j.cfg.input_from_object_store) return StreamStall(j);  // sim_regions.cpp
  for (const auto& [tray, path] : storage_)
    if (seat_[slot(tray)].job == j.id && ReadRate(path, tray) < rate) {
      rate = ReadRate(path, tray);
      d.cause = path.cause;
    }
  d.read_s = j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds() / rate;
  return d;
}

// The ranks of a starved tray wait `stall_s` for their input before computing; listed like slow ranks
// (with jitter from the compute stream: drawn only while a job stalls).
void SimBackend::AddStalledRanks(const Job& j, double stall_s, double nominal_compute, StepReport& r) {
  if (stall_s <= 0) return;
  const double step_read = j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds();
  const double slowest = DataStallOf(j).read_s;
  for (const auto& [tray, path] : storage_) {
    if (seat_[slot(tray)].job != j.id) continue;
    const double wait = std::max(0.0, stall_s - (slowest - step_read / ReadRate(path, tray)));
    if (wait <= 0) continue;
    const int used = seat_[slot(tray)].job_gpus;
    for (ComponentId g : topo_.GpusOfTray(tray)) {
      if (topo_.at(g).index >= used) break;
      if (std::find(r.rank_gpus.begin(), r.rank_gpus.end(), g) != r.rank_gpus.end()) continue;
      const double noise = std::clamp(jitter_rng_.Normal(0, opt_.step_jitter), -0.2, 0.2);
      r.rank_gpus.push_back(g);
      r.compute_s.push_back(static_cast<float>((nominal_compute + wait) * (1 + noise)));
    }
  }
}

// The far copy runs after the local acknowledgement, one at a time; when it is done, a newer
// acknowledged checkpoint (written meanwhile) is copied next. With a size it shares the region's link
// (sim_region_link.cpp), else it takes checkpoint_copy. None starts while the far region's store is
// down: FarStoreBack starts it.
void SimBackend::CopyCheckpoint(JobId id) {
  Job& j = jobs_[id];
  if (j.copy_on_link) return;  // the newer checkpoint follows when the copy in flight is done
  const int to = FarRegion(j);
  if (to >= 0 && FarStoreDown(to)) return;
  j.copy_to = to;
  j.copying_steps = j.ckpt_steps;
  j.copying_total = j.ack_total;
  if (CopiesOverLink(j)) {
    StartLinkCopy(j);
    return;
  }
  j.copy_timer = clock_.CallAfter(j.cfg.checkpoint_copy, [this, id] {
    jobs_[id].copy_timer = 0;
    FarCopyDone(id);
  });
}

void SimBackend::FarCopyDone(JobId id) {
  Job& job = jobs_[id];
  job.remote_steps = job.copying_steps;
  job.remote_total = job.copying_total;
  if (job.ack_total > job.remote_total) CopyCheckpoint(id);
}

// A tray of the job lost its local store with the job's checkpoint shards on it: the acknowledged
// checkpoint newer than the far copy is gone, and so are the copy and the write in flight. The job keeps
// running; its next restart goes back to the far copy, with the running time since as rework.
void SimBackend::LoseLocalCheckpoint(Job& j, ComponentId tray, FaultId cause) {
  if (j.cfg.checkpoint_copy <= Duration{}) return;
  if (j.ack_timer) clock_.Cancel(j.ack_timer);  // the write in flight fails with the store
  j.ack_timer = 0;
  if (j.ack_total <= j.remote_total) return;  // the far region has the newest acknowledged checkpoint
  if (j.copy_timer) clock_.Cancel(j.copy_timer);
  j.copy_timer = 0;
  CancelLinkCopy(j);
  j.running_since_ckpt += j.ack_total - j.remote_total;
  j.ckpt_steps = j.remote_steps;
  j.ack_total = j.remote_total;
  Physics(tray, "checkpoint_lost", j.remote_steps, cause);
}

}  // namespace rackchaos::cluster
