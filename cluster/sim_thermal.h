// Thermal: temperatures and what sets them. GPUs (power cap, power drawn, throttling, the first-order
// trajectories of cluster/thermal.h), the coolant (each tray's valve, each rack's CDU and its pumps),
// NVLink switch trays' temperatures, and the telemetry that reveals them (DCGM samples per tray, a
// switch tray's controller). Solved in closed form between events; a threshold crossing (slowdown,
// shutdown) is scheduled on the clock.
//
// The quiet-GPU model: a GPU at full coolant flow, uncapped, alive, not throttling and below slowdown
// cannot reach a threshold, so it has no trajectory of its own. Its temperature is its job's reference
// trajectory (JobHeat::env) plus what earlier jobs left on its tray (TrayCarry, decaying) plus its own
// offset, all decaying with one time constant (the model is linear). A job's start or stop then costs
// O(1) per tray, not per GPU; only "loud" GPUs are re-solved one by one.
//
// Files: sim_thermal.cpp (GPU trajectories, telemetry), sim_thermal_jobs.cpp (jobs' reference
// trajectories and the trays' carry), sim_cooling.cpp (power cap, valves, CDU, pumps, leaks),
// sim_switch_thermal.cpp (switch trays).
// Uses: the scheduler's seats and jobs (which job a GPU runs and whether it runs; RefreshJob when a
// GPU's speed changes, NoteGpu to keep its index of odd GPUs), nodes (GPUs on the bus, trays present,
// poll phases, rack power; a thermal shutdown takes the GPU off the bus), fabric (a switch tray's
// slowdown and shutdown change its NVLink domain). Not thread-safe (the run's event loop).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "cluster/holds.h"
#include "cluster/sim_context.h"
#include "cluster/sim_job.h"
#include "cluster/thermal.h"

namespace rackchaos::cluster {

class Fabric;
class Nodes;
class Scheduler;

class Thermal {
 public:
  Thermal(SimContext& ctx, Scheduler& jobs, Nodes& nodes, Fabric& fabric);
  Thermal(const Thermal&) = delete;
  Thermal& operator=(const Thermal&) = delete;

  // ---- GPUs
  double Temperature(ComponentId gpu, Time now) const;
  // Relative compute speed: 0 when off the bus; below 1 when capped or throttling (SpeedAtPower).
  double GpuSpeed(ComponentId gpu) const;
  double CapOf(ComponentId gpu) const { return heat(gpu).cap_w; }
  double BaselineCapOf(ComponentId gpu) const { return heat(gpu).baseline_cap_w; }
  bool Throttling(ComponentId gpu) const { return heat(gpu).throttling; }
  // The cooling fault heating the GPU (its valve's, else its CDU's), and the fault behind its speed.
  FaultId ThermalCause(ComponentId gpu) const { return heat(gpu).thermal_cause; }
  FaultId SpeedCause(ComponentId gpu) const {
    const GpuHeat& g = heat(gpu);
    return g.throttling ? g.thermal_cause : g.cap_cause;
  }
  // Re-solves the GPU after anything that changes its power or cooling and schedules its next crossing.
  void UpdateThermal(ComponentId gpu);
  // A boot or reset brings the GPU back out of throttling (the caller re-solves it).
  void EndThrottle(ComponentId gpu) { heat(gpu).throttling = false; }
  // Polls the tray's telemetry at its next slot, and again while something there changes.
  void WatchTelemetry(ComponentId tray);

  // ---- held states (cluster/holds.h; the facade checked the target): power cap and valve opening.
  // A Set* with a fault places its hold, without one (kNoFault) it is the site's own setting.
  void SetPowerCap(ComponentId gpu, double watts, FaultId cause);  // watts within [min power, TDP]
  void ReleasePowerCap(ComponentId gpu, FaultId cause);
  double ValveNow(ComponentId valve) const;  // a switch tray stands for its own valve
  void SetValveOpening(ComponentId valve, double fraction, FaultId cause);  // fraction within [0, 1]
  void ReleaseValve(ComponentId valve, FaultId cause);

  // ---- coolant (sim_cooling.cpp)
  double TrayFlow(ComponentId tray) const;  // the tray's valve opening times its CDU's flow
  double TrayFlowAtSlot(size_t slot) const { return tray_[slot].valve * cdu_[tray_[slot].rack].flow; }
  double CduFlow(size_t rack) const { return cdu_[rack].flow; }
  Status SetCduFailed(ComponentId cdu, bool failed, FaultId cause);
  Status SetPump(ComponentId pump, bool failed, FaultId cause);
  Status SetLeak(ComponentId valve, bool leaking, FaultId cause);

  // ---- switch trays (sim_switch_thermal.cpp)
  double SwitchTemperature(ComponentId sw) const;
  // Every switch tray of the rack after its CDU's flow or its power changed.
  void UpdateRackSwitchThermal(ComponentId rack, FaultId cause);
  FaultId SwitchHeatCause(ComponentId sw) const;  // the fault heating it while slow or hot
  // The cooling fault behind the switch tray at `position` of rack `rack` (kNoFault before any change).
  FaultId SwitchHeatFault(size_t rack, size_t position) const;

  // ---- jobs (sim_thermal_jobs.cpp)
  void AddJob();                   // the next JobId's reference trajectory and carry log
  void JobPlaced(JobId job);       // its reference trajectory starts at idle steady state now
  void JobPowerChanged(JobId job);  // it started or stopped drawing power: retarget, re-solve loud GPUs
  std::vector<ComponentId> LoudGpusOf(JobId job) const;
  // The job leaves its trays (before the scheduler unseats them): what its reference trajectory holds
  // above idle stays on their quiet GPUs and decays from here.
  void LeaveTrays(JobId job, const TrayList& trays);
  // A restart in place: logs the release the trays it keeps owe (applied by SettleCarry), and restarts
  // the job's reference trajectory at idle now.
  void LogCarryStep(JobId job);
  // Applies the carry steps the seat's job logged that tray slot k has not taken yet. Const: a cache,
  // called before the carry is read.
  void SettleCarry(size_t k) const;
  // A new job sits on tray slot k: it owes none of that job's earlier steps.
  void StartCarry(size_t k, JobId job) { carry_[k].settled = static_cast<uint32_t>(job_heat_[job].carry_log.size()); }

 private:
  struct GpuHeat {  // 96 bytes; what a quiet GPU's telemetry poll reads first, in one 32-byte run
    double cap_w = 0;
    double off = 0;  // its own offset at `off_at`
    Time off_at{};
    bool throttling = false;
    bool quiet = true;  // see above: no trajectory of its own
    double power_w = 0;
    double baseline_cap_w = 0;
    ThermalState thermal;  // the trajectory of a GPU that is not quiet
    TimerId thermal_timer = 0;
    FaultId cap_cause = kNoFault, thermal_cause = kNoFault;
  };
  struct TrayCooling {
    double valve = 1;
    FaultId valve_cause = kNoFault;
    uint32_t rack = 0;  // its rack's index (its CDU's in cdu_), kept here: TrayFlow reads it with the valve
    TimerId telemetry_timer = 0;
  };
  struct TrayCarry {  // what earlier jobs left on the tray's quiet GPUs above idle, at `carry_at`
    double carry = 0;
    Time carry_at{};
    uint32_t settled = 0;  // how many steps of its job's carry_log are in `carry` (SettleCarry)
  };
  struct Cdu {
    double flow = 1;  // fraction of nominal coolant flow its pumps deliver
    bool failed = false;
    uint64_t pump_failed = 0;  // bit per pump
    FaultId cause = kNoFault;
  };
  struct JobHeat {
    ThermalState env;  // a quiet GPU of this job that was at idle steady state when the job was placed
    // Each release in place whose carry the kept trays still owe (sim_restart.cpp).
    struct CarryStep {
      Time at;
      double residual;
      double decay;  // Decay(the previous step's `at`, at): the exp every tray kept since then shares
    };
    std::vector<CarryStep> carry_log;
  };
  struct SwitchHeat {
    ThermalState th;
    double valve = 1;
    TimerId timer = 0, poll = 0;  // next threshold crossing; next telemetry poll while it changes
    bool slow = false, hot = false;
    FaultId cause = kNoFault;  // the cooling fault heating it
  };

  GpuHeat& heat(ComponentId gpu) { return gpu_[topo_.GpuSlot(gpu)]; }
  const GpuHeat& heat(ComponentId gpu) const { return gpu_[topo_.GpuSlot(gpu)]; }
  TrayCooling& cooling_of(ComponentId id) { return tray_[topo_.TraySlot(topo_.TrayOf(id))]; }
  Cdu& cdu_of(ComponentId id) { return cdu_[static_cast<size_t>(topo_.at(id).rack)]; }

  // sim_thermal.cpp
  void OnThermalCrossing(ComponentId gpu);
  void OnTelemetryTick(size_t slot);  // the tray at topology().trays()[slot]
  void WatchTelemetryAtSlot(size_t slot);  // WatchTelemetry of the tray at topology().trays()[slot]
  // Temperature of a quiet GPU `g` on tray slot `k`, running `job` (kNoJob: none).
  // `ceiling`, when given: the highest it can reach from now on with nothing changing (each term decays
  // or approaches its steady state monotonically, so the sum stays below their bounds' sum).
  double QuietTemperature(const GpuHeat& g, size_t k, JobId job, Time now, double* ceiling = nullptr) const;
  double GpuDemand(ComponentId gpu) const;
  // Its power cap holds a running GPU below what it would draw (DCGM's SW power cap clock event).
  bool PowerCapped(ComponentId gpu) const;
  double PowerOf(ComponentId gpu) const;
  double Decay(Time since, Time now) const;  // e^(-(now - since) / tau) at full flow
  // sim_cooling.cpp: a held state's new value takes effect (`state` from its Holds).
  void ApplyPowerCap(ComponentId gpu, const Holds<ComponentId>::State& state, FaultId cause);
  void ApplyValve(ComponentId valve, const Holds<ComponentId>::State& state, FaultId cause);
  Status SetCdu(ComponentId cdu, double flow, FaultId cause);
  double CduFlowOf(const Cdu& c) const;  // 0 while failed, else the running pumps over those needed (at most 1)
  // sim_switch_thermal.cpp
  SwitchHeat& HeatOf(ComponentId sw);
  double SwitchConductance(ComponentId sw, double valve) const;
  double SwitchValve(ComponentId sw) const;
  void ApplySwitchValve(ComponentId sw, const Holds<ComponentId>::State& state, FaultId cause);
  void UpdateSwitchThermal(ComponentId sw, FaultId cause);
  void OnSwitchCrossing(ComponentId sw);
  void WatchSwitchTelemetry(ComponentId sw);
  void OnSwitchTelemetryTick(ComponentId sw);

  SimContext& ctx_;
  const Topology& topo_;
  VirtualClock& clock_;
  const SimOptions& opt_;
  Scheduler& jobs_;
  const SeatMap& seats_;
  const std::vector<SimJob>& job_list_;
  Nodes& nodes_;
  Fabric& fabric_;
  double idle_steady_c_ = 0, full_conductance_ = 0, full_tau_s_ = 1;
  // Below this a GPU's trajectory interests no reader (SimOptions::telemetry_interest_c, capped at the
  // slowdown temperature, less the 0.1 C a sample is rounded to): its tray need not be polled for it.
  double uninteresting_below_c_ = 0;
  bool quiet_possible_ = false;  // a GPU at TDP and full flow stays below slowdown
  // The i-th GPU of tray slot k has GPU slot k x gpus_per_tray + i (the topology builds both in that
  // order; checked once): a telemetry poll then finds a tray's GPU states without looking up each GPU.
  bool slots_by_tray_ = false;
  std::vector<GpuHeat> gpu_;      // per GPU slot
  std::set<ComponentId> loud_gpus_;  // GPUs that are not quiet
  std::vector<TrayCooling> tray_;  // per tray slot
  mutable std::vector<TrayCarry> carry_;  // per tray slot; SettleCarry brings it up to date
  std::vector<Cdu> cdu_;           // per rack
  std::vector<JobHeat> job_heat_;  // per job
  std::vector<SwitchHeat> switch_heat_;  // per rack x switch tray; empty until a switch tray's flow first changes
  // Overlapping faults (cluster/holds.h): who holds each GPU's power cap and each valve's opening.
  Holds<ComponentId> cap_holds_, valve_holds_;
  // SettleCarry's last Decay(since, at), for trays seated together, and its last whole settle: trays
  // kept together since a restart owe the same steps from the same carry, so a full release of a
  // 25,000-tray job walks the steps once per distinct carry, not per tray.
  mutable Time settle_since_{}, settle_at_{};
  mutable double settle_decay_ = 1;
  struct SettleMemo {
    JobId job = kNoJob;
    uint32_t from = 0, to = 0;
    uint64_t carry_bits = 0;  // the carry before, bit for bit
    Time carry_at{}, at{};
    double carry = 0;  // after
  };
  mutable SettleMemo settle_memo_;
  // Temperature's last job trajectory: a telemetry tick asks it for each GPU of a tray, most of one job
  // at one instant. Valid for the same trajectory (every field, bit for bit) and instant: the same exp.
  struct EnvMemo {
    ThermalState env{0, Time{-1}, 0, 1};
    Time now{-1};
    double value = 0;
  };
  mutable EnvMemo env_memo_;
};

}  // namespace rackchaos::cluster
