// The held value states of the simulated cluster (cluster/holds.h): a GPU's power cap, a valve's
// opening, a link's bandwidth, a tray's storage read rate and a region store's rate.
//
// Each Set* verb with a fault places (or moves) that fault's hold; Release ends it, by the fault's id.
// Neither infers anything from the value: a fault that sets 100% (or the baseline) holds like any
// other, and only its own Release ends it. A Set* without a fault (kNoFault) is the site's own setting,
// which the last release gives back. The facade checks the target and the value here; the hold stacks
// and what each state does once its value changes live with the part that owns it: power cap and valve
// in thermal (sim_cooling.cpp; a switch tray's valve in sim_switch_thermal.cpp), link bandwidth in the
// fabric (sim_links.cpp), storage read and store rate in storage (sim_storage.cpp).
// Faults hold other states too, inside their parts: a NIC's link (sim_nics.cpp), a tray's presence and
// a rack's power (sim_nodes.cpp), a region's outage (sim_region_health.cpp).
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
  const Component& c = ctx_.topo().at(t.component);
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
      } else if (t.port < 0 || t.port >= ctx_.topo().model().nvlink_links_per_gpu) {
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

Status SimBackend::Release(Held what, Target t, FaultId cause) {
  ctx_.SettleOwed();
  RC_RETURN_IF_ERROR(CheckHeld(what, t));
  const ComponentId c = t.component;
  switch (what) {
    case Held::kPowerCap: thermal_.ReleasePowerCap(c, cause); break;
    case Held::kValveOpening: thermal_.ReleaseValve(c, cause); break;
    case Held::kLinkBandwidth: fabric_.ReleaseLinkBandwidth(t, cause); break;
    case Held::kStorageRead: storage_.ReleaseStorageRead(c, cause); break;
    case Held::kStoreRate: storage_.ReleaseStoreRate(c, cause); break;
  }
  return Status::Ok();
}

Result<double> SimBackend::GetPowerCap(ComponentId gpu) {
  ctx_.SettleOwed();
  if (ctx_.topo().at(gpu).kind != Kind::kGpu) return Status::Invalid(ctx_.topo().at(gpu).name + " is not a GPU");
  return thermal_.CapOf(gpu);
}

Status SimBackend::SetPowerCap(ComponentId gpu, double watts, FaultId cause) {
  ctx_.SettleOwed();
  Target t{gpu, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kPowerCap, t));
  thermal_.SetPowerCap(gpu, watts, cause);
  return Status::Ok();
}

Result<double> SimBackend::GetValveOpening(ComponentId valve) {
  ctx_.SettleOwed();
  Target t{valve, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kValveOpening, t));
  return thermal_.ValveNow(valve);
}

Status SimBackend::SetValveOpening(ComponentId valve, double fraction, FaultId cause) {
  ctx_.SettleOwed();
  Target t{valve, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kValveOpening, t));
  thermal_.SetValveOpening(valve, fraction, cause);
  return Status::Ok();
}

Status SimBackend::SetLinkBandwidth(ComponentId link, int port, double fraction, FaultId cause) {
  ctx_.SettleOwed();
  Target t{link, port};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kLinkBandwidth, t));
  if (!(fraction > 0) || fraction > 1) return Status::Invalid("link bandwidth must be above 0 and at most 100%");
  fabric_.SetLinkBandwidth(t, fraction, cause);
  return Status::Ok();
}

Status SimBackend::SetStorageRead(ComponentId tray, double fraction, FaultId cause) {
  ctx_.SettleOwed();
  Target t{tray, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kStorageRead, t));
  if (!(fraction >= 0) || fraction > 1) return Status::Invalid("storage read fraction must be from 0 to 100%");
  storage_.SetStorageRead(tray, fraction, cause);
  return Status::Ok();
}

Status SimBackend::SetStoreRate(ComponentId store, double fraction, FaultId cause) {
  ctx_.SettleOwed();
  Target t{store, -1};
  RC_RETURN_IF_ERROR(CheckHeld(Held::kStoreRate, t));
  if (!(fraction >= 0) || fraction > 1) return Status::Invalid("store rate must be from 0 to 100%");
  storage_.SetStoreRate(store, fraction, cause);
  return Status::Ok();
}

}  // namespace rackchaos::cluster
