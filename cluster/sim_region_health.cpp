// A region going down and its health probe (cluster/sim_region_health.h).
#include "cluster/sim_region_health.h"

#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

RegionHealth::RegionHealth(SimContext& ctx, Rng probe_phases, Scheduler& jobs, Nodes& nodes)
    : ctx_(ctx), topo_(ctx.topo()), jobs_(jobs), job_list_(jobs.jobs()), nodes_(nodes) {
  // Regions only: no other stream is drawn from, so plans without regions keep every draw.
  down_.assign(topo_.regions().size(), 0);
  for (size_t k = 0; k < topo_.regions().size(); ++k)
    probe_phase_.push_back(
        Duration{static_cast<int64_t>(probe_phases.Below(static_cast<uint64_t>(ctx.opt().probe_period.us)))});
}

void RegionHealth::Probe(ComponentId part, bool ok) {
  const Duration phase = probe_phase_[static_cast<size_t>(topo_.RegionOf(part))];
  ctx_.Emit(TelemetrySample{part, Metric::kProbeOk, ok ? 1.0 : 0.0},
            SimContext::NextSlot(phase, ctx_.opt().probe_period, ctx_.clock().Now()));
}

Status RegionHealth::SetRegionDown(ComponentId region, bool down, FaultId cause) {
  const Component& c = topo_.at(region);
  if (c.kind != Kind::kRegion) return Status::Invalid(c.name + " is a " + KindName(c.kind) + ", not a region");
  uint8_t& is_down = down_[static_cast<size_t>(c.index)];
  const bool was_down = is_down;
  is_down = (down ? region_holds_.Place(region, region, cause, 0, 1) : region_holds_.Release(region, region, cause, 1)).held;
  const Region& reg = topo_.regions()[static_cast<size_t>(c.index)];
  if (is_down != was_down) {
    ctx_.Physics(region, down ? "region_down" : "region_up", 0, cause);
    if (down)  // the region's checkpoint store goes with it: what was not copied yet is lost
      for (const SimJob& j : job_list_)
        if (j.region == c.index && j.state != JobState::kQueued && j.state != JobState::kFinished)
          jobs_.LoseLocalCheckpoint(j.id, reg.checkpoint_store, cause);
    if (down) jobs_.FarCopiesLost(c.index, cause);  // and so are the copies landing in it
  }
  // The region holds each rack's power off beside the rack's own PSUs: a rack comes back when neither does.
  for (int k = reg.first_rack; k < reg.first_rack + reg.racks; ++k)
    nodes_.HoldRackPower(topo_.racks()[static_cast<size_t>(k)], region, down, cause);
  if (is_down == was_down) return Status::Ok();
  Probe(region, !is_down);
  if (!is_down) {
    jobs_.FarStoreBack(c.index);  // the copies that waited for it
    jobs_.PlaceQueuedJobs();
  }
  return Status::Ok();
}

}  // namespace rackchaos::cluster
