// The trays' storage path in the simulated cluster (cluster/sim_storage.h) and the data stalls it causes:
// read = input x nominal step / rate, at the job's slowest tray.
#include "cluster/sim_storage.h"

#include <algorithm>
#include <cmath>

#include "cluster/sim_region_health.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

Storage::Storage(SimContext& ctx, Scheduler& jobs, RegionHealth& regions)
    : ctx_(ctx),
      topo_(ctx.topo()),
      opt_(ctx.opt()),
      jobs_(jobs),
      seats_(jobs.seats()),
      job_list_(jobs.jobs()),
      regions_(regions),
      stores_(topo_.regions().size()) {}

// storage_degrade and cache_fail on one tray overlap: the worst read rate held wins.
void Storage::SetStorageRead(ComponentId tray, double fraction, FaultId cause) {
  ApplyStorageRead(tray, storage_holds_.Place(tray, tray, cause, fraction, 1), cause, fraction <= 0);
}

void Storage::ReleaseStorageRead(ComponentId tray, FaultId cause) {
  ApplyStorageRead(tray, storage_holds_.Release(tray, tray, cause, 1), cause, false);
}

// A hold at 100% leaves the path at full rate: it is not listed as impaired.
void Storage::ApplyStorageRead(ComponentId tray, const Holds<ComponentId>::State& s, FaultId cause, bool lost) {
  if (s.held && s.value < 1)
    storage_[tray] = {s.value, s.cause};
  else
    storage_.erase(tray);
  ctx_.Physics(tray, s.held ? "storage_read" : "storage_read_up", s.value, s.held ? s.cause : cause);
  const JobId job = seats_.JobOnTray(tray);
  if (job != kNoJob && lost) jobs_.LoseLocalCheckpoint(job, tray, cause);
  if (job != kNoJob) jobs_.RefreshJob(job);
}

double Storage::ReadRate(const StoragePath& s, ComponentId tray) const {
  const RackModel& m = topo_.model();
  // The object store's share is its region's (sim_object_store.cpp); 1 without regions.
  return s.fraction > 0 ? m.cache_gbytes_per_s_per_gpu * s.fraction
                        : m.object_store_gbytes_per_s_per_gpu * ObjectStoreShare(tray);
}

Storage::DataStall Storage::DataStallOf(const SimJob& j) const {
  DataStall d;
  if (j.cfg.input_gbytes_per_s <= 0 || topo_.model().cache_gbytes_per_s_per_gpu <= 0) return d;
  double rate = ReadRate(StoragePath{});
  if (j.cfg.input_from_object_store) return StreamStall(j);  // sim_object_store.cpp
  for (const auto& [tray, path] : storage_)
    if (seats_.JobOnTray(tray) == j.id && ReadRate(path, tray) < rate) {
      rate = ReadRate(path, tray);
      d.cause = path.cause;
    }
  d.read_s = j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds() / rate;
  return d;
}

void Storage::AddStalledRanks(const SimJob& j, double stall_s, double nominal_compute, StepReport& r,
                              Rng& jitter) const {
  if (stall_s <= 0) return;
  const double step_read = j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds();
  const double slowest = DataStallOf(j).read_s;
  for (const auto& [tray, path] : storage_) {
    if (seats_.JobOnTray(tray) != j.id) continue;
    const double wait = std::max(0.0, stall_s - (slowest - step_read / ReadRate(path, tray)));
    if (wait <= 0) continue;
    const int used = seats_.gpus_at(topo_.TraySlot(tray));
    for (ComponentId g : topo_.GpusOfTray(tray)) {
      if (topo_.at(g).index >= used) break;
      if (std::find(r.rank_gpus.begin(), r.rank_gpus.end(), g) != r.rank_gpus.end()) continue;
      const double noise = std::clamp(jitter.Normal(0, opt_.step_jitter), -0.2, 0.2);
      r.rank_gpus.push_back(g);
      r.compute_s.push_back(static_cast<float>((nominal_compute + wait) * (1 + noise)));
    }
  }
}

}  // namespace rackchaos::cluster
