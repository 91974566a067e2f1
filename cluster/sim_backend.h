// SimBackend: a deterministic discrete-event model of the cluster behind the Backend seam.
//
// Physics are solved in closed form between events (thermal trajectories, job progress), threshold
// crossings are scheduled on the virtual clock, and observations are emitted when something changes,
// at the time the site's poll or heartbeat period would reveal it. Ground truth goes to the EventSink
// (PhysicsChanged, JobChanged, Checkpointed); symptoms go to ObservationSinks. Same topology, jobs,
// options and seed give the same events in the same order.
//
// A thin facade: each verb goes to the part that owns the state it changes, and each part reaches the
// others it needs through references its header names (no part sees SimBackend):
//   SimContext    sim_context.h        the borrowed topology, clock and sinks; observations, ground truth
//   placement     placement.h          where jobs sit, which fabric their groups use: pure, no simulator
//   Scheduler     sim_scheduler.h      jobs: placement, progress, step time, hangs, checkpoints, restarts
//   Nodes         sim_nodes.h          trays as machines, GPUs on the bus, heartbeats, rack power, PSUs
//   Thermal       sim_thermal.h        GPU and switch-tray temperatures, power caps, valves, CDUs, pumps
//   Fabric        sim_fabric.h         NVLink ports, switch trays and domains, NICs, leaves, rails, DPUs,
//                                      spines, degraded links, the region link
//   Storage       sim_storage.h        NVMe caches, object stores, checkpoint stores
//   RegionHealth  sim_region_health.h  region outages and health probes
//
// Ownership: the topology, clock and sinks are borrowed and must outlive the backend. Not copyable (the
// parts refer to each other). All calls on the run's event-loop thread.
#pragma once

#include <string>
#include <vector>

#include "cluster/backend.h"
#include "cluster/holds.h"
#include "cluster/job.h"
#include "cluster/placement.h"
#include "cluster/sim_context.h"
#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_region_health.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_storage.h"
#include "cluster/sim_thermal.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/rng.h"

namespace rackchaos::cluster {

class SimBackend : public Backend {
 public:
  using DomainHealth = cluster::DomainHealth;    // sim_fabric.h
  using SpineCrossing = cluster::SpineCrossing;  // placement.h

  SimBackend(const Topology& topology, VirtualClock& clock, Rng rng, EventSink& events, SimOptions options = {});
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  // Adds a job; it is placed and started when Start() runs. Returns its id.
  Result<JobId> AddJob(const JobConfig& config) { return scheduler_.AddJob(config); }
  // Places the jobs and starts heartbeats. Call once, at time zero, before running the clock.
  void Start();

  std::string Name() const override { return "sim"; }
  bool Supports(Verb) const override { return true; }
  Status SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause) override;
  Status SetNicLink(ComponentId nic, bool up, FaultId cause) override;
  // The held value states (cap, valve, link bandwidth, storage read, store rate): sim_holds.cpp.
  Result<double> GetPowerCap(ComponentId gpu) override;
  Status SetPowerCap(ComponentId gpu, double watts, FaultId cause) override;
  Result<double> GetValveOpening(ComponentId valve) override;
  Status SetValveOpening(ComponentId valve, double fraction, FaultId cause) override;
  Status SetLinkBandwidth(ComponentId link, int port, double fraction, FaultId cause) override;
  Status SetStorageRead(ComponentId tray, double fraction, FaultId cause) override;
  Status SetStoreRate(ComponentId store, double fraction, FaultId cause) override;
  Status Release(Held what, Target target, FaultId cause) override;
  Status SetTrayPresent(ComponentId tray, bool present, FaultId cause) override;
  Status SetGpuFailed(ComponentId gpu, bool failed, int xid, FaultId cause) override;
  Status CrashProcesses(ComponentId gpu, FaultId cause) override;
  Status SetComponentFailed(ComponentId component, bool failed, FaultId cause) override;
  Status SetRegionDown(ComponentId region, bool down, FaultId cause) override;
  Status Drain(ComponentId tray, const std::string& reason) override;
  Status Resume(ComponentId tray) override;
  Status ResetGpu(ComponentId gpu) override;
  Status RequeueJob(JobId job, const std::string& reason) override;
  Status RunDiagnostic(ComponentId tray) override;
  Status RebootNode(ComponentId tray) override;
  void Subscribe(ObservationSink* sink) override { ctx_.Subscribe(sink); }
  // The run's lifecycle (cluster/sim_lifecycle.cpp): StartJobs adds the jobs, StartObserving is Start().
  std::string SerialPrefix() const override;
  Status StartJobs(const std::vector<JobConfig>& jobs) override;
  void StartObserving() override;
  int JobsRunning() const override;

  // Inspection for tests and summaries.
  double GpuTemperature(ComponentId gpu) const;
  double SwitchTemperature(ComponentId switch_tray) const { return thermal_.SwitchTemperature(switch_tray); }
  double GpuSpeed(ComponentId gpu) const { ctx_.SettleOwed(); return thermal_.GpuSpeed(gpu); }
  bool GpuAlive(ComponentId gpu) const { return nodes_.GpuAlive(gpu); }
  JobState JobStateOf(JobId job) const { ctx_.SettleOwed(); return scheduler_.jobs()[job].state; }
  double JobSteps(JobId job) const { ctx_.SettleOwed(); return scheduler_.JobSteps(job); }
  const std::vector<ComponentId>& JobTrays(JobId job) const { ctx_.SettleOwed(); return scheduler_.jobs()[job].at.trays.ids(); }
  // The spines a job's traffic crosses at its placement (placement.h, CrossingOf).
  SpineCrossing JobSpineCrossing(JobId job) const;
  // The job a GPU runs, kNoJob if none. O(1).
  JobId JobOfGpu(ComponentId gpu) const { ctx_.SettleOwed(); return scheduler_.seats().JobOfGpu(gpu); }
  // How many requeues took the restart-in-place path (SimOptions::restart_in_place).
  int RestartsInPlace() const { return scheduler_.restarts_in_place(); }
  bool TrayDrained(ComponentId tray) const { return nodes_.TrayDrained(tray); }
  // The free-tray counts the scheduler keeps in step, recounted: "" when they agree. O(trays): for tests.
  std::string RecountFreeTrays() const { ctx_.SettleOwed(); return scheduler_.RecountFreeTrays(); }
  // NVLink domain health as NVIDIA's NMX reports it, and the NVLink bandwidth a GPU of the rack keeps
  // (fraction of nominal; 0 when the domain is UNHEALTHY), for the domain the rack belongs to (one rack,
  // or two for GB200 NVL36x2).
  static const char* DomainHealthName(DomainHealth h) { return cluster::DomainHealthName(h); }
  DomainHealth DomainHealthOf(ComponentId rack) const { return fabric_.DomainHealthOf(rack); }
  double DomainBandwidth(ComponentId rack) const { return fabric_.DomainBandwidth(rack); }

 private:
  // sim_holds.cpp: Ok when `what` applies to the target (a NIC's port becomes -1).
  Status CheckHeld(Held what, Target& target) const;

  // Declared in construction order: the scheduler first (the others read its seats and jobs as they
  // are built); a part may hold a reference to one built after it but does not use it until Start.
  SimContext ctx_;
  Scheduler scheduler_;
  Nodes nodes_;
  Thermal thermal_;
  Fabric fabric_;
  Storage storage_;
  RegionHealth regions_;
};

}  // namespace rackchaos::cluster
