// A job as the simulator's scheduler runs it (cluster/sim_scheduler.h owns them; the other parts read
// them through `const std::vector<SimJob>&`, indexed by JobId), and who sits on which tray (SeatMap).
//
// Progress is analytic between events: `steps` at `last_update`, advancing at 1 / step_time_s while
// running and not blocked by a checkpoint. The checkpoint fields follow one snapshot from its write
// (pending_*) through its local acknowledgement (ckpt_steps, ack_total) to its far copy in the next region
// (copying_*, remote_*).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "cluster/job.h"
#include "cluster/placement.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "core/event.h"

namespace rackchaos::cluster {

struct SimJob {
  JobConfig cfg;
  JobId id = kNoJob;
  JobState state = JobState::kQueued;
  Placement at;  // trays, GPUs placed and the fabric its groups use (cluster/placement.h)
  Duration report_phase{};
  double steps = 0, ckpt_steps = 0;
  double step_time_s = 0, speed = 1;
  double stall_s = 0;             // of each step, waiting on the storage path (sim_storage.cpp)
  Duration running_since_ckpt{};  // running time whose work a restart would throw away
  Duration until_ckpt{};          // running time left until the next checkpoint snapshot
  Time last_update{};
  bool fatal = false;  // hung on a lost GPU/tray: only a restart helps
  bool blocked = false;          // running, training stopped for a checkpoint (checkpoint_blocking)
  bool restart_stalled = false;  // hung by a failure during its restart: once it clears, the restart starts over
  bool started_once = false;
  bool domain_lost = false;     // requeued from a lost NVLink domain: spare racks may take it
  size_t grow_note = SIZE_MAX;  // free trays when it last noted it could not grow back in whole blocks
  int region = -1;                  // the region it was last placed in (-1: never placed)
  Time segment_start{};             // when the current running stretch began
  FaultId cause = kNoFault;         // the fault impairing it now
  FaultId shrink_cause = kNoFault;  // the fault whose requeue left it shrunk
  double pending_steps = 0;
  Duration pending_running{};
  // The checkpoint store (sim_checkpoints.cpp): running time ever, and the value of it at the snapshot of
  // the acknowledged checkpoint, of the one being written, of the newest far copy and of the one in flight.
  Duration running_total{}, ack_total{}, pending_total{}, remote_total{}, copying_total{};
  double remote_steps = 0, copying_steps = 0;
  TimerId copy_timer = 0;     // not stopped with the job: the copy of an acknowledged checkpoint goes on
  bool copy_on_link = false;  // the far copy in flight shares the region link (sim_region_link.h)
  int copy_to = -1;           // the region the copy in flight goes to (-1: none known, no regions)
  // Of running_since_ckpt, what the newest snapshot would have kept had the failed checkpoint store
  // acknowledged it, and that store's fault: rework charged to the store.
  Duration unsafe_running{};
  FaultId unsafe_cause = kNoFault;
  // The job's trays that are not usable now (drained, gone or booting), which it will not get back on a
  // restart in place (sim_restart.cpp).
  std::set<ComponentId> lost_seats;
  int spare_trays = 0;  // hot spare trays among its trays
  TimerId ckpt_timer = 0, ack_timer = 0, timeout_timer = 0, start_timer = 0, report_timer = 0, block_timer = 0;
};

// Who sits on each tray, per tray slot, and which trays are free (TrayPool). The scheduler writes it;
// every other part reads it. O(1), inline: these run for every GPU of a job on every refresh. A restart of
// a 25,000-tray job walks the seats for every tray, so a seat is 8 bytes.
class SeatMap {
 public:
  SeatMap(const Topology& topo, int spare_racks, const std::vector<int>& region_spare_racks)
      : topo_(topo), seat_(topo.trays().size()), usable_(topo.trays().size(), 1),
        pool_(topo, spare_racks, region_spare_racks) {}

  // The job on the tray in slot k (kNoJob: none) and how many of its GPUs it uses (the first ones).
  JobId job_at(size_t k) const { return seat_[k].job; }
  int gpus_at(size_t k) const { return seat_[k].job_gpus; }
  JobId JobOnTray(ComponentId tray) const { return seat_[topo_.TraySlot(tray)].job; }
  // The job a GPU runs, kNoJob if none.
  JobId JobOfGpu(ComponentId gpu) const {
    const SeatOf& t = seat_[topo_.TraySlot(topo_.TrayOf(gpu))];
    return t.job != kNoJob && topo_.at(gpu).index < t.job_gpus ? t.job : kNoJob;
  }
  // Present, booted and undrained, as of the last SetUsable.
  bool usable(size_t k) const { return usable_[k] != 0; }
  const TrayPool& pool() const { return pool_; }

  // Both keep the pool's free flag (usable and nobody on it) and counts in step.
  void Seat(size_t k, JobId job, int gpus) {
    seat_[k] = {job, gpus};
    pool_.SetFree(k, usable_[k] && job == kNoJob);
  }
  void SetUsable(size_t k, bool usable) {
    usable_[k] = usable;
    pool_.SetFree(k, usable && seat_[k].job == kNoJob);
  }

 private:
  struct SeatOf {
    JobId job = kNoJob;
    int32_t job_gpus = 0;
  };
  const Topology& topo_;
  std::vector<SeatOf> seat_;
  std::vector<uint8_t> usable_;
  TrayPool pool_;
};

}  // namespace rackchaos::cluster
