// The held value states of the simulated cluster (cluster/holds.h): a GPU's power cap, a valve's
// opening, a link's bandwidth, a tray's storage read rate and a region store's rate.
//
// Each Set* verb with a fault places (or moves) that fault's hold; Release ends it, by the fault's id.
// Neither infers anything from the value: a fault that sets 100% (or the baseline) holds like any
// other, and only its own Release ends it. A Set* without a fault (kNoFault) is the site's own setting,
// which the last release gives back. What each state does once its value changes is its Apply*:
// power cap and valve here, link bandwidth in sim_links.cpp, storage read in sim_storage.cpp, store
// rate in sim_regions.cpp, a switch tray's valve in sim_switch_thermal.cpp.
//
// The hold stacks (SimBackend's *_holds_): who holds each NIC link down (the NIC itself for a link_down,
// else its leaf, rail or DPU), a link's bandwidth, a tray's storage path, a GPU's power cap, a valve's
// opening, a tray's presence (the tray for a tray_pull, its rack for a power loss). The plain state
// beside each (nic_up, degraded_, storage_, cap_w, valve, present) is the worst hold's value. Also a
// rack's power (held off by the rack for its PSUs, by its region for an outage), a region's outage and
// a store's rate (held by the store, one hold per fault): sim_domains.cpp, sim_regions.cpp.
#include <algorithm>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

const char* HeldName(Held h) {
  switch (h) {
    case Held::kPowerCap: return "power cap";
    case Held::kValveOpening: return "valve opening";
    case Held::kLinkBandwidth: return "link bandwidth";
    case Held::kStorageRead: return "storage read rate";
    case Held::kStoreRate: return "store rate";
  }
  return "unknown";
}

Status SimBackend::CheckHeld(Held what, Target& t) const {
  const Component& c = topo_.at(t.component);
  auto wrong = [&](const char* wanted) {
    return Status::Invalid(c.name + " is a " + KindName(c.kind) + ", not " + wanted);
  };
  switch (what) {
    case Held::kPowerCap:
      if (c.kind != Kind::kGpu) return Status::Invalid(c.name + " is not a GPU");
      break;
    case Held::kValveOpening:  // a switch tray stands for its own valve (sim_switch_thermal.cpp)
      if (c.kind != Kind::kValve && c.kind != Kind::kSwitchTray) return Status::Invalid(c.name + " is not a valve");
      break;
    case Held::kLinkBandwidth:
      if (c.kind == Kind::kNic) {
        t.port = -1;
      } else if (c.kind != Kind::kGpu) {
        return wrong("a NIC or a GPU's NVLink port");
      } else if (t.port < 0 || t.port >= topo_.model().nvlink_links_per_gpu) {
        return Status::Invalid("no NVLink port " + std::to_string(t.port) + " on " + c.name);
      }
      break;
    case Held::kStorageRead:
      if (c.kind != Kind::kComputeTray) return wrong("a compute tray");
      break;
    case Held::kStoreRate:
      if (c.kind != Kind::kObjectStore && c.kind != Kind::kCheckpointStore)
        return wrong("a region's object or checkpoint store");
      break;
  }
  return Status::Ok();
}

double SimBackend::ValveNow(ComponentId valve) const {
  return topo_.at(valve).kind == Kind::kSwitchTray ? SwitchValve(valve) : tray_[slot(topo_.TrayOf(valve))].valve;
}

Status SimBackend::Release(Held what, Target t, FaultId cause) {
  RC_RETURN_IF_ERROR(CheckHeld(what, t));
  const ComponentId c = t.component;
  switch (what) {
    case Held::kPowerCap: ApplyPowerCap(c, cap_holds_.Release(c, c, cause, gpu(c).cap_w), cause); break;
    case Held::kValveOpening: ApplyValve(c, valve_holds_.Release(c, c, cause, ValveNow(c)), cause); break;
    case Held::kLinkBandwidth:
      ApplyLinkBandwidth(t, bandwidth_holds_.Release({c, t.port}, c, cause, 1), cause);
      break;
    case Held::kStorageRead: ApplyStorageRead(c, storage_holds_.Release(c, c, cause, 1), cause, false); break;
    case Held::kStoreRate: ApplyStoreRate(c, store_holds_.Release(c, c, cause, 1), cause); break;
  }
  return Status::Ok();
}

Result<double> SimBackend::GetPowerCap(ComponentId gpu_id) {
  if (topo_.at(gpu_id).kind != Kind::kGpu) return Status::Invalid(topo_.at(gpu_id).name + " is not a GPU");
  return gpu(gpu_id).cap_w;
}

Status SimBackend::SetPowerCap(ComponentId gpu_id, double watts, FaultId cause) {
  Target t{gpu_id, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kPowerCap, t));
  const double w = std::clamp(watts, topo_.model().gpu_min_power_w, topo_.model().gpu_tdp_w);
  ApplyPowerCap(gpu_id,
                cause == kNoFault ? cap_holds_.SetUnheld(gpu_id, w)
                                  : cap_holds_.Place(gpu_id, gpu_id, cause, w, gpu(gpu_id).cap_w),
                cause);
  return Status::Ok();
}

void SimBackend::ApplyPowerCap(ComponentId gpu_id, const Holds<ComponentId>::State& s, FaultId cause) {
  Gpu& g = gpu(gpu_id);
  const FaultId why = s.held ? s.cause : cause;
  g.cap_w = s.value;
  g.cap_cause = g.cap_w < g.baseline_cap_w ? why : kNoFault;
  Physics(gpu_id, "power_cap", g.cap_w, why);
  UpdateThermal(gpu_id);
  if (JobId job = JobOfGpu(gpu_id); job != kNoJob) RefreshJob(job);
}

Result<double> SimBackend::GetValveOpening(ComponentId valve) {
  Target t{valve, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kValveOpening, t));
  return ValveNow(valve);
}

Status SimBackend::SetValveOpening(ComponentId valve, double fraction, FaultId cause) {
  Target t{valve, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kValveOpening, t));
  const double f = std::clamp(fraction, 0.0, 1.0);
  ApplyValve(valve,
             cause == kNoFault ? valve_holds_.SetUnheld(valve, f)
                               : valve_holds_.Place(valve, valve, cause, f, ValveNow(valve)),
             cause);
  return Status::Ok();
}

void SimBackend::ApplyValve(ComponentId valve, const Holds<ComponentId>::State& s, FaultId cause) {
  if (topo_.at(valve).kind == Kind::kSwitchTray) return ApplySwitchValve(valve, s, cause);
  ComponentId tray = topo_.TrayOf(valve);
  Tray& t = tray_[slot(tray)];
  const FaultId why = s.held ? s.cause : cause;
  t.valve = s.value;
  t.valve_cause = t.valve < 1 ? why : kNoFault;
  Physics(valve, "valve_opening", t.valve, why);
  for (ComponentId g : topo_.GpusOfTray(tray)) UpdateThermal(g);
  WatchTelemetry(tray);
}

// Two link_degrade on one link overlap: the lowest rate held wins.
Status SimBackend::SetLinkBandwidth(ComponentId link, int port, double fraction, FaultId cause) {
  Target t{link, port};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kLinkBandwidth, t));
  if (!(fraction > 0) || fraction > 1) return Status::Invalid("link bandwidth must be above 0 and at most 100%");
  ApplyLinkBandwidth(t, bandwidth_holds_.Place({link, t.port}, link, cause, fraction, 1), cause);
  return Status::Ok();
}

// storage_degrade and cache_fail on one tray overlap: the worst read rate held wins.
Status SimBackend::SetStorageRead(ComponentId tray, double fraction, FaultId cause) {
  Target t{tray, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kStorageRead, t));
  if (!(fraction >= 0) || fraction > 1) return Status::Invalid("storage read fraction must be from 0 to 100%");
  ApplyStorageRead(tray, storage_holds_.Place(tray, tray, cause, fraction, 1), cause, fraction <= 0);
  return Status::Ok();
}

// Two faults on one store overlap: the worst rate held wins, the last release gives 100% back.
Status SimBackend::SetStoreRate(ComponentId store, double fraction, FaultId cause) {
  Target t{store, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kStoreRate, t));
  if (!(fraction >= 0) || fraction > 1) return Status::Invalid("store rate must be from 0 to 100%");
  ApplyStoreRate(store, store_holds_.Place(store, store, cause, fraction, 1), cause);
  return Status::Ok();
}

}  // namespace rackchaos::cluster
