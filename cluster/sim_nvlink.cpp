// NVLink ports and switch trays in the simulated cluster (cluster/sim_fabric.h).
//
// Each switch tray carries L / S of every GPU's NVLink ports (GB200: 2 of 18, one per NVSwitch chip):
// port p goes to switch tray p * S / L. A lost switch tray (failed, taken out by the healer, or shut down
// by heat) shows on every GPU of its rack as those ports going inactive, which is what a site's NVLink
// counters and nvidia-smi show; what it does to the domain is sim_domains.cpp.
//
// Cost: a change costs the rack it happens in (its 18 trays, their GPUs' link observations).
#include "cluster/kernel_log.h"
#include "cluster/sim_fabric.h"
#include "cluster/sim_nodes.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

Fabric::Fabric(SimContext& ctx, Rng comm_jitter, Scheduler& jobs, Nodes& nodes, Thermal& thermal)
    : ctx_(ctx),
      topo_(ctx.topo()),
      clock_(ctx.clock()),
      opt_(ctx.opt()),
      jobs_(jobs),
      seats_(jobs.seats()),
      job_list_(jobs.jobs()),
      nodes_(nodes),
      thermal_(thermal),
      comm_rng_(comm_jitter),
      region_links_(ctx.clock(), topo_.regions().size(), opt_.region_link_gbytes_per_s, opt_.region_link_background,
                    [scheduler = &jobs](JobId id) { scheduler->FarCopyLanded(id); }) {
  const RackModel& m = topo_.model();
  ports_.resize(topo_.gpus().size());
  rack_.resize(topo_.racks().size());
  nics_.resize(topo_.trays().size());
  for (Nics& n : nics_) {
    n.up.assign(static_cast<size_t>(m.nics_per_tray), true);
    n.cause.assign(static_cast<size_t>(m.nics_per_tray), kNoFault);
  }
  spine_failed_.assign(topo_.spines().size() + topo_.super_spines().size(), false);
  spine_out_.assign(spine_failed_.size(), false);
  pod_spines_lost_.assign(static_cast<size_t>(topo_.Pods()), 0);
}

Status Fabric::SetNvlinkPort(ComponentId gpu_id, int port, bool up, FaultId cause) {
  if (topo_.at(gpu_id).kind != Kind::kGpu || port < 0 || port >= topo_.model().nvlink_links_per_gpu)
    return Status::Invalid("no NVLink port " + std::to_string(port) + " on " + topo_.at(gpu_id).name);
  Ports& g = ports_[topo_.GpuSlot(gpu_id)];
  uint64_t bit = uint64_t{1} << port;
  if (((g.down & bit) == 0) == up) return Status::Ok();
  g.down = up ? (g.down & ~bit) : (g.down | bit);
  g.cause = up ? kNoFault : cause;
  ctx_.Physics(gpu_id, up ? "nvlink_up" : "nvlink_down", port, cause);
  Time seen = SimContext::NextSlot(nodes_.PollPhase(topo_.TrayOf(gpu_id)), opt_.link_poll_period, clock_.Now());
  ctx_.Emit(LinkStateChange{gpu_id, port, up}, seen);
  jobs_.NoteGpu(gpu_id);
  if (!up) {
    // NVLink 5 errors surface as Xid 145 on Blackwell (RACK-FACTS: 144-150 NVLink 5 errors).
    XidLine x{topo_.PciOf(gpu_id), 145, 4242, "python3",
              "NVLink: Link " + std::to_string(port) + " is down, fatal error detected (0x0, 0x0, 0x10000, 0x0)"};
    ctx_.Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
              clock_.Now() + opt_.log_delay);
  }
  if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob) jobs_.RefreshJob(job);
  return Status::Ok();
}

Status Fabric::SetSwitchFailed(ComponentId sw, bool failed, FaultId cause) {
  const bool out = (switches_of(sw).out >> topo_.at(sw).index) & 1;
  return SetSwitchTray(sw, failed, out, cause);
}

Status Fabric::SetSwitchTray(ComponentId sw, bool failed, bool taken_out, FaultId cause) {
  Switches& r = switches_of(sw);
  const uint64_t bit = uint64_t{1} << topo_.at(sw).index;
  const bool was_failed = r.failed & bit, was_lost = (r.failed | r.out | r.hot) & bit;
  r.failed = failed ? r.failed | bit : r.failed & ~bit;
  r.out = taken_out ? r.out | bit : r.out & ~bit;
  if (failed != was_failed) {
    ctx_.Physics(sw, failed ? "failed" : "repaired", 0, cause);
    if (failed) r.cause = cause;
  }
  SwitchPositionChanged(sw, was_lost);
  return Status::Ok();
}

void Fabric::SwitchPositionChanged(ComponentId sw, bool was_lost) {
  const Switches& r = switches_of(sw);
  const bool lost = (r.failed | r.out | r.hot) >> topo_.at(sw).index & 1;
  if (lost == was_lost) return;
  const RackModel& m = topo_.model();
  const ComponentId rack = topo_.RackOf(sw);
  const std::set<JobId> jobs = JobsInDomain(rack);  // its domain's health reaches every rack of it
  for (ComponentId tray : topo_.ChildrenOf(rack)) {  // the ports into it are on its own rack's GPUs
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    if (!nodes_.TrayPresent(tray) || nodes_.TrayBooting(tray)) continue;  // an unreachable node reports no link state
    Time seen = SimContext::NextSlot(nodes_.PollPhase(tray), opt_.link_poll_period, clock_.Now());
    for (ComponentId g : topo_.GpusOfTray(tray)) {
      if (!nodes_.GpuAlive(g)) continue;  // a GPU that is off (shut down, failed) reports no ports
      for (int p = 0; p < m.nvlink_links_per_gpu; ++p)
        if (p * m.switch_trays / m.nvlink_links_per_gpu == topo_.at(sw).index)
          ctx_.Emit(LinkStateChange{g, p, !lost}, seen);
    }
  }
  UpdateDomainHealth(rack);
  for (JobId j : jobs) jobs_.RefreshJob(j);
}

Status Fabric::TakeSwitchTrayOut(ComponentId sw, bool out) {
  Switches& r = switches_of(sw);
  bool failed = (r.failed >> topo_.at(sw).index) & 1;
  if (((r.out >> topo_.at(sw).index) & 1) != out) ctx_.Physics(sw, out ? "taken_out" : "returned", 0, kNoFault);
  // Taken out for running hot: the cooling fault behind it is what the domain lost it to.
  if (const FaultId heat = thermal_.SwitchHeatCause(sw); out && !failed && heat != kNoFault) r.cause = heat;
  return SetSwitchTray(sw, failed, out, r.cause);
}

// A switch tray's self-test (NVOS/NMX health): passes when the tray itself works and is not in thermal
// slowdown.
void Fabric::DiagnoseSwitchTray(ComponentId sw) {
  clock_.CallAfter(topo_.model().diagnostic_time, [this, sw] {
    ctx_.SettleOwed();
    const Switches& r = switches_of(sw);
    const bool failed = ((r.failed | r.hot) >> topo_.at(sw).index) & 1;  // a hot one is off too
    const bool slow = (r.slow >> topo_.at(sw).index) & 1;
    ctx_.Emit(DiagnosticResult{sw, !failed && !slow,
                               failed ? "NVSwitch trays: " + topo_.at(sw).name + " not responding"
                               : slow ? "NVSwitch trays: " + topo_.at(sw).name + " in thermal slowdown"
                                      : "all checks passed"},
              clock_.Now());
  });
}

void Fabric::SetSwitchHot(ComponentId sw, bool hot, FaultId cause) {
  Switches& r = switches_of(sw);
  const uint64_t bit = uint64_t{1} << topo_.at(sw).index;
  const bool was_lost = (r.failed | r.out | r.hot) & bit;
  r.hot = hot ? r.hot | bit : r.hot & ~bit;
  if (hot) r.cause = cause;
  SwitchPositionChanged(sw, was_lost);
}

// Entering or leaving thermal slowdown: the domain's bandwidth changes by the switch tray's throttled
// share (nothing shows on the ports: they stay up), so its jobs are re-timed.
void Fabric::SetSwitchSlow(ComponentId sw, bool slow) {
  Switches& r = switches_of(sw);
  const uint64_t bit = uint64_t{1} << topo_.at(sw).index;
  r.slow = slow ? r.slow | bit : r.slow & ~bit;
  const ComponentId rack = topo_.RackOf(sw);
  UpdateDomainHealth(rack);
  for (JobId j : JobsInDomain(rack)) jobs_.RefreshJob(j);
}

void Fabric::SwitchBackInService(ComponentId sw, FaultId cause) {
  switches_of(sw).slow &= ~(uint64_t{1} << topo_.at(sw).index);  // back unthrottled
  SetSwitchHot(sw, false, cause);
}

}  // namespace rackchaos::cluster
