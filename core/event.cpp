#include "core/event.h"

namespace rackchaos {

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kQueued: return "queued";
    case JobState::kRunning: return "running";
    case JobState::kHung: return "hung";
    case JobState::kRestarting: return "restarting";
    case JobState::kFailed: return "failed";
    case JobState::kFinished: return "finished";
  }
  return "unknown";
}

const char* EventTypeName(const EventBody& body) {
  struct Namer {
    const char* operator()(const FaultInjected&) const { return "fault_injected"; }
    const char* operator()(const FaultReverted&) const { return "fault_reverted"; }
    const char* operator()(const PhysicsChanged&) const { return "physics"; }
    const char* operator()(const Detected&) const { return "detected"; }
    const char* operator()(const Isolated&) const { return "isolated"; }
    const char* operator()(const ActionTaken&) const { return "action"; }
    const char* operator()(const JobChanged&) const { return "job"; }
    const char* operator()(const Checkpointed&) const { return "checkpoint"; }
  };
  return std::visit(Namer{}, body);
}

}  // namespace rackchaos
