// SimBackend: a deterministic discrete-event model of the cluster behind the Backend seam.
//
// Physics are solved in closed form between events (thermal trajectories, job progress), threshold
// crossings are scheduled on the virtual clock, and observations are emitted when something changes,
// at the time the site's poll or heartbeat period would reveal it. Ground truth goes to the EventSink
// (PhysicsChanged, JobChanged, Checkpointed); symptoms go to ObservationSinks. Same topology, jobs,
// options and seed give the same events in the same order.
//
// Ownership: the topology, clock and sinks are borrowed and must outlive the backend.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/backend.h"
#include "cluster/holds.h"
#include "cluster/job.h"
#include "cluster/thermal.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/rng.h"

namespace rackchaos::cluster {

struct SimOptions {
  Duration heartbeat_period = Duration::Seconds(10);  // node agent heartbeat
  Duration telemetry_period = Duration::Seconds(10);  // DCGM field polling as exported
  Duration link_poll_period = Duration::Seconds(1);   // IB/NVLink counters visible within ~1 s (RACK-FACTS)
  Duration log_delay = Duration::Seconds(2);          // kernel log line to the collector
  // Step reports: a job's profiler reports every period while some rank is off nominal speed (and once
  // more when they are all back), listing those ranks and summarizing the rest (observation.h); a job
  // whose ranks all run at full speed reports nothing the straggler test could flag, so it costs nothing.
  // The report phase is drawn per job from the seeded generator.
  Duration step_report_period = Duration::Seconds(60);
  double step_jitter = 0.01;  // relative stddev of a rank's compute time in one report
  // remediation.shrink: a requeued elastic job too big for the free trays restarts on fewer GPUs (down
  // to its min_gpus), its steps gpus/placed_gpus times longer; it grows back when trays are free again.
  bool shrink_elastic = false;
  // cluster.spares.racks: the last N racks are spare racks. Jobs are placed on them only when they come
  // back to the queue from a lost NVLink domain (switch tray UNHEALTHY, CDU or pumps, power beyond the
  // shelves' redundancy); any other requeue waits for regular trays or hot spares.
  int spare_racks = 0;
  // With regions (Topology::regions()): the spare racks of each region, its last N racks (spare_racks is
  // then their sum). Jobs are placed inside one region, their own region first (sim_regions.cpp).
  std::vector<int> region_spare_racks;
  // A region's health probe (object store, checkpoint store, the region itself) runs every period, at a
  // phase drawn per region from the seeded generator [guess: a load balancer's 10 s health check].
  Duration probe_period = Duration::Seconds(10);
  // cluster.region_link_gbytes_per_s: the link from each region to the next, shared by the far copies
  // of checkpoints with a size (JobConfig::checkpoint_size_gb); 0 = each copy takes checkpoint_copy.
  double region_link_gbytes_per_s = 0;
  // cluster.region_link_background_percent / 100: the share of each region link other traffic takes,
  // from 0 (the copies have it all) to below 1.
  double region_link_background = 0;
  // cluster.object_store_gbytes_per_s: each region's object store read capacity, shared by the jobs
  // streaming from it (sim_region_link.cpp); 0 = unlimited (each GPU reads at the catalogue's rate).
  double object_store_gbytes_per_s = 0;
  // A requeued job that gets back all its trays but a few touches only those (sim_restart.cpp), with
  // the same result as releasing and placing every tray. Tests turn it off to compare the two.
  bool restart_in_place = true;
};

class SimBackend : public Backend {
 public:
  SimBackend(const Topology& topology, VirtualClock& clock, Rng rng, EventSink& events, SimOptions options = {});

  // Adds a job; it is placed and started when Start() runs. Returns its id.
  Result<JobId> AddJob(const JobConfig& config);
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
  Status SetComponentFailed(ComponentId component, bool failed, FaultId cause) override;  // sim_domains.cpp
  Status SetRegionDown(ComponentId region, bool down, FaultId cause) override;        // sim_regions.cpp
  Status Drain(ComponentId tray, const std::string& reason) override;
  Status Resume(ComponentId tray) override;
  Status ResetGpu(ComponentId gpu) override;
  Status RequeueJob(JobId job, const std::string& reason) override;
  Status RunDiagnostic(ComponentId tray) override;
  Status RebootNode(ComponentId tray) override;
  void Subscribe(ObservationSink* sink) override { sinks_.push_back(sink); }

  // Inspection for tests and summaries.
  double GpuTemperature(ComponentId gpu) const;
  double SwitchTemperature(ComponentId switch_tray) const;  // sim_switch_thermal.cpp
  double GpuSpeed(ComponentId gpu) const;
  bool GpuAlive(ComponentId gpu) const;
  JobState JobStateOf(JobId job) const { return jobs_[job].state; }
  double JobSteps(JobId job) const;
  const std::vector<ComponentId>& JobTrays(JobId job) const { return jobs_[job].trays.ids(); }
  // The spines a job's traffic crosses at its placement, the rule a lost spine slows it by (sim_spines.cpp):
  // per kind of group, the pods whose spines carry its groups that span leaf groups, and whether one
  // spans pods (the super-spines). A grouped job: only its DP and PP groups that span leaf groups;
  // else the whole job, when its trays span leaf groups.
  struct SpineCrossing {
    struct Groups {
      std::vector<int> pods;  // sorted; empty: these groups cross no spine
      bool spans_pods = false;
    };
    Groups dp, pp;  // a job without parallelism: all its scale-out traffic as dp
  };
  SpineCrossing JobSpineCrossing(JobId job) const { return CrossingOf(jobs_[job]); }
  // The job a GPU runs, kNoJob if none. O(1).
  JobId JobOfGpu(ComponentId gpu) const;
  // How many requeues took the restart-in-place path (SimOptions::restart_in_place).
  int RestartsInPlace() const { return restarts_in_place_; }
  bool TrayDrained(ComponentId tray) const { return tray_[slot(tray)].drained; }
  // The free-tray counts TouchTray keeps in step, recounted from the trays themselves: "" when they
  // agree, else what differs. O(trays): for tests.
  std::string RecountFreeTrays() const;  // sim_spare_racks.cpp
  // NVLink domain health as NVIDIA's NMX reports it, and the NVLink bandwidth a GPU of the rack keeps
  // (fraction of nominal; 0 when the domain is UNHEALTHY), for the domain the rack belongs to (one rack,
  // or two for GB200 NVL36x2). sim_domains.cpp.
  enum class DomainHealth { kHealthy, kDegraded, kBandwidth, kUnhealthy };
  static const char* DomainHealthName(DomainHealth h);
  DomainHealth DomainHealthOf(ComponentId rack) const;
  double DomainBandwidth(ComponentId rack) const;

 private:
  struct Gpu {
    double cap_w = 0, baseline_cap_w = 0;
    uint64_t nvlink_down = 0;  // bit per port
    bool shutdown = false;
    bool failed = false;  // a hardware failure (Xid 79, 48, 95, 119...) until repaired
    bool throttling = false;
    double power_w = 0;
    // A quiet GPU (full coolant flow, uncapped, alive, not throttling, below slowdown) cannot reach a
    // threshold, so it has no trajectory of its own: its temperature is its job's reference trajectory
    // plus its tray's carried residual plus its own offset `off` at `off_at`, all decaying with the same
    // time constant (the model is linear). Job starts and stops then cost O(1), not O(GPUs).
    bool quiet = true;
    double off = 0;
    Time off_at{};
    ThermalState thermal;  // the trajectory of a GPU that is not quiet
    TimerId thermal_timer = 0;
    FaultId cap_cause = kNoFault, link_cause = kNoFault, thermal_cause = kNoFault, fail_cause = kNoFault;
  };
  struct Tray {
    bool present = true, booting = false, drained = false;
    double valve = 1;
    FaultId valve_cause = kNoFault, presence_cause = kNoFault;
    Duration hb_phase{}, poll_phase{};
    TimerId telemetry_timer = 0, boot_timer = 0;
    std::vector<bool> nic_up;
    std::vector<FaultId> nic_cause;
  };
  struct Job {
    JobConfig cfg;
    JobId id = kNoJob;
    JobState state = JobState::kQueued;
    TrayList trays;  // sorted; its GPUs are the first `placed_gpus` GPUs of these trays
    int placed_gpus = 0;
    Duration report_phase{};
    ThermalState env;  // a quiet GPU of this job that was at idle steady state when the job was placed
    double steps = 0, ckpt_steps = 0;
    double step_time_s = 0, speed = 1;
    double stall_s = 0;             // of each step, waiting on the storage path (sim_storage.cpp)
    Duration running_since_ckpt{};  // running time whose work a restart would throw away
    Duration until_ckpt{};          // running time left until the next checkpoint snapshot
    Time last_update{};
    bool fatal = false;  // hung on a lost GPU/tray: only a restart helps
    bool started_once = false;
    bool domain_lost = false;         // requeued from a lost NVLink domain: spare racks may take it
    // Per kind of group (kDp, kPp) of a grouped job, from the placement (sim_parallel.cpp,
    // NoteGroupFabrics): the NVLink domains holding a group that stays inside one domain (it sends over
    // NVLink) and those holding a rank of a group that crosses domains (its NVLink hop there, then the
    // NICs), both sorted; the pods holding ranks of its groups that span leaf groups (their traffic
    // crosses the spines); some group spans pods (the super-spines).
    struct KindPlacement {
      std::vector<int> nvlink_domains, hop_domains;
      bool spans_pods = false;
      std::vector<int> spine_pods;
      bool crosses() const { return !hop_domains.empty(); }
    };
    std::array<KindPlacement, 2> kinds;
    size_t grow_note = SIZE_MAX;  // free trays when it last noted it could not grow back in whole blocks
    int region = -1;                  // the region it was last placed in (-1: never placed)
    Time segment_start{};             // when the current running stretch began
    FaultId cause = kNoFault;         // the fault impairing it now
    FaultId shrink_cause = kNoFault;  // the fault whose requeue left it shrunk
    double pending_steps = 0;
    Duration pending_running{};
    // The checkpoint store (sim_storage.cpp): running time ever, and the value of it at the snapshot of
    // the acknowledged checkpoint, of the one being written, of the newest far copy and of the one in flight.
    Duration running_total{}, ack_total{}, pending_total{}, remote_total{}, copying_total{};
    double remote_steps = 0, copying_steps = 0;
    TimerId copy_timer = 0;  // not stopped with the job: the copy of an acknowledged checkpoint goes on
    bool copy_on_link = false;  // the far copy in flight shares the region link (sim_region_link.cpp)
    int copy_to = -1;           // the region the copy in flight goes to (-1: none known, no regions)
    // Of running_since_ckpt, what the newest snapshot would have kept had the failed checkpoint store
    // acknowledged it, and that store's fault (sim_regions.cpp): rework charged to the store.
    Duration unsafe_running{};
    FaultId unsafe_cause = kNoFault;
    // Restarts in place (sim_restart.cpp): each release whose carry the kept trays still owe, and the
    // job's trays that are not usable now (drained, gone or booting), which it will not get back.
    struct CarryStep {
      Time at;
      double residual;
      double decay;  // Decay(the previous step's `at`, at): the exp every tray kept since then shares
    };
    std::vector<CarryStep> carry_log;
    std::set<ComponentId> lost_seats;
    int spare_trays = 0;  // hot spare trays among its trays
    TimerId ckpt_timer = 0, ack_timer = 0, timeout_timer = 0, start_timer = 0, report_timer = 0;
  };

  // Who sits on a tray, per tray slot, apart from Tray: a restart of a 25,000-tray job walks these for
  // every tray, and 24 bytes a tray stay in cache where Tray (phases, timers, two vectors) does not.
  struct Seat {
    JobId job = kNoJob;
    int32_t job_gpus = 0;  // GPUs of this tray the job uses (the first ones; a job's last tray may be partial)
    double carry = 0;      // what earlier jobs left on the tray's quiet GPUs above idle, at `carry_at`
    Time carry_at{};
    uint32_t settled = 0;  // how many steps of its job's carry_log are in `carry` (SettleCarry)
  };

  // O(1), inline: these run for every GPU of a job on every refresh and step report.
  size_t slot(ComponentId tray) const { return topo_.TraySlot(tray); }
  size_t gslot(ComponentId gpu) const { return topo_.GpuSlot(gpu); }
  Gpu& gpu(ComponentId id) { return gpu_[gslot(id)]; }
  const Gpu& gpu(ComponentId id) const { return gpu_[gslot(id)]; }
  Tray& tray_of(ComponentId id) { return tray_[slot(topo_.TrayOf(id))]; }
  void Emit(ObservationBody body, Time at);
  // Emits the samples in order as one timer (a telemetry tick's): the same observations at the same
  // instant as a timer each, without a heap entry and a std::function per sample. Delivery stops once a
  // sink stops the run (ObservationSink::StopsRun), where the run loop would have stopped.
  void EmitSamples(std::vector<TelemetrySample> samples, Time at);
  void Record(EventBody body) { events_.Record({clock_.Now(), std::move(body)}); }
  void Physics(ComponentId c, const char* what, double value, FaultId cause);
  Time NextSlot(Duration phase, Duration period, Time after) const;

  // sim_thermal.cpp
  void UpdateThermal(ComponentId gpu_id);
  void OnThermalCrossing(ComponentId gpu_id);
  void WatchTelemetry(ComponentId tray);
  void OnTelemetryTick(ComponentId tray);
  bool ThermallyActive(ComponentId tray, const std::vector<double>& temps) const;
  double GpuDemand(ComponentId gpu_id) const;
  double Temperature(ComponentId gpu_id, Time now) const;
  double PowerOf(ComponentId gpu_id) const;
  double Decay(Time since, Time now) const;  // e^(-(now - since) / tau) at full flow
  // A job's GPUs start or stop drawing power: its reference trajectory, and the GPUs that are not quiet.
  void JobPowerChanged(Job& job);
  void ThermalRelease(Job& job);

  // sim_jobs.cpp
  void PlaceQueuedJobs();
  void StartAfterOverhead(Job& job, const std::string& detail);
  void GrowShrunkJobs();
  void BackToQueue(Job& job, const std::string& detail);
  bool Place(Job& job);
  void StartRunning(Job& job);
  void Advance(Job& job);
  void RefreshJob(JobId id);
  void SetJobState(Job& job, JobState state, FaultId cause, const std::string& detail, Duration lost = {});
  void StopTimers(Job& job);
  void ScheduleCheckpoint(Job& job);
  void OnCheckpoint(JobId id);
  void OnCollectiveTimeout(JobId id);
  void OnStepReport(JobId id);
  void ReleaseTrays(Job& job);
  // sim_parallel.cpp: placement of grouped jobs (TP and EP blocks inside one NVLink domain).
  bool BlocksInDomains(const std::vector<ComponentId>& trays, int gpus, int block) const;
  // lo, hi: the tray slots [lo, hi) to take from (one region's, sim_regions.cpp), all by default.
  std::vector<ComponentId> PlaceByDomain(int gpus, int block, bool spare_racks_ok, const std::vector<uint8_t>& free,
                                         size_t lo = 0, size_t hi = SIZE_MAX) const;
  int ShrunkGroupedSize(const Job& job, int most) const;
  void NoteGroupFabrics(Job& job) const;
  bool GroupCrosses(const Job& job, int64_t first, int64_t stride, int64_t count) const;
  bool GpuUsesNic(const Job& job, ComponentId gpu_id) const;
  // A rank's DP and PP groups: bit kDp set when its DP group crosses domains, bit kPp its PP group.
  // Both for an ungrouped job's GPUs. O(log trays).
  static constexpr int kDp = 0, kPp = 1;
  int RankCrossing(const Job& job, ComponentId gpu_id) const;
  // Each kind's slowest group (sim_parallel.cpp): `ports` the pace its groups' NVLink ports down and
  // impaired domains allow (inside one domain; for a crossing group, its NVLink hop against the NIC),
  // `bw` its slowest group's bandwidth on the fabric each group uses (NVLink ports, degraded NVLink or
  // NIC links of its ranks, the domains' bandwidth, the spines for groups spanning leaf groups).
  struct KindLinks {
    double ports = 1, bw = 1;
    FaultId cause = kNoFault;  // of the slowest link that is not a port down
    double slow = 1;           // that link's fraction
  };
  std::array<KindLinks, 2> GroupLinksOf(const Job& job) const;
  double KindSpineShare(const Job& job, int kind, FaultId& cause) const;  // sim_spines.cpp
  // Trays from slots [lo, hi) only (a region's window: sim_regions.cpp). `regular` (optional) gets how
  // many of the trays are regular ones; 0 when the domain rule placed them.
  std::vector<ComponentId> PickTrays(const Job& job, int gpus, size_t need, const std::vector<uint8_t>& free,
                                     size_t lo = 0, size_t hi = SIZE_MAX, size_t* regular = nullptr) const;
  bool GrowFits(const Job& job) const;
  bool NicCarriesJob(const Job& job, ComponentId tray, size_t nic) const;
  struct FabricShares {
    double nvlink = 0, scaleout = 0;
  };
  FabricShares FabricSharesOf(const Job& job, int cross = -1) const;
  // Keep the indexes below current after a change to a GPU, or to a tray's presence, drain or job.
  void Touch(ComponentId gpu_id);
  void TouchTray(ComponentId tray_id);
  // Seats `job` (kNoJob: nobody) on the tray in slot k and keeps free_ and the jobs' lost_seats
  // current. A tray left by a job must have its carry settled first. O(1) but for lost seats.
  void SeatJob(size_t k, JobId job, int gpus);
  void UpdateFree(size_t k) {
    const uint8_t free = usable_[k] && seat_[k].job == kNoJob;
    free_count_ = free_count_ + free - free_[k];
    if (opt_.spare_racks > 0 && spare_[k] == TrayUse::kSpareRack) free_spare_rack_ = free_spare_rack_ + free - free_[k];
    free_[k] = free;
  }
  // sim_restart.cpp: a requeued job that gets back all its trays but a few touches only those.
  // Applies the carry steps of the seat's job that the seat has not taken yet (a restart in place
  // leaves them pending on the trays it kept): the same arithmetic, in the same order, as applying
  // each at its release. Const: a cache, called before the carry is read.
  void SettleCarry(size_t k) const;
  // RequeueJob's fast path; false (nothing changed) when the job does not qualify.
  bool RestartInPlace(Job& job, const std::string& detail);
  void StopForRequeue(Job& job, const std::string& detail);

  // sim_domains.cpp: rack-level parts (switch trays, CDU, power) and what they do to trays and jobs.
  struct Rack {
    uint64_t switch_failed = 0, switch_out = 0;  // bit per switch tray: failed; taken out by the healer
    uint64_t switch_hot = 0;                     // bit per switch tray: thermal shutdown (sim_switch_thermal.cpp)
    uint64_t switch_slow = 0;                    // bit per switch tray: thermal slowdown, its ports throttled
    FaultId switch_cause = kNoFault, cdu_cause = kNoFault, power_cause = kNoFault;
    double cdu_flow = 1;  // fraction of nominal coolant flow the CDU's pumps deliver
    bool cdu_failed = false;
    uint64_t pump_failed = 0;  // bit per CDU pump
    bool powered = true;
    std::vector<bool> psu_failed;  // per PSU of the rack, in shelf order
    DomainHealth health = DomainHealth::kHealthy;
  };
  Rack& rack_of(ComponentId id) { return rack_[static_cast<size_t>(topo_.at(id).rack)]; }
  const Rack& rack_of(ComponentId id) const { return rack_[static_cast<size_t>(topo_.at(id).rack)]; }
  uint64_t DomainSwitchesLost(ComponentId rack) const;  // positions lost over the rack's domain
  FaultId DomainCause(ComponentId rack) const;
  std::set<JobId> JobsInDomain(ComponentId rack) const;
  double TrayFlow(ComponentId tray) const;  // the tray's valve opening times its CDU's flow
  // What the job's NVLink domains do to it: `unhealthy` (a domain lost its partition) or the lowest
  // bandwidth fraction among them, with the fault behind it. Cost: the impaired racks only.
  void DomainImpact(JobId id, bool& unhealthy, double& bandwidth, FaultId& cause) const;
  // The lowest NVLink bandwidth fraction among `domains` (sorted domain indexes), with the fault behind
  // it; 1 when none of them is impaired. Cost: the impaired racks only.
  double DomainsBandwidth(const std::vector<int>& domains, FaultId& cause) const;
  void UpdateDomainHealth(ComponentId rack);
  Status SetSwitchTray(ComponentId sw, bool failed, bool taken_out, FaultId cause);
  // After a switch tray's failed, out or hot bit changed: if it was lost and is back, or the reverse,
  // its ports on every GPU of its rack, the domain's health and the jobs of the domain.
  void SwitchPositionChanged(ComponentId sw, bool was_lost);
  // sim_switch_thermal.cpp: switch trays' temperature (a switch tray stands for its own valve).
  struct SwitchHeat {
    ThermalState th;
    double valve = 1;
    TimerId timer = 0, poll = 0;  // next threshold crossing; next telemetry poll while it changes
    bool slow = false, hot = false;
    FaultId cause = kNoFault;  // the cooling fault heating it
  };
  std::vector<SwitchHeat> switch_heat_;  // per rack x switch tray; empty until a switch tray's flow first changes
  SwitchHeat& HeatOf(ComponentId sw);
  double SwitchConductance(ComponentId sw, double valve) const;
  double SwitchValve(ComponentId sw) const;
  void UpdateRackSwitchThermal(ComponentId rack, FaultId cause);
  void UpdateSwitchThermal(ComponentId sw, FaultId cause);
  void OnSwitchCrossing(ComponentId sw);
  void SetSwitchHot(ComponentId sw, bool hot, FaultId cause);
  void SetSwitchSlow(ComponentId sw, bool slow);
  uint64_t DomainSwitchesThrottled(ComponentId rack) const;  // positions throttled (not lost) over the domain
  FaultId DomainThrottleCause(ComponentId rack) const;      // kNoFault when none is throttled
  FaultId SwitchHeatCause(ComponentId sw) const;            // the fault heating it while slow or hot
  void WatchSwitchTelemetry(ComponentId sw);
  void OnSwitchTelemetryTick(ComponentId sw);
  void ApplySwitchValve(ComponentId sw, const Holds<ComponentId>::State& state, FaultId cause);
  Status TakeSwitchTrayOut(ComponentId sw, bool out);  // the healer's Drain / Resume of a switch tray
  Status DiagnoseSwitchTray(ComponentId sw);
  Status SetCdu(ComponentId cdu, double flow, FaultId cause);
  Status SetPsus(ComponentId psu_or_shelf, bool failed, FaultId cause);
  Status SetLeak(ComponentId valve, bool leaking, FaultId cause);
  Status SetFabricFailed(ComponentId leaf_or_rail, bool failed, FaultId cause);       // sim_fabric.cpp
  Status SetDpuFailed(ComponentId dpu, bool failed, FaultId cause);                   // sim_fabric.cpp
  Status HoldNicLink(ComponentId nic, ComponentId holder, bool down, FaultId cause);  // sim_fabric.cpp
  Status ApplyNicLink(ComponentId nic, bool up, FaultId cause);                       // the link itself
  // The tray is present while nothing holds it out (a tray_pull, its rack's power); `state` from presence_holds_.
  void ApplyTrayPresent(ComponentId tray, const Holds<ComponentId>::State& state, FaultId cause);
  // sim_holds.cpp: Ok when `what` applies to the target (a NIC's port becomes -1); then the Apply* of a
  // held state's new value (`state` from its Holds).
  Status CheckHeld(Held what, Target& target) const;
  double ValveNow(ComponentId valve) const;
  void ApplyValve(ComponentId valve, const Holds<ComponentId>::State& state, FaultId cause);  // from valve_holds_
  void ApplyPowerCap(ComponentId gpu, const Holds<ComponentId>::State& state, FaultId cause);  // from cap_holds_
  void ApplyLinkBandwidth(Target link, const Holds<std::pair<ComponentId, int>>::State& state, FaultId cause);  // sim_links.cpp
  // sim_storage.cpp; `lost`: this change lost the cache (its checkpoint shards go with it).
  void ApplyStorageRead(ComponentId tray, const Holds<ComponentId>::State& state, FaultId cause, bool lost);
  void ApplyStoreRate(ComponentId store, const Holds<ComponentId>::State& state, FaultId cause);  // sim_regions.cpp
  // sim_pumps.cpp: the CDU's pumps; its flow is 0 while the CDU itself is failed, else the running
  // pumps over those needed (at most 1).
  Status SetPump(ComponentId pump, bool failed, FaultId cause);
  double CduFlowOf(const Rack& r) const;
  void PartHealth(ComponentId part, bool ok);  // the part's controller reports it at its next poll
  // The poll phase of the controller that reports a part's health (a PSU's shelf BMC, a pump's CDU
  // controller, a DPU's BMC, a spine's fabric manager): drawn from the seeded generator per controller,
  // so it depends on the seed and the controller only, not on what happened before.
  Duration PartPollPhase(ComponentId controller) const;
  // sim_spines.cpp: spine switches. A job whose trays span leaf groups sends its cross-leaf traffic over
  // every spine left (ECMP): its scale-out bandwidth is (spines up) / spines, none left hangs it.
  Status SetSpine(ComponentId spine, bool failed, bool taken_out, FaultId cause);
  Status DiagnoseSpine(ComponentId spine);
  size_t SpineIndex(ComponentId spine) const {
    const size_t k = static_cast<size_t>(topo_.at(spine).index);
    return topo_.at(spine).kind == Kind::kSuperSpine ? topo_.spines().size() + k : k;
  }
  // The fraction of scale-out bandwidth the job keeps through the spines (1 when it stays in one leaf
  // group or no spine is lost), with the fault behind it.
  double SpineShare(const Job& job, FaultId& cause) const;
  SpineCrossing CrossingOf(const Job& job) const;
  double GroupsShare(const SpineCrossing::Groups& groups, FaultId& cause) const;  // 1 when they cross no spine
  template <typename Pods>
  double PodsShare(const Pods& pods, bool spans_pods, FaultId& cause) const;  // the spines of `pods` left
  template <typename Pods>
  FaultId LostSpineCause(const Pods& pods, bool spans_pods) const;
  void RefreshCrossLeafJobs();
  void SetRackPowered(ComponentId rack, bool powered, FaultId cause);
  void ApplyRackPower(ComponentId rack, const Holds<ComponentId>::State& state, FaultId cause);  // power_holds_' state

  // sim_links.cpp: links up at a fraction of their line rate
  struct Degraded {
    double fraction = 1;
    FaultId cause = kNoFault;
  };
  struct SlowLinks {  // the slowest degraded links a job's ranks send over (1 = none)
    double nvlink = 1, nic = 1;
    FaultId cause = kNoFault;
  };
  std::vector<ComponentId> RanksBehind(ComponentId link, int port) const;
  SlowLinks SlowLinksOf(JobId job) const;
  void AddCommTimes(const Job& job, StepReport& report);

  // sim_storage.cpp: the storage path. A tray's NVMe cache at a fraction of its read rate, or lost (0).
  struct StoragePath {
    double fraction = 1;
    FaultId cause = kNoFault;
  };
  struct DataStall {  // a job's read time per step at its slowest tray (0: no input)
    double read_s = 0;
    FaultId cause = kNoFault;
  };
  double ReadRate(const StoragePath& s, ComponentId tray = kNoComponent) const;  // GB/s per GPU
  DataStall DataStallOf(const Job& job) const;
  void AddStalledRanks(const Job& job, double stall_s, double nominal_compute, StepReport& report);
  void CopyCheckpoint(JobId id);  // starts the far copy of the acknowledged checkpoint
  void LoseLocalCheckpoint(Job& job, ComponentId tray, FaultId cause);

  // heartbeats (sim_backend.cpp)
  void HeartbeatsStopped(ComponentId tray);
  void HeartbeatsResumed(ComponentId tray);
  void Boot(ComponentId tray);

  const Topology& topo_;
  VirtualClock& clock_;
  Rng rng_;
  Rng jitter_rng_;
  EventSink& events_;
  SimOptions opt_;
  std::vector<ObservationSink*> sinks_;
  std::vector<Gpu> gpu_;
  std::vector<Tray> tray_;
  std::vector<Job> jobs_;
  std::vector<Rack> rack_;
  std::vector<bool> spine_failed_, spine_out_;  // spines, then super-spines (SpineIndex)
  size_t spines_lost_ = 0, super_spines_lost_ = 0;
  std::vector<size_t> pod_spines_lost_;
  std::map<size_t, FaultId> spine_causes_;  // failed spines (SpineIndex) and their faults, until repaired
  std::set<size_t> impaired_racks_;  // racks whose NVLink domain is not HEALTHY through a switch tray or power
  Rng report_phases_;
  Rng comm_rng_;     // declared after the streams above: its fork changes none of them
  Rng part_phases_;  // forked per controller (PartPollPhase)
  double idle_steady_c_ = 0, full_conductance_ = 0, full_tau_s_ = 1;
  bool quiet_possible_ = false;      // a GPU at TDP and full flow stays below slowdown
  std::set<ComponentId> loud_gpus_;  // GPUs that are not quiet
  // Indexes that keep per-event work proportional to what is abnormal, not to the GPUs in a job:
  std::set<ComponentId> odd_gpus_;        // GPUs dead, slower than nominal, or with NVLink ports down
  std::set<ComponentId> nic_down_trays_;  // trays with a NIC link down
  // Overlapping faults (cluster/holds.h): who holds what, and the plain state beside each, in sim_holds.cpp.
  Holds<ComponentId> nic_holds_, storage_holds_, cap_holds_, valve_holds_, presence_holds_;
  Holds<ComponentId> power_holds_, region_holds_, store_holds_;
  Holds<std::pair<ComponentId, int>> bandwidth_holds_;
  std::map<std::pair<ComponentId, int>, Degraded> degraded_;  // (NIC, -1) or (GPU, NVLink port)
  std::map<ComponentId, StoragePath> storage_;                // trays whose storage path is impaired
  // What a tray is kept for: regular work, a hot spare (cluster.spare_trays), or a spare rack's tray
  // (cluster.spares.racks: only for jobs whose NVLink domain was lost; sim_spare_racks.cpp).
  enum class TrayUse : uint8_t { kRegular, kHotSpare, kSpareRack };
  mutable std::vector<Seat> seat_;  // per tray slot
  std::vector<uint8_t> usable_;     // per tray slot: present, booted, undrained
  std::vector<uint8_t> free_;       // per tray slot: usable and no job
  std::vector<TrayUse> spare_;      // per tray slot
  size_t free_count_ = 0;
  size_t free_spare_rack_ = 0;  // free trays of spare racks, within free_count_; kept in step by TouchTray
  // sim_regions.cpp: per region its object store's share of its read rate, its checkpoint store's
  // state and whether the whole region is down; the probe reports each at the region's phase.
  struct RegionState {
    double object_store = 1;
    bool checkpoint_failed = false, down = false;
    FaultId object_cause = kNoFault, checkpoint_cause = kNoFault;  // the worst hold's (store_holds_)
    Duration probe_phase{};
  };
  std::vector<RegionState> region_;
  // Tray slot windows [lo, hi) to place `job` in: the whole cluster without regions; else one per region
  // that is up, its own region first.
  std::vector<std::pair<size_t, size_t>> RegionWindows(const Job& job) const;
  double ObjectStoreShare(ComponentId tray) const;  // 1 without regions
  DataStall StreamStall(const Job& job) const;      // a job reading its input from the object store
  FaultId InputLost(const Job& job) const;          // a tray reading from a failed object store: its fault
  bool CheckpointWriteFails(Job& job);              // the region's checkpoint store cannot acknowledge
  void ChargeUnsafeWork(Job& job, JobChanged& change);  // a restart's rework the failed store added
  // sim_region_link.cpp: the far copies in flight on each region's link to the next, and the object
  // store's read capacity shared by the jobs streaming from it.
  struct LinkFlow {
    JobId job;
    double left_gb;
  };
  struct RegionLink {
    std::vector<LinkFlow> flows;  // in the order they started
    Time since{};                 // when flows' bytes left were last settled
    TimerId timer = 0;            // the flow with the fewest bytes left ends
  };
  std::vector<RegionLink> links_;  // per region, to the next
  bool CopiesOverLink(const Job& job) const;
  void SettleLink(RegionLink& link);
  void ScheduleLink(size_t k);
  void StartLinkCopy(Job& job);
  void CancelLinkCopy(Job& job);
  void OnLinkCopyDone(size_t k);
  void FarCopyDone(JobId id);  // sim_storage.cpp
  double LinkRate() const;     // what the copies on a link share: the link less its background traffic
  int FarRegion(const Job& job) const;  // where its copies go: the next region (-1 with fewer than two)
  bool FarStoreDown(int region) const;  // a copy to it cannot land: the region or its checkpoint store is down
  void FarCopiesLost(int region, FaultId cause);  // the copies in flight to `region` are gone
  void FarStoreBack(int region);                  // the copies waiting for `region` start
  std::optional<double> ObjectStoreFairShare(const Job& job) const;
  std::set<JobId> reading_;  // jobs streaming from an object store, running or hung
  void ObjectStoreReadersChanged(const Job& job);
  void Probe(ComponentId part, bool ok);
  int restarts_in_place_ = 0;
  mutable Time settle_since_{}, settle_at_{};  // SettleCarry's last Decay(since, at), for trays seated together
  mutable double settle_decay_ = 1;
  // SettleCarry's last whole settle: trays kept together since a restart owe the same steps from the
  // same carry, so a full release of a 25,000-tray job walks the steps once per distinct carry, not per tray.
  struct SettleMemo {
    JobId job = kNoJob;
    uint32_t from = 0, to = 0;
    uint64_t carry_bits = 0;  // the carry before, bit for bit
    Time carry_at{}, at{};
    double carry = 0;  // after
  };
  mutable SettleMemo settle_memo_;
  // sim_spare_racks.cpp
  void MarkSpareRacks();
  bool DomainLost(const Job& job) const;  // some rack of its trays lost its NVLink domain
  void NoteSpareRackUse(const Job& job);
};

}  // namespace rackchaos::cluster
