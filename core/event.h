// Everything that happens in a run, as small value structs in one variant.
//
// The runner appends events to the report store in the order they happen; metrics and renderers read
// only events. Ground truth (which fault caused a physical change) is carried in `cause` fields so
// that metrics can attribute damage; the healer never receives events, only observations.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "core/tray_list.h"
#include "core/units.h"

namespace rackchaos {

// An injector applied a fault.
struct FaultInjected {
  FaultId fault = kNoFault;
  std::string kind;       // "link_down", "gpu_throttle", ...
  ComponentId target = kNoComponent;
  int port = -1;          // NVLink port index when the target is a port, else -1
  std::string selector;   // as written in the plan
  std::string detail;     // parameters, e.g. "power_cap=600W baseline=1200W"
};

// An injector reverted a fault (its duration ended, or the run ended and the ledger cleaned up).
struct FaultReverted {
  FaultId fault = kNoFault;
  std::string detail;
};

// A physical change in the cluster: ground truth, for timelines and blast radius.
struct PhysicsChanged {
  ComponentId component = kNoComponent;
  std::string what;       // "thermal_slowdown", "thermal_shutdown", "removed", "inserted", "link_down", ...
  double value = 0;       // what-specific: temperature in C, bandwidth fraction, speed fraction
  FaultId cause = kNoFault;
};

// A healer detector raised a symptom.
struct Detected {
  DetectionId detection = kNoDetection;
  std::string detector;   // "heartbeat", "xid", "straggler", "thermal", "link_state", "job_exit"
  ComponentId component = kNoComponent;
  std::string symptom;    // human-readable, e.g. "Xid 145 NVLink error on port 5"
};

// The healer put a failure domain out of service.
struct Isolated {
  ComponentId component = kNoComponent;  // the domain chosen: a GPU, tray, valve, switch tray, rack...
  std::string domain;                    // its kind, e.g. "gpu", "compute_tray", "valve"
  std::vector<DetectionId> because;      // the detections it explains
  std::string reason;
};

// The healer (or the runner on its behalf) carried out an action on the backend.
struct ActionTaken {
  std::string action;     // "drain", "resume", "requeue_job", "gpu_reset", "diagnose", "alert"
  ComponentId component = kNoComponent;
  JobId job = kNoJob;
  bool ok = true;
  std::string detail;
};

enum class JobState { kQueued, kRunning, kHung, kRestarting, kFailed, kFinished };
const char* JobStateName(JobState s);

// A job changed state or speed. `steps` is the kept progress at this instant.
struct JobChanged {
  JobId job = kNoJob;
  JobState state = JobState::kQueued;
  double steps = 0;
  double step_time_s = 0;   // current step time while running; 0 otherwise
  double speed = 1;         // nominal step time / current step time
  int gpus = 0;
  Duration lost_work{};     // on a restart: running time since the last checkpoint, thrown away
  FaultId cause = kNoFault; // the fault behind the change, if any (ground truth)
  std::string detail;       // e.g. placement, or why it hung
  TrayList trays;           // where it runs (running, restarting); empty otherwise; shared, not copied
  // Of lost_work, what the newest checkpoint would have kept had its store acknowledged it: charged to
  // the store's fault (store_cause), the rest to `cause` (healer/metrics.cpp). Stored (schema version 11).
  Duration store_lost_work{};
  FaultId store_cause = kNoFault;
};

// A job wrote a checkpoint that was acknowledged.
struct Checkpointed {
  JobId job = kNoJob;
  double step = 0;
};

using EventBody = std::variant<FaultInjected, FaultReverted, PhysicsChanged, Detected, Isolated,
                               ActionTaken, JobChanged, Checkpointed>;

struct Event {
  Time at{};
  EventBody body;
};

// "fault_injected", "detected", ...: the stable type name stored in reports.
const char* EventTypeName(const EventBody& body);

// Where events go: the runner's recorder, a test's vector. Record() is called on the run's thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Record(const Event& event) = 0;
};

// Keeps every event in memory, in order.
class EventLog : public EventSink {
 public:
  void Record(const Event& event) override { events_.push_back(event); }
  const std::vector<Event>& events() const { return events_; }

 private:
  std::vector<Event> events_;
};

}  // namespace rackchaos
