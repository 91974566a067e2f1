// RegionHealth: whether each region of the simulated cluster is up (a whole region can go down: a site
// outage) and the health probe that shows it. What else regions carry lives with its own part: where
// jobs go (cluster/placement.h, RegionWindows), the stores (cluster/sim_storage.h), the far copies of
// checkpoints (sim_checkpoints.cpp) and the link between regions (sim_region_link.h).
//
// A region outage takes every rack of the region off power (cluster/sim_nodes.h: heartbeats stop, jobs
// hang) and its checkpoint store with it, so a job's acknowledged checkpoints not yet copied to the next
// region are lost: its restart elsewhere goes back to the newest far copy. The copies in flight into it
// are lost too, as when its checkpoint store fails; once it is back the copies waiting for it start and
// the queue is placed again. Two outages of one region overlap (cluster/holds.h): it stays down until the
// last is reverted. What a site sees is each region's health probe (object store read throughput,
// checkpoint store write, the region's endpoints) at its poll, phase drawn per region from the seeded
// generator.
//
// Cost: nothing without regions. Uses: the scheduler (its jobs; lost checkpoints and far copies, the
// queue), nodes (the racks' power). Not thread-safe (the run's event loop).
#pragma once

#include <cstdint>
#include <vector>

#include "cluster/holds.h"
#include "cluster/sim_context.h"
#include "cluster/sim_job.h"

namespace rackchaos::cluster {

class Nodes;
class Scheduler;

class RegionHealth {
 public:
  // `probe_phases`: each region's probe phase is drawn from it, region by region.
  RegionHealth(SimContext& ctx, Rng probe_phases, Scheduler& jobs, Nodes& nodes);
  RegionHealth(const RegionHealth&) = delete;
  RegionHealth& operator=(const RegionHealth&) = delete;

  bool Down(int region) const { return down_[static_cast<size_t>(region)] != 0; }
  const std::vector<uint8_t>& down_flags() const { return down_; }  // per region, for RegionWindows
  Status SetRegionDown(ComponentId region, bool down, FaultId cause);
  // The region's probe reports `part` (the region or one of its stores) at its next poll.
  void Probe(ComponentId part, bool ok);

 private:
  SimContext& ctx_;
  const Topology& topo_;
  Scheduler& jobs_;
  const std::vector<SimJob>& job_list_;
  Nodes& nodes_;
  std::vector<uint8_t> down_;           // per region
  std::vector<Duration> probe_phase_;  // per region
  Holds<ComponentId> region_holds_;
};

}  // namespace rackchaos::cluster
