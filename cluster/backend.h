// The one seam to the world: every verb that touches a rack goes through a Backend.
//
// SimBackend (cluster/sim_backend.h) is deterministic and fast; an SSH backend runs a site's command
// templates. A verb a backend cannot do returns NotSupported, which plan validation checks once
// (Supports()). Fault verbs take the id of the fault that calls them so that the simulator can record
// ground truth for blast-radius metrics; it is never shown to the healer. All calls happen on the
// run's event-loop thread.
#pragma once

#include <functional>
#include <string>

#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/ids.h"
#include "core/status.h"

namespace rackchaos::cluster {

enum class Verb {
  kNvlinkPort, kNicLink, kPowerCap, kValve, kTrayPresence,
  kDrain, kResume, kGpuReset, kRequeueJob, kDiagnostic,
  kGpuFailure, kProcessCrash, kReboot, kComponentFailure, kLinkBandwidth, kStorageRead,
  kStoreRate, kRegionOutage,
};
const char* VerbName(Verb v);

// The value states a fault holds (cluster/holds.h): its Set* verb places the hold, its revert ends it
// with Backend::Release. Nothing is inferred from a value: a fault setting 100% or the baseline holds
// like any other. While several faults hold one state the worst (lowest) value is in force; the last
// release gives back the value the state had without them.
enum class Held { kPowerCap, kValveOpening, kLinkBandwidth, kStorageRead, kStoreRate };
const char* HeldName(Held h);  // "power cap", ...
constexpr Verb VerbOf(Held h) {
  switch (h) {
    case Held::kPowerCap: return Verb::kPowerCap;
    case Held::kValveOpening: return Verb::kValve;
    case Held::kLinkBandwidth: return Verb::kLinkBandwidth;
    case Held::kStorageRead: return Verb::kStorageRead;
    case Held::kStoreRate: return Verb::kStoreRate;
  }
  return Verb::kPowerCap;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;  // "sim", "ssh"
  virtual bool Supports(Verb verb) const = 0;

  // --- fault verbs (injectors); Get* read the value a state has now (the baseline for the report)
  virtual Status SetNvlinkPort(ComponentId gpu, int port, bool up, FaultId cause) = 0;
  virtual Status SetNicLink(ComponentId nic, bool up, FaultId cause) = 0;
  virtual Result<double> GetPowerCap(ComponentId gpu) = 0;
  virtual Status SetPowerCap(ComponentId gpu, double watts, FaultId cause) = 0;
  virtual Result<double> GetValveOpening(ComponentId valve) = 0;
  virtual Status SetValveOpening(ComponentId valve, double fraction, FaultId cause) = 0;
  // A value fault's revert: ends the hold `cause` placed on state `what` of `target` (a link's port in
  // target.port) with the matching Set* verb. The state goes to the worst value the other holds give,
  // or back to its value without holds after the last. Ok when `cause` holds nothing there (released
  // twice, or its apply failed); Invalid for a target the state does not apply to.
  virtual Status Release(Held what, Target target, FaultId cause) = 0;
  virtual Status SetTrayPresent(ComponentId tray, bool present, FaultId cause) = 0;
  // A GPU fails (falls off the bus, double-bit ECC, GSP error: the driver prints Xid `xid`) or is repaired.
  virtual Status SetGpuFailed(ComponentId, bool /*failed*/, int /*xid*/, FaultId) {
    return Status::NotSupported("this backend cannot fail a GPU");
  }
  // A rack-level part fails or is repaired: an NVLink switch tray, a PSU, a power shelf, the CDU (its
  // pumps), or a tray's coolant zone leaks (given its valve). What follows is physics
  // (cluster/sim_domains.cpp): bandwidth, power, cooling.
  virtual Status SetComponentFailed(ComponentId, bool /*failed*/, FaultId) {
    return Status::NotSupported("this backend cannot fail a rack-level component");
  }
  // A link stays up but carries only `fraction` (0, 1] of its line rate (a NIC: `port` -1; an NVLink port
  // of a GPU: `port` >= 0), held until Release(kLinkBandwidth).
  virtual Status SetLinkBandwidth(ComponentId, int /*port*/, double /*fraction*/, FaultId) {
    return Status::NotSupported("this backend cannot limit a link's bandwidth");
  }
  // A compute tray's storage path: its NVMe cache reads at `fraction` (0, 1] of its rate, or is lost
  // (`fraction` 0: reads go to the region's object store), held until Release(kStorageRead).
  virtual Status SetStorageRead(ComponentId, double /*fraction*/, FaultId) {
    return Status::NotSupported("this backend cannot degrade a tray's storage path");
  }
  // A region's object store serves at `fraction` [0, 1] of its read rate (0: failed), or its checkpoint
  // store cannot acknowledge writes (`fraction` below 1), held until Release(kStoreRate).
  virtual Status SetStoreRate(ComponentId, double /*fraction*/, FaultId) {
    return Status::NotSupported("this backend cannot degrade a region's object or checkpoint store");
  }
  // Every rack of a region goes down together (a site outage), its stores with it; false brings it back.
  virtual Status SetRegionDown(ComponentId, bool /*down*/, FaultId) {
    return Status::NotSupported("this backend cannot take a region down");
  }
  // The processes on a GPU die (a software bug): the job using it fails at once.
  virtual Status CrashProcesses(ComponentId, FaultId) {
    return Status::NotSupported("this backend cannot crash a job's processes");
  }

  // --- healer verbs
  // Drain takes a compute tray (cordon the node) or an NVLink switch tray (take it out of the fabric).
  virtual Status Drain(ComponentId tray, const std::string& reason) = 0;
  virtual Status Resume(ComponentId tray) = 0;
  virtual Status ResetGpu(ComponentId gpu) = 0;
  // Restarts the job from its last checkpoint on healthy, undrained trays (queued until enough exist).
  virtual Status RequeueJob(JobId job, const std::string& reason) = 0;
  // Reboots a tray's node: its heartbeats stop until it has booted; a GPU that only needed a reset
  // comes back, a failed part stays failed.
  virtual Status RebootNode(ComponentId) { return Status::NotSupported("this backend cannot reboot a node"); }
  // Starts a diagnostic on a tray; its DiagnosticResult arrives as an observation when it finishes.
  virtual Status RunDiagnostic(ComponentId tray) = 0;

  // Observations go to every subscribed sink, in time order. The sink must outlive the backend's use.
  virtual void Subscribe(ObservationSink* sink) = 0;
};

}  // namespace rackchaos::cluster
