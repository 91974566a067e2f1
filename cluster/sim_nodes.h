// Nodes: the compute trays as machines (present, booting, drained; their agents' heartbeats and poll
// phases), each GPU on the bus or not (failed, or shut down by heat), and each rack's power (its PSUs
// behind the bus bar). One part, because these are what "the node is up" means to every other part:
// GpuAlive and TrayUsable read them, and power reaches the trays through presence.
//
// - A tray is present while nothing holds it out (cluster/holds.h: a tray_pull, its rack's power);
//   coming back it boots for the model's boot time, then its GPUs come back cold and reset and its
//   heartbeats resume. A reboot is a boot without leaving.
// - A rack's PSUs share its bus bar: while what is left carries the GPUs at TDP nothing changes but the
//   PSU's own status; below that every tray of the rack loses power. A region outage (sim_region_health.h)
//   holds the rack's power off beside its PSUs.
// - What a site sees: heartbeats that stop and resume on the tray's phase, Xid lines in the kernel log,
//   the shelf BMC's PSU status, and the tray's diagnostic.
//
// Uses: the scheduler (its seats; TouchTray after a tray's usability changes, RefreshJob, PlaceQueuedJobs),
// thermal (re-solve GPUs that come and go; reset only below slowdown; the diagnostic's power and flow
// checks; switch trays' power), fabric (NVLink domain health; the diagnostic's port and NIC checks).
// Not thread-safe (the run's event loop).
#pragma once

#include <string>
#include <vector>

#include "cluster/holds.h"
#include "cluster/sim_context.h"

namespace rackchaos::cluster {

class Fabric;
class Scheduler;
class SeatMap;
class Thermal;

class Nodes {
 public:
  // `phases`: each tray's heartbeat and telemetry phases are drawn from it, tray by tray.
  Nodes(SimContext& ctx, Rng phases, Scheduler& jobs, Thermal& thermal, Fabric& fabric);
  Nodes(const Nodes&) = delete;
  Nodes& operator=(const Nodes&) = delete;

  // ---- state, O(1)
  bool TrayPresent(ComponentId tray) const { return node(tray).present; }
  bool TrayBooting(ComponentId tray) const { return node(tray).booting; }
  bool TrayDrained(ComponentId tray) const { return node(tray).drained; }
  // Present, booted and undrained: the scheduler may place on it.
  bool TrayUsable(ComponentId tray) const {
    const Node& t = node(tray);
    return t.present && !t.booting && !t.drained;
  }
  FaultId PresenceCause(ComponentId tray) const { return node(tray).presence_cause; }
  // The tray's exporter polls on this phase (telemetry, and link counters at the link period).
  Duration PollPhase(ComponentId tray) const { return node(tray).poll_phase; }
  // The same by tray slot (an index of topology().trays()), for the telemetry poll of every tray in turn.
  bool TrayPresentAtSlot(size_t slot) const { return node_[slot].present; }
  bool TrayBootingAtSlot(size_t slot) const { return node_[slot].booting; }
  Duration PollPhaseAtSlot(size_t slot) const { return node_[slot].poll_phase; }
  bool GpuAlive(ComponentId gpu) const {
    const Node& t = node_[topo_.TraySlot(topo_.TrayOf(gpu))];
    const Bus& g = bus_[topo_.GpuSlot(gpu)];
    return t.present && !t.booting && !g.shutdown && !g.failed;
  }
  bool GpuFailed(ComponentId gpu) const { return bus_[topo_.GpuSlot(gpu)].failed; }
  bool GpuShutdown(ComponentId gpu) const { return bus_[topo_.GpuSlot(gpu)].shutdown; }
  // By GPU slot (Topology::GpuSlot), for a loop over a tray's GPUs that knows their slots: on a present,
  // booted tray a GPU is alive unless it is failed or shut down.
  bool GpuOffBusAt(size_t slot) const { return bus_[slot].failed || bus_[slot].shutdown; }
  bool GpuShutdownAt(size_t slot) const { return bus_[slot].shutdown; }
  FaultId FailCause(ComponentId gpu) const { return bus_[topo_.GpuSlot(gpu)].fail_cause; }
  bool RackPowered(size_t rack) const { return power_[rack].powered; }
  FaultId PowerCause(size_t rack) const { return power_[rack].cause; }  // the fault holding it off
  // Thermal shutdown: the GPU falls off the bus until a boot or a reset brings it back.
  void SetShutdown(ComponentId gpu) { bus_[topo_.GpuSlot(gpu)].shutdown = true; }

  // ---- verbs (Backend's, for compute trays and GPUs; the facade checks the kind where it dispatches)
  Status SetTrayPresent(ComponentId tray, bool present, FaultId cause);
  Status RebootNode(ComponentId tray);
  Status SetGpuFailed(ComponentId gpu, bool failed, int xid, FaultId cause);
  void Drain(ComponentId tray);
  void Resume(ComponentId tray);
  Status ResetGpu(ComponentId gpu);
  // The node's own test, its DiagnosticResult after the model's diagnostic time.
  void RunDiagnostic(ComponentId tray);
  // A PSU or a whole shelf fails or is repaired.
  Status SetPsus(ComponentId psu_or_shelf, bool failed, FaultId cause);
  // A region outage holds the rack's power off (holder: the region), or releases its hold.
  void HoldRackPower(ComponentId rack, ComponentId holder, bool off, FaultId cause);

 private:
  struct Node {
    bool present = true, booting = false, drained = false;
    FaultId presence_cause = kNoFault;
    Duration hb_phase{}, poll_phase{};
    TimerId boot_timer = 0;
  };
  struct Bus {
    bool failed = false;    // a hardware failure (Xid 79, 48, 95, 119...) until repaired
    bool shutdown = false;  // thermal shutdown until a boot or reset
    FaultId fail_cause = kNoFault;
  };
  struct Power {
    bool powered = true;
    FaultId cause = kNoFault;      // the worst hold's (power_holds_)
    std::vector<bool> psu_failed;  // per PSU of the rack, in shelf order
  };
  const Node& node(ComponentId tray) const { return node_[topo_.TraySlot(tray)]; }
  Node& node(ComponentId tray) { return node_[topo_.TraySlot(tray)]; }
  Power& power_of(ComponentId id) { return power_[static_cast<size_t>(topo_.at(id).rack)]; }

  // The tray is present while nothing holds it out; `state` from presence_holds_.
  void ApplyTrayPresent(ComponentId tray, const Holds<ComponentId>::State& state, FaultId cause);
  void Boot(ComponentId tray);
  void HeartbeatsStopped(ComponentId tray);
  void HeartbeatsResumed(ComponentId tray);
  // Rack power: power_holds_' state takes effect; power lost or back on every tray of the rack.
  void ApplyRackPower(ComponentId rack, const Holds<ComponentId>::State& state, FaultId cause);
  void SetRackPowered(ComponentId rack, bool powered, FaultId cause);

  SimContext& ctx_;
  const Topology& topo_;
  VirtualClock& clock_;
  const SimOptions& opt_;
  Scheduler& jobs_;
  const SeatMap& seats_;
  Thermal& thermal_;
  Fabric& fabric_;
  std::vector<Node> node_;  // per tray slot
  std::vector<Bus> bus_;    // per GPU slot
  std::vector<Power> power_;  // per rack
  // Who holds a tray out (the tray for a tray_pull, its rack for a power loss) and a rack's power off
  // (the rack for its PSUs, its region for an outage).
  Holds<ComponentId> presence_holds_, power_holds_;
};

}  // namespace rackchaos::cluster
