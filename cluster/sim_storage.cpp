// The storage path in the simulated cluster (cluster/sim_storage.h) and the data stalls it causes (read =
// input x nominal step / rate, at the job's slowest tray), and each region's object and checkpoint store.
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
  // The object store's share is its region's (below); 1 without regions.
  return s.fraction > 0 ? m.cache_gbytes_per_s_per_gpu * s.fraction
                        : m.object_store_gbytes_per_s_per_gpu * ObjectStoreShare(tray);
}

Storage::DataStall Storage::DataStallOf(const SimJob& j) const {
  DataStall d;
  if (j.cfg.input_gbytes_per_s <= 0 || topo_.model().cache_gbytes_per_s_per_gpu <= 0) return d;
  double rate = ReadRate(StoragePath{});
  if (j.cfg.input_from_object_store) return StreamStall(j);
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

// ---------------------------------------------------------------- each region's stores
//
// The object store jobs read from and the checkpoint store their writes land in, degraded or failed by
// held faults.
//
// The object store's read capacity: cluster.object_store_gbytes_per_s [guess] per region, times the
// store's share while degraded. The running jobs with input_from: object_store each ask input_mb_per_s
// per GPU at full speed (a hung job keeps its share until it stops); while their sum fits, each reads at
// the catalogue's per-GPU rate. Beyond it the capacity is shared max-min fairly per GPU (water filling:
// a GPU asking less than the fair level gets what it asks; the others split the rest), and a job
// reading less than it asks stalls on data.
//
// Cost: nothing without regions; a store's change refreshes the jobs reading from it.

namespace {
bool Reading(JobState s) { return s == JobState::kRunning || s == JobState::kHung; }
}  // namespace

// Two faults on one store overlap: the worst rate held wins, the last release gives 100% back.
void Storage::SetStoreRate(ComponentId store, double fraction, FaultId cause) {
  ApplyStoreRate(store, store_holds_.Place(store, store, cause, fraction, 1), cause);
}

void Storage::ReleaseStoreRate(ComponentId store, FaultId cause) {
  ApplyStoreRate(store, store_holds_.Release(store, store, cause, 1), cause);
}

// A hold at 100% leaves the store serving: its probe passes and no fault impairs it.
void Storage::ApplyStoreRate(ComponentId store, const Holds<ComponentId>::State& s, FaultId cause) {
  const Component& c = topo_.at(store);
  Stores& r = stores_[static_cast<size_t>(c.index)];
  const bool impaired = s.held && s.value < 1;
  if (c.kind == Kind::kCheckpointStore) {
    const bool was_failed = r.checkpoint_failed;
    r.checkpoint_failed = impaired;
    r.checkpoint_cause = impaired ? s.cause : kNoFault;
    ctx_.Physics(store, impaired ? "checkpoint_store_failed" : "checkpoint_store_up", s.value, cause);
    regions_.Probe(store, !impaired);
    if (impaired && !was_failed) jobs_.FarCopiesLost(c.index, cause);  // the copies landing here
    if (!impaired && was_failed) jobs_.FarStoreBack(c.index);
    return;
  }
  r.object_store = s.value;
  r.object_cause = impaired ? s.cause : kNoFault;
  ctx_.Physics(store, s.held ? "object_store_read" : "object_store_up", s.value, cause);
  regions_.Probe(store, !impaired);
  // Only jobs streaming from this store or with a tray whose cache is lost notice.
  std::vector<JobId> jobs;
  for (const auto& [tray, path] : storage_)
    if (path.fraction <= 0 && topo_.RegionOf(tray) == c.index && seats_.JobOnTray(tray) != kNoJob)
      jobs.push_back(seats_.JobOnTray(tray));
  for (const SimJob& j : job_list_)
    if (j.cfg.input_from_object_store && j.region == c.index) jobs.push_back(j.id);
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  for (JobId j : jobs) jobs_.RefreshJob(j);
}

double Storage::ObjectStoreShare(ComponentId tray) const {
  if (stores_.empty() || tray == kNoComponent) return 1;
  return stores_[static_cast<size_t>(topo_.RegionOf(tray))].object_store;
}

Storage::DataStall Storage::StreamStall(const SimJob& j) const {
  DataStall d;
  double share = 1;
  if (!stores_.empty() && j.region >= 0) {
    share = stores_[static_cast<size_t>(j.region)].object_store;
    d.cause = stores_[static_cast<size_t>(j.region)].object_cause;
  }
  double rate = topo_.model().object_store_gbytes_per_s_per_gpu * share;
  if (auto fair = ObjectStoreFairShare(j)) rate = std::min(rate, *fair);
  d.read_s = rate > 0 ? j.cfg.input_gbytes_per_s * j.cfg.step_time.Seconds() / rate : 0;  // 0: InputLost hangs it
  return d;
}

FaultId Storage::InputLost(const SimJob& j) const {
  if (stores_.empty() || j.cfg.input_gbytes_per_s <= 0) return kNoFault;
  if (j.cfg.input_from_object_store && j.region >= 0) {
    const Stores& r = stores_[static_cast<size_t>(j.region)];
    return r.object_store <= 0 ? r.object_cause : kNoFault;
  }
  for (const auto& [tray, path] : storage_)
    if (path.fraction <= 0 && seats_.JobOnTray(tray) == j.id) {
      const Stores& r = stores_[static_cast<size_t>(topo_.RegionOf(tray))];
      if (r.object_store <= 0) return r.object_cause;
    }
  return kNoFault;
}

std::optional<double> Storage::ObjectStoreFairShare(const SimJob& j) const {
  if (!(opt_.object_store_gbytes_per_s > 0) || j.region < 0) return std::nullopt;
  const Stores& r = stores_[static_cast<size_t>(j.region)];
  std::vector<std::pair<double, double>> readers;  // (per-GPU demand, GPUs)
  double demand = 0;
  for (const SimJob& o : job_list_)
    if (o.cfg.input_from_object_store && o.region == j.region && (o.id == j.id || Reading(o.state))) {
      readers.push_back({o.cfg.input_gbytes_per_s, static_cast<double>(o.at.gpus)});
      demand += o.cfg.input_gbytes_per_s * o.at.gpus;
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

// `reading_` remembers which jobs read, so only a start or a stop costs the refresh.
void Storage::ObjectStoreReadersChanged(const SimJob& j) {
  if (!(opt_.object_store_gbytes_per_s > 0) || j.region < 0) return;
  if (reading_.count(j.id) == Reading(j.state)) return;
  if (Reading(j.state)) reading_.insert(j.id);
  else reading_.erase(j.id);
  std::vector<JobId> others;
  for (const SimJob& o : job_list_)
    if (o.id != j.id && o.cfg.input_from_object_store && o.region == j.region) others.push_back(o.id);
  for (JobId o : others) jobs_.RefreshJob(o);
}

}  // namespace rackchaos::cluster
