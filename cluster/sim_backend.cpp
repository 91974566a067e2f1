// The facade (cluster/sim_backend.h): builds the parts and sends each verb to the part that owns it.
#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

const char* VerbName(Verb v) {
  switch (v) {
    case Verb::kNvlinkPort: return "nvlink_port";
    case Verb::kNicLink: return "nic_link";
    case Verb::kPowerCap: return "power_cap";
    case Verb::kValve: return "valve";
    case Verb::kTrayPresence: return "tray_presence";
    case Verb::kDrain: return "drain";
    case Verb::kResume: return "resume";
    case Verb::kGpuReset: return "gpu_reset";
    case Verb::kRequeueJob: return "requeue_job";
    case Verb::kDiagnostic: return "diagnostic";
    case Verb::kGpuFailure: return "gpu_failure";
    case Verb::kProcessCrash: return "process_crash";
    case Verb::kReboot: return "reboot";
    case Verb::kComponentFailure: return "component_failure";
    case Verb::kLinkBandwidth: return "link_bandwidth";
    case Verb::kStorageRead: return "storage_read";
    case Verb::kStoreRate: return "store_rate";
    case Verb::kRegionOutage: return "region_outage";
  }
  return "unknown";
}

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kGpuTemperature: return "gpu_temperature_c";
    case Metric::kGpuPower: return "gpu_power_w";
    case Metric::kGpuClockFraction: return "gpu_clock_fraction";
    case Metric::kThermalThrottle: return "gpu_thermal_throttle";
    case Metric::kPowerCapped: return "gpu_power_capped";
    case Metric::kCoolantFlow: return "coolant_flow_l_per_min";
    case Metric::kPsuOk: return "psu_ok";
    case Metric::kLeak: return "leak_detected";
    case Metric::kPartOk: return "part_ok";
    case Metric::kProbeOk: return "probe_ok";
    case Metric::kSwitchTemperature: return "switch_temperature_c";
  }
  return "unknown";
}

bool IsGpuMetric(Metric m) {
  switch (m) {
    case Metric::kGpuTemperature:
    case Metric::kGpuPower:
    case Metric::kGpuClockFraction:
    case Metric::kThermalThrottle:
    case Metric::kPowerCapped:
      return true;
    case Metric::kCoolantFlow:
    case Metric::kPsuOk:
    case Metric::kLeak:
    case Metric::kPartOk:
    case Metric::kProbeOk:
    case Metric::kSwitchTemperature:
      return false;
  }
  return false;
}

// Each random process draws from its own stream, forked by name from the run's generator (not from its
// position), so adding a part or a process shifts no other part's draws.
SimBackend::SimBackend(const Topology& topology, VirtualClock& clock, Rng rng, EventSink& events, SimOptions options)
    : ctx_(topology, clock, events, std::move(options), rng.Fork("part-poll-phase")),
      scheduler_(ctx_, rng.Fork("step-jitter"), rng.Fork("report-phase"), nodes_, thermal_, fabric_, storage_,
                 regions_),
      nodes_(ctx_, rng.Fork("phases"), scheduler_, thermal_, fabric_),
      thermal_(ctx_, scheduler_, nodes_, fabric_),
      fabric_(ctx_, rng.Fork("comm-jitter"), scheduler_, nodes_, thermal_),
      storage_(ctx_, scheduler_, regions_),
      regions_(ctx_, rng.Fork("probe-phase"), scheduler_, nodes_) {}

void SimBackend::Start() {
  for (ComponentId tray : ctx_.topo().trays()) thermal_.WatchTelemetry(tray);
  scheduler_.PlaceQueuedJobs();
}

// ---------------------------------------------------------------- fault verbs

Status SimBackend::SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause) {
  ctx_.SettleOwed();
  return fabric_.SetNvlinkPort(gpu, port, up, cause);
}

Status SimBackend::SetNicLink(ComponentId nic, bool up, FaultId cause) { ctx_.SettleOwed(); return fabric_.SetNicLink(nic, up, cause); }

Status SimBackend::SetTrayPresent(ComponentId tray, bool present, FaultId cause) {
  ctx_.SettleOwed();
  return nodes_.SetTrayPresent(tray, present, cause);
}

Status SimBackend::SetGpuFailed(ComponentId gpu, bool failed, int xid, FaultId cause) {
  ctx_.SettleOwed();
  return nodes_.SetGpuFailed(gpu, failed, xid, cause);
}

Status SimBackend::CrashProcesses(ComponentId gpu, FaultId cause) { return scheduler_.CrashProcesses(gpu, cause); }

// What follows is physics in the part that owns the component: bandwidth, power, cooling.
Status SimBackend::SetComponentFailed(ComponentId c, bool failed, FaultId cause) {
  ctx_.SettleOwed();
  const Topology& topo = ctx_.topo();
  switch (topo.at(c).kind) {
    case Kind::kSwitchTray: return fabric_.SetSwitchFailed(c, failed, cause);
    case Kind::kCdu: return thermal_.SetCduFailed(c, failed, cause);
    case Kind::kPump: return thermal_.SetPump(c, failed, cause);
    case Kind::kDpu: return fabric_.SetDpuFailed(c, failed, cause);
    case Kind::kSpine:
    case Kind::kSuperSpine: return fabric_.SetSpineFailed(c, failed, cause);
    case Kind::kPsu:
    case Kind::kPowerShelf: return nodes_.SetPsus(c, failed, cause);
    case Kind::kValve: return thermal_.SetLeak(c, failed, cause);
    case Kind::kLeaf:
    case Kind::kRail: return fabric_.SetFabricFailed(c, failed, cause);
    default:
      return Status::Invalid(
          topo.at(c).name + " is a " + KindName(topo.at(c).kind) +
          "; a switch tray, CDU, pump, power shelf, PSU, tray valve (a leak), leaf, rail, spine or DPU can fail "
          "this way");
  }
}

Status SimBackend::SetRegionDown(ComponentId region, bool down, FaultId cause) {
  ctx_.SettleOwed();
  return regions_.SetRegionDown(region, down, cause);
}

// ---------------------------------------------------------------- healer verbs

Status SimBackend::Drain(ComponentId tray, const std::string&) {
  ctx_.SettleOwed();
  const Component& c = ctx_.topo().at(tray);
  if (c.kind == Kind::kSwitchTray) return fabric_.TakeSwitchTrayOut(tray, true);
  if (c.kind == Kind::kSpine || c.kind == Kind::kSuperSpine) return fabric_.TakeSpineOut(tray, true);
  if (c.kind != Kind::kComputeTray) return Status::Invalid(c.name + " is not a compute tray");
  nodes_.Drain(tray);
  return Status::Ok();
}

Status SimBackend::Resume(ComponentId tray) {
  ctx_.SettleOwed();
  const Component& c = ctx_.topo().at(tray);
  if (c.kind == Kind::kSwitchTray) return fabric_.TakeSwitchTrayOut(tray, false);
  if (c.kind == Kind::kSpine || c.kind == Kind::kSuperSpine) return fabric_.TakeSpineOut(tray, false);
  if (c.kind != Kind::kComputeTray) return Status::Invalid(c.name + " is not a compute tray");
  nodes_.Resume(tray);
  return Status::Ok();
}

Status SimBackend::ResetGpu(ComponentId gpu) { ctx_.SettleOwed(); return nodes_.ResetGpu(gpu); }

Status SimBackend::RequeueJob(JobId job, const std::string& reason) { return scheduler_.RequeueJob(job, reason); }

Status SimBackend::RunDiagnostic(ComponentId tray) {
  ctx_.SettleOwed();
  const Component& c = ctx_.topo().at(tray);
  if (c.kind == Kind::kSwitchTray) {
    fabric_.DiagnoseSwitchTray(tray);
    return Status::Ok();
  }
  if (c.kind == Kind::kSpine || c.kind == Kind::kSuperSpine) {
    fabric_.DiagnoseSpine(tray);
    return Status::Ok();
  }
  if (c.kind != Kind::kComputeTray) return Status::Invalid(c.name + " is not a compute tray");
  nodes_.RunDiagnostic(tray);
  return Status::Ok();
}

Status SimBackend::RebootNode(ComponentId tray) { ctx_.SettleOwed(); return nodes_.RebootNode(tray); }

// ---------------------------------------------------------------- inspection

double SimBackend::GpuTemperature(ComponentId gpu) const {
  ctx_.SettleOwed();
  return thermal_.Temperature(gpu, ctx_.clock().Now()); }

SimBackend::SpineCrossing SimBackend::JobSpineCrossing(JobId job) const {
  ctx_.SettleOwed();
  const SimJob& j = scheduler_.jobs()[job];
  return CrossingOf(ctx_.topo(), j.cfg, j.at);
}

}  // namespace rackchaos::cluster
