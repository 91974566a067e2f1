// Fabric: every link a job's collectives cross and what their faults do to its step.
//
// - NVLink (sim_nvlink.cpp, sim_domains.cpp): each GPU's ports, each rack's switch trays (failed, taken
//   out by the healer, shut down or throttled by heat: sim_switch_thermal.cpp tells which), and the
//   health of each NVLink domain as NVIDIA's NMX reports it (a rack, or two for GB200 NVL36x2).
// - Scale-out (sim_nics.cpp, sim_spines.cpp): each tray's NICs, the leaves and rails above them, the
//   BlueField DPUs in front of them, the spines (and super-spines) between leaf groups.
// - Links up at a fraction of their line rate (sim_links.cpp), and the link from each region to the next
//   that far checkpoint copies share (RegionLinks, sim_region_link.h).
// What a job's step gets from all of that (each kind of group at its slowest link: sim_links.cpp) is
// read by the scheduler's RefreshJob; what a site sees is link state changes at the tray's link poll,
// Xid lines, step reports' comm times, and the parts' controllers.
//
// Cost: a change costs the rack or tray it happens in; a job's view looks only at what is abnormal
// (impaired racks, trays with a NIC down, degraded links, lost spines), never at every GPU of a job.
// Uses: the scheduler (its seats, jobs and odd GPUs; RefreshJob and NoteGpu after a change), nodes
// (GPUs on the bus, trays reachable, poll phases, rack power and its fault), thermal (the fault heating
// a switch tray). Not thread-safe (the run's event loop).
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/holds.h"
#include "cluster/sim_context.h"
#include "cluster/sim_job.h"
#include "cluster/sim_region_link.h"

namespace rackchaos::cluster {

class Nodes;
class Scheduler;
class Thermal;

// NVLink domain health as NVIDIA's NMX reports it.
enum class DomainHealth { kHealthy, kDegraded, kBandwidth, kUnhealthy };
const char* DomainHealthName(DomainHealth h);  // "HEALTHY", ...

class Fabric {
 public:
  // `comm_jitter`: the stream step reports' comm times are drawn from (AddCommTimes).
  Fabric(SimContext& ctx, Rng comm_jitter, Scheduler& jobs, Nodes& nodes, Thermal& thermal);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // ---- NVLink ports and switch trays (sim_nvlink.cpp)
  uint64_t NvlinkDown(ComponentId gpu) const { return ports_[topo_.GpuSlot(gpu)].down; }  // bit per port
  FaultId LinkCause(ComponentId gpu) const { return ports_[topo_.GpuSlot(gpu)].cause; }
  Status SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause);
  Status SetSwitchFailed(ComponentId sw, bool failed, FaultId cause);
  Status TakeSwitchTrayOut(ComponentId sw, bool out);  // the healer's Drain / Resume of a switch tray
  void DiagnoseSwitchTray(ComponentId sw);
  // From sim_switch_thermal.cpp: thermal shutdown (lost like a failed one, kept apart so a repair and a
  // cool-down each end only their own loss), slowdown (its ports throttled), and back from shutdown.
  void SetSwitchHot(ComponentId sw, bool hot, FaultId cause);
  void SetSwitchSlow(ComponentId sw, bool slow);
  void SwitchBackInService(ComponentId sw, FaultId cause);

  // ---- NVLink domains (sim_domains.cpp), for the domain `rack` belongs to
  DomainHealth DomainHealthOf(ComponentId rack) const;
  double DomainBandwidth(ComponentId rack) const;  // fraction of nominal; 0 when UNHEALTHY
  // Records the domain's health when it changes and keeps the impaired racks current.
  void UpdateDomainHealth(ComponentId rack);
  std::set<JobId> JobsInDomain(ComponentId rack) const;
  bool AnyDomainImpaired() const { return !impaired_racks_.empty(); }
  // What the job's NVLink domains do to it: `unhealthy` (a domain lost its partition) or the lowest
  // bandwidth fraction among them, with the fault behind it. Cost: the impaired racks only.
  void DomainImpact(JobId job, bool& unhealthy, double& bandwidth, FaultId& cause) const;

  // ---- NICs, leaves, rails, DPUs (sim_nics.cpp)
  bool AnyNicDown(ComponentId tray) const;
  Status SetNicLink(ComponentId nic, bool up, FaultId cause);
  Status SetFabricFailed(ComponentId leaf_or_rail, bool failed, FaultId cause);
  Status SetDpuFailed(ComponentId dpu, bool failed, FaultId cause);
  // A tray pulled from its slot: its NICs' links go down with it, as the switch ports they plug into
  // see; back when it is in again (the hold of (tray, cause) on each, cluster/holds.h).
  void SetTrayNicsPresent(ComponentId tray, bool present, FaultId cause);
  // A NIC link down that the job sends over hangs it: true with the link's fault and what it is.
  bool JobNicDown(const SimJob& job, FaultId& cause, std::string& why) const;

  // ---- degraded links (sim_links.cpp): a NIC (port -1) or a GPU's NVLink port at `fraction` of its
  // rate, a held state (cluster/holds.h; the facade checked the target and the fraction).
  void SetLinkBandwidth(Target link, double fraction, FaultId cause);
  void ReleaseLinkBandwidth(Target link, FaultId cause);
  bool AnyDegraded() const { return !degraded_.empty(); }
  struct SlowLinks {  // the slowest degraded links a job's ranks send over (1 = none)
    double nvlink = 1, nic = 1;
    FaultId cause = kNoFault;
  };
  SlowLinks SlowLinksOf(const SimJob& job) const;
  // Adds each rank's send time to a step report (draws from the comm stream only while links are degraded).
  void AddCommTimes(const SimJob& job, StepReport& report);

  // ---- each kind's slowest group (sim_links.cpp): `ports` the pace its groups' NVLink ports down
  // and impaired domains allow, `bw` its slowest group's bandwidth on the fabric each group uses.
  struct KindLinks {
    double ports = 1, bw = 1;
    FaultId cause = kNoFault;  // of the slowest link that is not a port down
    double slow = 1;           // that link's fraction
  };
  std::array<KindLinks, 2> GroupLinksOf(const SimJob& job) const;

  // ---- spines (sim_spines.cpp): a job spanning leaf groups keeps (S - lost) / S of its scale-out bandwidth.
  bool AnySpineLost() const { return spines_lost_ || super_spines_lost_; }
  Status SetSpineFailed(ComponentId spine, bool failed, FaultId cause);
  Status TakeSpineOut(ComponentId spine, bool out);  // the healer's Drain / Resume of a spine
  void DiagnoseSpine(ComponentId spine);
  // The share of scale-out bandwidth the job keeps through the spines (1 when it stays in one leaf
  // group or no spine is lost), with the fault behind it.
  double SpineShare(const SimJob& job, FaultId& cause) const;

  RegionLinks& region_links() { return region_links_; }

 private:
  struct Ports {
    uint64_t down = 0;  // bit per port
    FaultId cause = kNoFault;
  };
  struct Switches {  // a rack's switch trays, bit per switch tray
    uint64_t failed = 0, out = 0;  // failed; taken out by the healer
    uint64_t hot = 0;              // thermal shutdown
    uint64_t slow = 0;             // thermal slowdown, its ports throttled
    FaultId cause = kNoFault;
    DomainHealth health = DomainHealth::kHealthy;  // kept on the domain's first rack
  };
  struct Nics {
    std::vector<bool> up;
    std::vector<FaultId> cause;
  };
  struct Degraded {
    double fraction = 1;
    FaultId cause = kNoFault;
  };
  Switches& switches_of(ComponentId id) { return rack_[static_cast<size_t>(topo_.at(id).rack)]; }
  const Switches& switches_of(ComponentId id) const { return rack_[static_cast<size_t>(topo_.at(id).rack)]; }
  Nics& nics_of(ComponentId id) { return nics_[topo_.TraySlot(topo_.TrayOf(id))]; }

  // sim_nvlink.cpp
  Status SetSwitchTray(ComponentId sw, bool failed, bool taken_out, FaultId cause);
  // After a switch tray's failed, out or hot bit changed: if it was lost and is back, or the reverse,
  // its ports on every GPU of its rack, the domain's health and the jobs of the domain.
  void SwitchPositionChanged(ComponentId sw, bool was_lost);
  // sim_domains.cpp
  uint64_t DomainSwitchesLost(ComponentId rack) const;       // positions lost over the rack's domain
  uint64_t DomainSwitchesThrottled(ComponentId rack) const;  // positions throttled (not lost) over the domain
  FaultId DomainCause(ComponentId rack) const;
  FaultId DomainThrottleCause(ComponentId rack) const;  // kNoFault when none is throttled
  // The lowest NVLink bandwidth fraction among `domains` (sorted domain indexes), with the fault behind
  // it; 1 when none of them is impaired. Cost: the impaired racks only.
  double DomainsBandwidth(const std::vector<int>& domains, FaultId& cause) const;
  // sim_nics.cpp: who holds a NIC's link down (the NIC itself, its leaf, rail or DPU), and the link.
  Status HoldNicLink(ComponentId nic, ComponentId holder, bool down, FaultId cause);
  Status ApplyNicLink(ComponentId nic, bool up, FaultId cause);
  bool NicCarriesJob(const SimJob& job, ComponentId tray, size_t nic) const;
  // sim_links.cpp
  void ApplyLinkBandwidth(Target link, const Holds<std::pair<ComponentId, int>>::State& state, FaultId cause);
  std::vector<ComponentId> RanksBehind(ComponentId link, int port) const;
  // sim_spines.cpp
  size_t SpineIndex(ComponentId spine) const {
    const size_t k = static_cast<size_t>(topo_.at(spine).index);
    return topo_.at(spine).kind == Kind::kSuperSpine ? topo_.spines().size() + k : k;
  }
  Status SetSpine(ComponentId spine, bool failed, bool taken_out, FaultId cause);
  double KindSpineShare(const SimJob& job, int kind, FaultId& cause) const;
  double GroupsShare(const SpineCrossing::Groups& groups, FaultId& cause) const;  // 1 when they cross no spine
  template <typename Pods>
  double PodsShare(const Pods& pods, bool spans_pods, FaultId& cause) const;  // the spines of `pods` left
  template <typename Pods>
  FaultId LostSpineCause(const Pods& pods, bool spans_pods) const;
  void RefreshCrossLeafJobs();

  SimContext& ctx_;
  const Topology& topo_;
  VirtualClock& clock_;
  const SimOptions& opt_;
  Scheduler& jobs_;
  const SeatMap& seats_;
  const std::vector<SimJob>& job_list_;
  Nodes& nodes_;
  Thermal& thermal_;
  Rng comm_rng_;
  std::vector<Ports> ports_;     // per GPU slot
  std::vector<Switches> rack_;   // per rack
  std::set<size_t> impaired_racks_;  // racks whose NVLink domain is not HEALTHY through a switch tray or power
  std::vector<Nics> nics_;       // per tray slot
  std::set<ComponentId> nic_down_trays_;  // trays with a NIC link down
  Holds<ComponentId> nic_holds_;
  std::vector<bool> spine_failed_, spine_out_;  // spines, then super-spines (SpineIndex)
  size_t spines_lost_ = 0, super_spines_lost_ = 0;
  std::vector<size_t> pod_spines_lost_;
  std::map<size_t, FaultId> spine_causes_;  // failed spines (SpineIndex) and their faults, until repaired
  std::map<std::pair<ComponentId, int>, Degraded> degraded_;  // (NIC, -1) or (GPU, NVLink port)
  Holds<std::pair<ComponentId, int>> bandwidth_holds_;
  RegionLinks region_links_;
};

}  // namespace rackchaos::cluster
