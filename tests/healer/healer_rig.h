// A healer on a recording fake backend, for the healer and remediation tests: the backend records
// the healer's verbs with their virtual time; the rig feeds observations and renders the event log.
#pragma once

#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <vector>

#include "healer/healer.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer::testing {

// Records the healer's verbs with their virtual time. RunDiagnostic answers `diagnostic_time` later
// through the subscribed sink with the next queued verdict (failing when none is queued).
class FakeBackend : public cluster::Backend {
 public:
  explicit FakeBackend(VirtualClock& clock) : clock_(clock) {}

  struct Call {
    Time at;
    std::string what;  // "drain r01.tray03", "requeue 0", ...
    bool operator==(const Call&) const = default;
  };

  std::string Name() const override { return "fake"; }
  bool Supports(cluster::Verb v) const override { return v != cluster::Verb::kReboot || can_reboot; }
  Status SetNvlinkPort(ComponentId, int, bool, FaultId) override { return Status::Ok(); }
  Status SetNicLink(ComponentId, bool, FaultId) override { return Status::Ok(); }
  Result<double> GetPowerCap(ComponentId) override { return 1200.0; }
  Status SetPowerCap(ComponentId, double, FaultId) override { return Status::Ok(); }
  Result<double> GetValveOpening(ComponentId) override { return 1.0; }
  Status SetValveOpening(ComponentId, double, FaultId) override { return Status::Ok(); }
  Status Release(cluster::Held, cluster::Target, FaultId) override { return Status::Ok(); }
  Status SetTrayPresent(ComponentId, bool, FaultId) override { return Status::Ok(); }

  Status Drain(ComponentId tray, const std::string& reason) override {
    drain_reasons.push_back(reason);
    Status s = Log("drain " + Name(tray));
    if (drains_to_fail > 0) --drains_to_fail;
    else if (!fail_drain) return s;
    return Status::Unavailable("scontrol: node busy");
  }
  Status Resume(ComponentId tray) override { return Log("resume " + Name(tray)); }
  Status ResetGpu(ComponentId gpu) override { return Log("reset " + Name(gpu)); }
  Status RequeueJob(JobId job, const std::string&) override {
    Status s = Log("requeue " + std::to_string(job));
    return fail_requeue ? Status::Unavailable("scontrol: requeue refused") : s;
  }
  Status RebootNode(ComponentId tray) override { return Log("reboot " + Name(tray)); }
  Status RunDiagnostic(ComponentId tray) override {
    bool passed = !verdicts.empty() && verdicts.front();
    if (!verdicts.empty()) verdicts.pop_front();
    clock_.CallAfter(diagnostic_time, [this, tray, passed] {
      sink_->OnObservation({clock_.Now(), cluster::DiagnosticResult{tray, passed, passed ? "all tests passed" : fail_detail, !passed && off_bus}});
    });
    return Log("diagnose " + Name(tray));
  }
  void Subscribe(cluster::ObservationSink* sink) override { sink_ = sink; }

  std::vector<Call> calls;
  std::vector<std::string> drain_reasons;
  std::deque<bool> verdicts;
  bool can_reboot = true;
  bool fail_drain = false;    // Drain answers an error (after recording the call)
  int drains_to_fail = 0;     // the first N drains answer an error
  bool fail_requeue = false;  // RequeueJob answers an error (after recording the call)
  bool off_bus = false;  // failed diagnostics say a GPU is not on the bus
  std::string fail_detail = "memory test failed";
  Duration diagnostic_time = Duration::Minutes(2);

 private:
  static std::string Name(ComponentId c) { return Topo().at(c).name; }
  Status Log(std::string what) {
    calls.push_back({clock_.Now(), std::move(what)});
    return Status::Ok();
  }
  VirtualClock& clock_;
  cluster::ObservationSink* sink_ = nullptr;
};

// A healer on the fake backend with an in-memory event log; Feed() delivers an observation at its time.
struct Rig {
  VirtualClock clock;
  FakeBackend backend{clock};
  EventLog log;
  Healer healer;

  explicit Rig(Policy p = Shipped("default")) : healer(Topo(), clock, backend, log, std::move(p)) {
    backend.Subscribe(&healer);
  }
  void Feed(Time at, cluster::ObservationBody body) {
    clock.RunUntil(at);
    healer.OnObservation({at, std::move(body)});
  }
  void LoseHeartbeat(Time at, const std::string& tray) {
    Feed(at, cluster::HeartbeatChange{Id(tray), false, at - Sec(10), Sec(10)});
  }
  // The recorded events as "<time> <type> <component> <detail>" lines, for sequence assertions.
  std::vector<std::string> Timeline() const {
    std::vector<std::string> out;
    for (const Event& e : log.events()) out.push_back(FormatDuration(e.at) + " " + Describe(e.body));
    return out;
  }

 private:
  static std::string Comp(ComponentId c) { return c == kNoComponent ? "-" : Topo().at(c).name; }
  static std::string Describe(const EventBody& body) {
    if (const auto* d = std::get_if<Detected>(&body))
      return "detected #" + std::to_string(d->detection) + " " + d->detector + " " + Comp(d->component);
    if (const auto* i = std::get_if<Isolated>(&body)) {
      std::string because;
      for (DetectionId id : i->because) because += " #" + std::to_string(id);
      return "isolated " + Comp(i->component) + " " + i->domain + because;
    }
    if (const auto* a = std::get_if<ActionTaken>(&body))
      return a->action + " " + Comp(a->component) + (a->job == kNoJob ? "" : " job " + std::to_string(a->job)) +
             (a->ok ? "" : " FAILED");
    return EventTypeName(body);
  }
};

}  // namespace rackchaos::healer::testing
