// The one seam to the world: every verb that touches a rack goes through a Backend.
//
// SimBackend (cluster/sim_backend.h) is deterministic and fast; an SSH backend runs a site's command
// templates. A verb a backend cannot do returns NotSupported, which plan validation checks once
// (Supports()). Fault verbs take the id of the fault that calls them so that the simulator can record
// ground truth for blast-radius metrics; it is never shown to the healer. All calls happen on the
// run's event-loop thread.
//
// Besides the verbs, a backend carries a run's lifecycle (the engine, runner/engine/engine.h, calls it
// in this order): StartRun -> StartJobs -> StartObserving -> fault groups (StageGroup, the fault verbs,
// SealGroup, CommitGroup) -> StopObserving -> StopJobs -> RevertRemaining -> ResumeHeld -> Shutdown.
// What differs between the simulator and real hosts lives here, not in the engine: the simulator's
// verbs act the instant they are called (its group lead is zero); a site's are staged, armed ahead of
// time and landed together on the hosts' clocks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/job.h"
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

// The run a backend serves (Backend::StartRun): where its report is stored.
struct RunContext {
  std::string report_db;   // the report database's path
  int64_t report_run = 0;  // the run's id there
};

// How long before a fault group's instant the backend stages it (`stage`: the fault verbs run then,
// staged) and commits it (`commit`: it is told the instant). Zero for a backend whose verbs act the
// moment they are called.
struct GroupLeads {
  Duration stage{};
  Duration commit{};
};

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

  // --- the run's lifecycle. The defaults suit a backend with nothing to bring up whose verbs act at
  // once (tests' fakes); the simulator's are in cluster/sim_lifecycle.cpp.

  // A part's serial for the report: SerialOf(id), or SerialPrefix() followed by its name when that is
  // empty. The view must stay valid while the backend lives.
  virtual std::string SerialPrefix() const { return Name() + "-"; }
  virtual std::string_view SerialOf(ComponentId) const { return {}; }
  // True when the backend has an observation source (then the healer runs and the plan's jobs start);
  // a site without one runs only the faults.
  virtual bool Observes() const { return true; }
  // Brings the backend up once the run is on record and before anything is applied. A failure means
  // nothing was touched: the engine ends the run as an error with its message (and calls Shutdown).
  virtual Status StartRun(const RunContext&) { return Status::Ok(); }
  // Starts the plan's jobs (job ids are their indexes). Fails when one could not be started.
  virtual Status StartJobs(const std::vector<JobConfig>& jobs) {
    return jobs.empty() ? Status::Ok() : Status::NotSupported("this backend cannot run jobs");
  }
  // Starts the observation source: from now on subscribers receive observations.
  virtual void StartObserving() {}
  // How many of the plan's jobs run now (the progress line), or -1 when the backend does not know.
  virtual int JobsRunning() const { return -1; }

  // Fault groups: the faults that share an instant land together. StageGroup(at) opens a group; until
  // SealGroup the fault verbs stage their faults (every check and record done, nothing changed yet).
  // It returns false for a backend that stages nothing: its verbs have acted when they return, and
  // SealGroup and CommitGroup have nothing to do.
  virtual GroupLeads Leads() const { return {}; }
  virtual bool StageGroup(Time) { return false; }
  // Forgets what `fault` staged (its staging failed part-way); nothing of it will run.
  virtual void DropStaged(FaultId, const std::string& /*why*/) {}
  // Ends staging and readies the group to land; the faults that could not be readied, and why
  // (forgotten: nothing of them ran).
  virtual std::map<FaultId, Status> SealGroup() { return {}; }
  // Lands the sealed group at the instant `at` and returns once it has landed (at or after `at`); the
  // faults that failed, and why (each undone as far as it can be).
  virtual std::map<FaultId, Status> CommitGroup(Time) { return {}; }
  // Drops a staged or sealed group without landing it: nothing of it runs, and what may have run is
  // reverted.
  virtual void AbandonGroup(const std::string& /*why*/) {}
  // Reverts whatever `fault` still holds, a fault part of which failed to land.
  virtual Status UndoFault(FaultId, const std::string& /*why*/) { return Status::Ok(); }

  // Stops the observation source: no observation is delivered after it returns.
  virtual void StopObserving() {}
  // Stops the plan's jobs (those StartJobs started); fails when one could not be stopped.
  virtual Status StopJobs(const std::vector<JobConfig>&) { return Status::Ok(); }
  // A safety net after the engine's own reverts: reverts whatever is still applied through the backend.
  virtual Status RevertRemaining(const std::string& /*why*/) { return Status::Ok(); }
  // Returns to service the trays the healer still holds isolated when the run ends. The simulator
  // keeps them (its cluster ends with the run); a site resumes them, recording each as an action.
  virtual Status ResumeHeld(const std::vector<ComponentId>& /*trays*/) { return Status::Ok(); }
  // How many faults are still applied through the backend (what `rackchaos recover` would revert).
  virtual size_t StillApplied() const { return 0; }
  // Whether a revert of `fault` that failed (its host did not answer) was carried out later by the
  // backend itself, verified, and nothing of the fault is applied now: the run then ends as a run whose
  // faults were all reverted. False when the backend cannot tell (the engine counts the failure).
  virtual bool RevertedLate(FaultId /*fault*/) const { return false; }
  // Releases what StartRun took, after the run's verdict is stored. Called once StartRun was called,
  // also when it failed.
  virtual Status Shutdown() { return Status::Ok(); }
};

}  // namespace rackchaos::cluster
