// Compute trays and GPUs as machines (cluster/sim_nodes.h): presence, boots, drains, GPU failures and
// resets, heartbeats, the node's diagnostic, and the racks' power.
#include "cluster/sim_nodes.h"

#include <algorithm>

#include "cluster/kernel_log.h"
#include "cluster/sim_fabric.h"
#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

Nodes::Nodes(SimContext& ctx, Rng phases, Scheduler& jobs, Thermal& thermal, Fabric& fabric)
    : ctx_(ctx),
      topo_(ctx.topo()),
      clock_(ctx.clock()),
      opt_(ctx.opt()),
      jobs_(jobs),
      seats_(jobs.seats()),
      thermal_(thermal),
      fabric_(fabric) {
  const RackModel& m = topo_.model();
  bus_.resize(topo_.gpus().size());
  // Poll and heartbeat phases are drawn once per tray: real agents start at arbitrary moments.
  node_.resize(topo_.trays().size());
  for (Node& t : node_) {
    t.hb_phase = Duration{static_cast<int64_t>(phases.Below(static_cast<uint64_t>(opt_.heartbeat_period.us)))};
    t.poll_phase = Duration{static_cast<int64_t>(phases.Below(static_cast<uint64_t>(opt_.telemetry_period.us)))};
  }
  power_.resize(topo_.racks().size());
  for (Power& p : power_) p.psu_failed.assign(static_cast<size_t>(m.power_shelves * m.psus_per_shelf), false);
}

Status Nodes::SetTrayPresent(ComponentId tray_id, bool present, FaultId cause) {
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  const auto s = present ? presence_holds_.Release(tray_id, tray_id, cause, 1)
                         : presence_holds_.Place(tray_id, tray_id, cause, 0, 1);
  ApplyTrayPresent(tray_id, s, cause);
  // Its NICs' links go down with it: the switch ports they plug into lose carrier, which a site's link
  // state shows at once (the rig's tray_pull: link_state in ~1 s, before the missed heartbeats). Held by
  // the pull (holder the tray, cause the fault), so a link_down of its own on one of them stays in force.
  // A rack's power loss does not take them down here: the leaf rule of the localizer would read a dark
  // rack's NICs as its leaves failing (healer/localizer.cpp, FabricDomains).
  fabric_.SetTrayNicsPresent(tray_id, present, cause);
  return Status::Ok();
}

// The tray is out while a tray_pull or its rack's power holds it out (cluster/holds.h); it comes back
// when the last hold is released.
void Nodes::ApplyTrayPresent(ComponentId tray_id, const Holds<ComponentId>::State& s, FaultId cause) {
  Node& t = node(tray_id);
  const bool present = !s.held;
  t.presence_cause = s.held ? s.cause : kNoFault;
  if (t.present == present) return;
  t.present = present;
  ctx_.Physics(tray_id, present ? "inserted" : power_of(tray_id).powered ? "removed" : "unpowered", 0, cause);
  if (!present) {
    // Pulled while booting: that boot never finishes, and its heartbeats, which had not resumed,
    // cannot stop again.
    bool was_booting = t.booting;
    t.booting = false;
    if (t.boot_timer) clock_.Cancel(t.boot_timer);
    t.boot_timer = 0;
    for (ComponentId g : topo_.GpusOfTray(tray_id)) ctx_.Physics(g, "lost", 0, cause);
    if (!was_booting) HeartbeatsStopped(tray_id);
  } else {
    Boot(tray_id);  // a reinserted tray boots before its node agent beats again
  }
  jobs_.TouchTray(tray_id);
  for (ComponentId g : topo_.GpusOfTray(tray_id)) thermal_.UpdateThermal(g);
  fabric_.UpdateDomainHealth(topo_.RackOf(tray_id));
  if (JobId job = seats_.JobOnTray(tray_id); job != kNoJob) jobs_.RefreshJob(job);
}

// The node boots for the model's boot time; then its GPUs come back cold and reset and it beats again.
void Nodes::Boot(ComponentId tray_id) {
  Node& t = node(tray_id);
  t.booting = true;
  t.boot_timer = clock_.CallAfter(topo_.model().node_boot_time, [this, tray_id] {
    ctx_.SettleOwed();
    Node& tr = node(tray_id);
    tr.boot_timer = 0;
    if (!tr.present || !tr.booting) return;
    tr.booting = false;
    jobs_.TouchTray(tray_id);
    for (ComponentId g : topo_.GpusOfTray(tray_id)) {
      bus_[topo_.GpuSlot(g)].shutdown = false;
      thermal_.EndThrottle(g);
      ctx_.Physics(g, "booted", 0, kNoFault);
      thermal_.UpdateThermal(g);  // back to idle power (it drew nothing while out and booting)
    }
    HeartbeatsResumed(tray_id);
    jobs_.PlaceQueuedJobs();
  });
}

Status Nodes::RebootNode(ComponentId tray_id) {
  if (topo_.at(tray_id).kind != Kind::kComputeTray)
    return Status::Invalid(topo_.at(tray_id).name + " is not a compute tray");
  Node& t = node(tray_id);
  if (!t.present) return Status::Unavailable(topo_.at(tray_id).name + ": tray is not present");
  if (t.booting) return Status::Ok();
  ctx_.Physics(tray_id, "rebooted", 0, kNoFault);
  HeartbeatsStopped(tray_id);
  Boot(tray_id);
  jobs_.TouchTray(tray_id);
  if (JobId job = seats_.JobOnTray(tray_id); job != kNoJob) jobs_.RefreshJob(job);
  return Status::Ok();
}

Status Nodes::SetGpuFailed(ComponentId gpu_id, bool failed, int xid, FaultId cause) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  Bus& g = bus_[topo_.GpuSlot(gpu_id)];
  if (g.failed == failed) return Status::Ok();
  g.failed = failed;
  g.fail_cause = failed ? cause : kNoFault;
  ctx_.Physics(gpu_id, failed ? "failed" : "repaired", xid, cause);
  if (failed && node(topo_.TrayOf(gpu_id)).present) {
    XidLine x{topo_.PciOf(gpu_id), xid, std::nullopt, "", DefaultXidMessage(xid)};
    ctx_.Emit(KernelLogLine{topo_.TrayOf(gpu_id), FormatXidLine(x, LogStyle::kDmesg, clock_.Now().Seconds() + 600, "")},
              clock_.Now() + opt_.log_delay);
  }
  thermal_.UpdateThermal(gpu_id);
  fabric_.UpdateDomainHealth(topo_.RackOf(gpu_id));
  if (JobId job = seats_.JobOfGpu(gpu_id); job != kNoJob) jobs_.RefreshJob(job);
  if (!failed) jobs_.PlaceQueuedJobs();
  return Status::Ok();
}

void Nodes::Drain(ComponentId tray_id) {
  node(tray_id).drained = true;
  jobs_.TouchTray(tray_id);
}

void Nodes::Resume(ComponentId tray_id) {
  node(tray_id).drained = false;
  jobs_.TouchTray(tray_id);
  jobs_.PlaceQueuedJobs();
}

Status Nodes::ResetGpu(ComponentId gpu_id) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  if (!node(topo_.TrayOf(gpu_id)).present) return Status::Unavailable(topo_.at(gpu_id).name + ": tray is not present");
  clock_.CallAfter(topo_.model().gpu_reset_time, [this, gpu_id] {
    ctx_.SettleOwed();
    Bus& g = bus_[topo_.GpuSlot(gpu_id)];
    if (!node(topo_.TrayOf(gpu_id)).present) return;
    // A reset brings a GPU back only once it has cooled below its slowdown temperature.
    if (g.shutdown && thermal_.Temperature(gpu_id, clock_.Now()) < topo_.model().gpu_slowdown_c) {
      g.shutdown = false;
      thermal_.EndThrottle(gpu_id);
      ctx_.Physics(gpu_id, "reset", 0, kNoFault);
      thermal_.UpdateThermal(gpu_id);
    }
  });
  return Status::Ok();
}

void Nodes::RunDiagnostic(ComponentId tray_id) {
  clock_.CallAfter(topo_.model().diagnostic_time, [this, tray_id] {
    ctx_.SettleOwed();
    const Node& t = node(tray_id);
    std::string why;
    bool off_bus = false;
    if (!t.present || t.booting) why = "node unreachable";
    for (ComponentId g : topo_.GpusOfTray(tray_id)) {
      const Bus& s = bus_[topo_.GpuSlot(g)];
      const std::string& n = topo_.at(g).name;
      if (!why.empty()) break;
      if (s.shutdown || s.failed) {
        why = n + " not on the bus";
        off_bus = true;
      } else if (fabric_.NvlinkDown(g))
        why = n + " has inactive NVLink ports";
      else if (thermal_.CapOf(g) < thermal_.BaselineCapOf(g) * 0.99)
        why = n + " below expected performance (power limited)";
    }
    if (why.empty() && fabric_.DomainHealthOf(topo_.RackOf(tray_id)) == DomainHealth::kUnhealthy)
      why = "NVLink domain " + topo_.at(topo_.DomainOf(tray_id)).name + " UNHEALTHY: no NVLink partition";
    if (why.empty() && thermal_.TrayFlow(tray_id) < 0.9)
      why = "thermal test failed: GPUs throttle under load (coolant flow low)";
    if (why.empty() && fabric_.AnyNicDown(tray_id)) why = "a NIC link is down";
    ctx_.Emit(DiagnosticResult{tray_id, why.empty(), why.empty() ? "all checks passed" : why, off_bus}, clock_.Now());
  });
}

void Nodes::HeartbeatsStopped(ComponentId tray_id) {
  const Node& t = node(tray_id);
  Time now = clock_.Now();
  Time next = SimContext::NextSlot(t.hb_phase, opt_.heartbeat_period, now);
  Time last = next - opt_.heartbeat_period;
  ctx_.Emit(HeartbeatChange{tray_id, false, last, opt_.heartbeat_period}, next);
}

void Nodes::HeartbeatsResumed(ComponentId tray_id) {
  const Node& t = node(tray_id);
  Time first = SimContext::NextSlot(t.hb_phase, opt_.heartbeat_period, clock_.Now());
  ctx_.Emit(HeartbeatChange{tray_id, true, first, opt_.heartbeat_period}, first);
}

// ---------------------------------------------------------------- rack power
//
// The PSUs behind a rack's bus bar, and what losing the rack's power does. The rack's power is a held
// state (cluster/holds.h): the rack holds it off for its own PSUs, a region for an outage; it comes back
// when neither does.
//
// Power lost: every tray of the rack goes dark as if pulled (heartbeats stop, GPUs are gone, jobs hang),
// its switch trays stop drawing power, its NVLink domain goes UNHEALTHY; power back: the trays boot.
// Trays pulled for another reason stay as they are.
//
// Cost: a change costs the rack it happens in.

// While what is left of the PSUs carries the GPUs at TDP nothing changes but the PSU's own status.
Status Nodes::SetPsus(ComponentId c, bool failed, FaultId cause) {
  Power& r = power_of(c);
  const RackModel& m = topo_.model();
  std::vector<ComponentId> psus;
  if (topo_.at(c).kind == Kind::kPsu)
    psus.push_back(c);
  else
    psus = topo_.ChildrenOf(c);
  for (ComponentId p : psus) {
    size_t k = static_cast<size_t>(topo_.at(topo_.at(p).parent).index * m.psus_per_shelf + topo_.at(p).index);
    if (r.psu_failed[k] == failed) continue;
    r.psu_failed[k] = failed;
    ctx_.Physics(p, failed ? "psu_failed" : "psu_up", 0, cause);
    // The shelf's BMC reports the PSU's state (Redfish PowerSupplies Status.Health) at its next poll.
    ctx_.Emit(TelemetrySample{p, Metric::kPsuOk, failed ? 0.0 : 1.0},
              SimContext::NextSlot(ctx_.PartPollPhase(topo_.at(p).parent), opt_.telemetry_period, clock_.Now()));
  }
  double left = static_cast<double>(std::count(r.psu_failed.begin(), r.psu_failed.end(), false)) * m.psu_kw * 1000;
  double load = m.compute_trays * m.gpus_per_tray * m.gpu_tdp_w;
  // The rack holds its own power off, the newest PSU fault as the cause; a region outage holding it too
  // keeps it dark after the PSUs are repaired.
  const ComponentId rack = topo_.RackOf(c);
  auto s = power_holds_.ReleaseHolder(rack, rack, 1);
  if (left < load) s = power_holds_.Place(rack, rack, cause, 0, 1);
  ApplyRackPower(rack, s, cause);
  return Status::Ok();
}

void Nodes::HoldRackPower(ComponentId rack, ComponentId holder, bool off, FaultId cause) {
  ApplyRackPower(rack, off ? power_holds_.Place(rack, holder, cause, 0, 1) : power_holds_.Release(rack, holder, cause, 1),
                 cause);
}

void Nodes::ApplyRackPower(ComponentId rack, const Holds<ComponentId>::State& s, FaultId cause) {
  Power& r = power_of(rack);
  if (s.held) r.cause = s.cause;
  if (r.powered != s.held) return;
  SetRackPowered(rack, !s.held, s.held ? s.cause : cause);
}

void Nodes::SetRackPowered(ComponentId rack, bool powered, FaultId cause) {
  Power& r = power_of(rack);
  r.powered = powered;
  ctx_.Physics(rack, powered ? "power_up" : "power_lost", 0, powered ? kNoFault : cause);
  for (ComponentId tray : topo_.ChildrenOf(rack)) {
    if (topo_.at(tray).kind != Kind::kComputeTray) continue;
    // The rack holds its trays out (cluster/holds.h): a tray also pulled stays out until both are back.
    const auto s = powered ? presence_holds_.ReleaseHolder(tray, rack, 1) : presence_holds_.Place(tray, rack, cause, 0, 1);
    ApplyTrayPresent(tray, s, cause);
  }
  thermal_.UpdateRackSwitchThermal(rack, kNoFault);  // its switch trays stop (or start) drawing power
  fabric_.UpdateDomainHealth(rack);
  if (topo_.DomainRacks() > 1)  // the other racks' jobs lose (or regain) the domain's partition too
    for (JobId j : fabric_.JobsInDomain(rack)) jobs_.RefreshJob(j);
}

}  // namespace rackchaos::cluster
