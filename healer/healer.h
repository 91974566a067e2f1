// The healer: detect -> localize -> isolate -> remediate -> return to service.
//
// It subscribes to a backend's observations (symptoms only), raises symptoms through its detectors,
// waits a short correlation window so that symptoms of one failure are explained together, isolates
// the smallest domain (draining the trays it covers, within the circuit breaker), restarts the jobs
// that ran there from their checkpoints, and later diagnoses isolated trays and resumes those that pass.
// Every detection, isolation and action is recorded as an event. Single-threaded, on the run's clock.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <variant>
#include <vector>

#include "cluster/backend.h"
#include "core/event.h"
#include "healer/by_component.h"
#include "healer/detector.h"
#include "healer/localizer.h"
#include "healer/policy.h"

namespace rackchaos::healer {

class Healer : public cluster::ObservationSink {
 public:
  Healer(const cluster::Topology& topo, Clock& clock, cluster::Backend& backend, EventSink& events, Policy policy);

  void OnObservation(const cluster::Observation& obs) override;

  // The lowest line of its detectors under `policy` (Detector::GpuTemperatureLineC): GPU polls below it,
  // of GPUs that neither throttle, nor sit at a power cap, nor are shut down, make the healer do nothing.
  static double GpuTemperatureLineC(const Policy& policy);

  const Policy& policy() const { return policy_; }
  bool IsIsolated(ComponentId tray) const { return isolated_.count(tray) > 0; }
  // Isolated and drained (its drain ran): the trays the end of a run returns to service. A tray whose
  // drain failed never left service and is not returned.
  bool HoldsDrained(ComponentId tray) const {
    auto it = isolated_.find(tray);
    return it != isolated_.end() && it->second.drained;
  }

 private:
  struct Pending {
    Symptom symptom;
    DetectionId id;
  };
  // An isolated tray on its way back: [reboot or GPU resets] -> diagnostic -> (failed: wait for the
  // repair of the domain's class, then diagnose again every `recheck`) -> (passed after a failure:
  // burn-in, diagnose again) -> resume.
  struct Quarantine {
    ComponentId domain;
    std::vector<ComponentId> reset_gpus;  // GPUs whose Xid asked for a reset
    bool reboot = false;                  // an Xid asked for a node reboot
    // Drained, and every job that ran on it requeued: the precondition of a GPU reset or a reboot, which
    // would kill whatever still runs there (a real `nvidia-smi -r` refuses a GPU with processes).
    bool held = true;
    bool drained = true;                  // its drain ran; one that failed never left service: no resume
    bool rebooted_cool = false;           // rebooted while its coolant flowed: another reboot would not help
    bool failed = false;                  // a diagnostic failed: the next pass is a return after repair
    bool waited_repair = false;
    bool burning_in = false;
  };

  void Raise(Symptom s);
  void Clear(SymptomClass cls, ComponentId component);
  void OnWindowClosed();
  void Isolate(const IsolationDecision& d, const std::vector<Pending>& batch);
  bool IsPart(ComponentId c) const;
  void IsolatePart(const IsolationDecision& d);
  void FailOver(const IsolationDecision& d);           // a region: its jobs restart elsewhere
  bool InFailedOverRegion(ComponentId tray) const;
  bool CduFenced(ComponentId rack) const;  // a tray of the rack is isolated for its CDU
  bool BreakerAllows(int gpus, const std::string& domain_name);
  // Requeues the jobs running on `trays` (when `requeue`); returns those trays a job still runs on (not
  // requeued, or its requeue failed).
  std::set<ComponentId> RestartJobsOn(const std::set<ComponentId>& trays, const std::string& reason,
                                      bool requeue = true);
  bool RestartJob(JobId job, const std::string& reason);
  bool Held(ComponentId tray, const char* step);
  void ScheduleRecheck(ComponentId tray);
  void After(Duration d, ComponentId tray, void (Healer::*step)(ComponentId));
  void Remediate(ComponentId tray);
  void RetryDrain(ComponentId tray);  // a drain that failed at isolation, once more at the recheck
  bool Reboot(ComponentId tray, const std::string& why);
  bool CoolingOk(ComponentId tray) const;
  void Diagnose(ComponentId tray);
  void OnDiagnostic(const cluster::DiagnosticResult& r);
  std::vector<ComponentId> TraysOfDomain(ComponentId domain) const;
  void Act(const char* action, ComponentId c, JobId job, Status s, const std::string& detail);

  const cluster::Topology& topo_;
  Clock& clock_;
  cluster::Backend& backend_;
  EventSink& events_;
  Policy policy_;
  std::vector<std::unique_ptr<Detector>> detectors_;
  // By observation kind (ObservationBody index): the detectors that read it, in table order.
  std::array<std::vector<Detector*>, std::variant_size_v<cluster::ObservationBody>> readers_;
  // By metric: the readers of telemetry samples that read it (Detector::ReadsMetric), in table order.
  std::array<std::vector<Detector*>, cluster::kMetricCount> sample_readers_;
  DetectorContext ctx_;

  DetectionId next_detection_ = 1;
  std::vector<Pending> pending_;
  TimerId window_timer_ = 0;
  std::map<ComponentId, Quarantine> isolated_;             // by tray (or switch tray taken out)
  std::deque<std::pair<Time, int>> breaker_;               // isolations in the window: when, GPUs
  std::map<JobId, TrayList> job_trays_;                    // the scheduler's view
  std::map<JobId, JobState> job_state_;
  ByComponent<uint8_t> flow_low_;                          // by valve: its last coolant-flow reading was low
};

}  // namespace rackchaos::healer
