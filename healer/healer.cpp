#include "healer/healer.h"

#include <algorithm>
#include <limits>
#include <span>

namespace rackchaos::healer {

using cluster::Kind;

Healer::Healer(const cluster::Topology& topo, Clock& clock, cluster::Backend& backend, EventSink& events, Policy policy)
    : topo_(topo), clock_(clock), backend_(backend), events_(events), policy_(std::move(policy)),
      ctx_{topo_, clock_, policy_, [this](Symptom s) { Raise(std::move(s)); },
           [this](SymptomClass cls, ComponentId c) { Clear(cls, c); }} {
  for (const DetectorInfo& info : DetectorTable()) {
    detectors_.push_back(info.make());
    for (size_t kind = 0; kind < readers_.size(); ++kind)
      if (detectors_.back()->reads() == kind || detectors_.back()->reads() == Detector::kAllKinds)
        readers_[kind].push_back(detectors_.back().get());
  }
  for (size_t m = 0; m < cluster::kMetricCount; ++m)
    for (Detector* d : readers_[KindOf<cluster::TelemetrySample>()])
      if (d->ReadsMetric(static_cast<cluster::Metric>(m), policy_)) sample_readers_[m].push_back(d);
}

double Healer::GpuTemperatureLineC(const Policy& policy) {
  double line = std::numeric_limits<double>::infinity();
  for (const DetectorInfo& info : DetectorTable()) line = std::min(line, info.make()->GpuTemperatureLineC(policy));
  return line;
}

void Healer::OnObservation(const cluster::Observation& obs) {
  if (const auto* js = std::get_if<cluster::JobStatus>(&obs.body)) {
    job_trays_[js->job] = js->trays;
    job_state_[js->job] = js->state;
  }
  if (const auto* diag = std::get_if<cluster::DiagnosticResult>(&obs.body)) OnDiagnostic(*diag);
  if (const auto* s = std::get_if<cluster::TelemetrySample>(&obs.body)) {
    if (s->metric == cluster::Metric::kCoolantFlow)
      flow_low_[s->component] = s->value < topo_.model().tray_flow_l_per_min * (1 - policy_.thermal_flow_drop);
    for (Detector* d : sample_readers_[static_cast<size_t>(s->metric)]) d->OnObservation(obs, ctx_);
    return;
  }
  for (Detector* d : readers_[obs.body.index()]) d->OnObservation(obs, ctx_);
}

void Healer::Act(const char* action, ComponentId c, JobId job, Status s, const std::string& detail) {
  events_.Record({clock_.Now(), ActionTaken{action, c, job, s.ok(), s.ok() ? detail : detail + ": " + s.ToString()}});
}

// Every symptom is recorded; those on hardware already out of service need no new decision.
void Healer::Raise(Symptom s) {
  DetectionId id = next_detection_++;
  events_.Record({clock_.Now(), Detected{id, s.detector, s.component, s.text}});
  if (s.cls == SymptomClass::kJobFailed) {
    if (policy_.restart_jobs) RestartJob(s.job, s.text);
    return;
  }
  // Application-level and informational Xids (13, 31, 43, 45, 63...) say nothing against the hardware:
  // the job's own failure, if any, arrives as a job symptom.
  if (s.cls == SymptomClass::kXid && (s.action == XidAction::kRestartApp || s.action == XidAction::kNone)) return;
  ComponentId tray = topo_.TrayOf(s.component);
  if (tray != kNoComponent && isolated_.count(tray)) return;
  if (tray != kNoComponent && InFailedOverRegion(tray)) return;  // its region's failover explains it
  if (s.cls == SymptomClass::kThermal && topo_.at(s.component).kind == Kind::kSwitchTray &&
      CduFenced(topo_.RackOf(s.component)))
    return;  // a switch tray heating with its rack's fenced CDU: that isolation explains it
  // A port into a switch tray already taken out (seen hot before it shut down, its ports going down
  // over the next second may straddle the correlation window's end): that isolation explains it.
  if (s.cls == SymptomClass::kLinkDown && isolated_.count(SwitchOfPort(topo_, s.component, s.port))) return;
  pending_.push_back({std::move(s), id});
  if (!window_timer_) window_timer_ = clock_.CallAfter(policy_.correlation_window, [this] { OnWindowClosed(); });
}

// A symptom that cleared before the correlation window closed (a link flap) needs no isolation.
void Healer::Clear(SymptomClass cls, ComponentId component) {
  std::erase_if(pending_, [&](const Pending& p) { return p.symptom.cls == cls && p.symptom.component == component; });
  if (component == kNoComponent || topo_.at(component).kind != Kind::kRegion || !isolated_.erase(component)) return;
  Act("resume", component, kNoJob, Status::Ok(), "region reachable again: its racks rejoin the pool as they boot");
}

bool Healer::CduFenced(ComponentId rack) const {
  const ComponentId cdu = topo_.CduOfRack(rack);
  for (ComponentId t : topo_.ChildrenOf(rack))
    if (auto it = isolated_.find(t); it != isolated_.end() && it->second.domain == cdu) return true;
  return false;
}

bool Healer::InFailedOverRegion(ComponentId tray) const {
  if (topo_.regions().empty()) return false;
  return isolated_.count(topo_.regions()[static_cast<size_t>(topo_.RegionOf(tray))].id) > 0;
}

// A region down: nothing to drain (its racks are dark); its jobs restart in another region from their
// newest checkpoint there, and symptoms from inside it are explained until its probe passes again.
void Healer::FailOver(const IsolationDecision& d) {
  Act("failover", d.domain, kNoJob, Status::Ok(),
      topo_.at(d.domain).name + " unreachable: its jobs restart in another region (" + d.reason + ")");
  isolated_[d.domain] = {d.domain, {}};
  if (!policy_.restart_jobs) return;
  const auto trays = topo_.TraysUnder(d.domain);
  RestartJobsOn({trays.begin(), trays.end()}, topo_.at(d.domain).name + " failed over: " + d.reason);
}

void Healer::OnWindowClosed() {
  window_timer_ = 0;
  std::vector<Pending> batch = std::move(pending_);
  pending_.clear();
  std::vector<Symptom> symptoms;
  for (const Pending& p : batch) symptoms.push_back(p.symptom);
  for (const IsolationDecision& d : Localize(symptoms, topo_, policy_.shared_domain_min_trays)) Isolate(d, batch);
}

std::vector<ComponentId> Healer::TraysOfDomain(ComponentId domain) const {
  std::span<const ComponentId> trays;
  switch (topo_.at(domain).kind) {
    case Kind::kCdu: trays = topo_.TraysUnder(topo_.RackOf(domain)); break;  // it cools its own rack
    // The rack's NVLink domain (both racks of an NVL36x2 pair: a lost switch tray, or a rack's power
    // with its switch trays, stops the whole partition).
    case Kind::kRack: case Kind::kSwitchTray: case Kind::kPowerShelf: case Kind::kPsu: case Kind::kNvlinkDomain:
      trays = topo_.TraysUnder(topo_.DomainOf(domain));
      break;
    case Kind::kLeaf: case Kind::kRail: {  // the trays whose NIC it connects
      std::vector<ComponentId> out;
      for (ComponentId nic : topo_.NicsOf(domain)) out.push_back(topo_.TrayOf(nic));
      return out;
    }
    case Kind::kRegion: break;  // failed over, not drained: its racks are dark
    default: trays = topo_.TraysUnder(domain);  // a tray, or the tray of a part inside it
  }
  return {trays.begin(), trays.end()};
}

bool Healer::BreakerAllows(int gpus, const std::string& domain_name) {
  Time now = clock_.Now();
  while (!breaker_.empty() && now - breaker_.front().first >= policy_.breaker_window) breaker_.pop_front();
  int recent = 0;
  for (const auto& [t, n] : breaker_) recent += n;
  double limit = policy_.breaker_max_share * static_cast<double>(topo_.gpus().size());
  if (recent + gpus > limit + 1e-9) {
    Act("alert", kNoComponent, kNoJob, Status::Ok(),
        "circuit breaker open: isolating " + domain_name + " would take " + std::to_string(recent + gpus) +
            " GPUs out within " + FormatDuration(policy_.breaker_window) + " (limit " +
            std::to_string(static_cast<int>(limit)) + ")");
    return false;
  }
  breaker_.push_back({now, gpus});
  return true;
}

void Healer::Isolate(const IsolationDecision& d, const std::vector<Pending>& batch) {
  std::vector<ComponentId> trays;
  if (d.out_of_service)
    for (ComponentId t : TraysOfDomain(d.domain))
      if (!isolated_.count(t)) trays.push_back(t);
  // A domain that drains nothing is still isolated: the part itself is taken out or marked for repair.
  const bool part_only = !d.out_of_service || IsPart(d.domain);
  if (trays.empty() && (!part_only || isolated_.count(d.domain))) return;
  int gpus = 0;
  for (ComponentId t : trays) gpus += static_cast<int>(topo_.GpusOfTray(t).size());
  const std::string& name = topo_.at(d.domain).name;
  // Past the breaker a part is still taken out (that drains no GPU); its trays are not drained.
  if (!BreakerAllows(gpus, name)) {
    if (!part_only || isolated_.count(d.domain)) return;
    trays.clear();
  }
  Isolated iso{d.domain, cluster::KindName(topo_.at(d.domain).kind), {}, d.reason};
  std::vector<ComponentId> reset;
  std::set<ComponentId> reboot;  // trays whose Xid asked for a node reboot
  for (size_t i : d.symptoms) {
    iso.because.push_back(batch[i].id);
    const Symptom& s = batch[i].symptom;
    if (s.cls != SymptomClass::kXid) continue;
    if (s.action == XidAction::kResetGpu && topo_.at(s.component).kind == Kind::kGpu) reset.push_back(s.component);
    if (s.action == XidAction::kRebootNode) reboot.insert(topo_.TrayOf(s.component));
  }
  events_.Record({clock_.Now(), iso});
  if (part_only) IsolatePart(d);
  if (topo_.at(d.domain).kind == Kind::kValve || topo_.at(d.domain).kind == Kind::kCdu)
    Act("fence_zone", d.domain, kNoJob, Status::Ok(),
        "cooling zone fenced: its " + std::to_string(trays.size()) + " tray(s) drained until the diagnostic passes");
  for (ComponentId t : trays) {
    Status drained = backend_.Drain(t, "rackchaos: " + name + ": " + d.reason);
    Act("drain", t, kNoJob, drained, "isolating " + name);
    Quarantine q{d.domain, {}};  // the Xids' GPUs and nodes on this tray: a rack-wide domain covers several
    for (ComponentId g : reset)
      if (topo_.TrayOf(g) == t) q.reset_gpus.push_back(g);
    q.reboot = reboot.count(t) > 0;
    q.held = drained.ok();
    q.drained = drained.ok();
    isolated_[t] = std::move(q);
  }
  for (ComponentId t :
       RestartJobsOn({trays.begin(), trays.end()}, name + " isolated: " + d.reason, policy_.restart_jobs))
    isolated_.at(t).held = false;
  for (ComponentId t : trays) ScheduleRecheck(t);
}

// Rack-level parts are isolated themselves as well as the trays they take out: a switch tray leaves the
// NVLink fabric (and comes back after its self-test passes), a PSU or shelf is marked for replacement.
bool Healer::IsPart(ComponentId c) const {
  Kind k = topo_.at(c).kind;
  return k == Kind::kSwitchTray || k == Kind::kPsu || k == Kind::kPowerShelf || k == Kind::kLeaf || k == Kind::kRail ||
         k == Kind::kPump || k == Kind::kSpine || k == Kind::kSuperSpine || k == Kind::kDpu || k == Kind::kRegion ||
         k == Kind::kObjectStore || k == Kind::kCheckpointStore;
}

void Healer::IsolatePart(const IsolationDecision& d) {
  const std::string& name = topo_.at(d.domain).name;
  const Kind kind = topo_.at(d.domain).kind;
  if (kind == Kind::kRegion) return FailOver(d);
  if (kind != Kind::kSwitchTray && kind != Kind::kSpine && kind != Kind::kSuperSpine) {
    Act("alert", d.domain, kNoJob, Status::Ok(), name + ": replace (" + d.reason + ")");
    return;
  }
  const Status out = backend_.Drain(d.domain, "rackchaos: " + d.reason);
  Act("take_out", d.domain, kNoJob, out,
      kind == Kind::kSwitchTray ? "switch tray leaves the NVLink fabric" : "spine leaves the scale-out fabric");
  isolated_[d.domain] = {d.domain, {}};
  isolated_[d.domain].drained = out.ok();
  ScheduleRecheck(d.domain);
}

std::set<ComponentId> Healer::RestartJobsOn(const std::set<ComponentId>& trays, const std::string& reason,
                                            bool requeue) {
  std::set<ComponentId> still_running;
  for (const auto& [job, placed] : job_trays_) {
    JobState st = job_state_[job];
    // A job still starting on the trays (restarting) would run on them too.
    if (st != JobState::kRunning && st != JobState::kHung && st != JobState::kRestarting) continue;
    // The isolated trays are few, a placement may be 25,000: look each of the few up in it.
    // `in` names the binding for the lambda: clang 14 (scripts/run-fuzz) cannot capture a structured binding.
    if (!std::any_of(trays.begin(), trays.end(), [&in = placed](ComponentId t) { return in.Contains(t); })) continue;
    if (requeue && RestartJob(job, reason)) continue;
    for (ComponentId t : trays)
      if (placed.Contains(t)) still_running.insert(t);
  }
  return still_running;
}

bool Healer::RestartJob(JobId job, const std::string& reason) {
  Status s = backend_.RequeueJob(job, reason);
  Act("requeue_job", kNoComponent, job, s, "restart from the last checkpoint: " + reason);
  return s.ok();
}

// A reset or a reboot runs only on a tray the healer holds (drained, its jobs moved): one that did not
// drain, or still runs a job, is diagnosed as it is instead, and an alert says why.
bool Healer::Held(ComponentId tray, const char* step) {
  if (isolated_.at(tray).held) return true;
  Act("alert", tray, kNoJob, Status::Ok(),
      std::string("no ") + step + ": the tray did not drain or a job still runs on it (its requeue failed or "
      "remediation.restart_jobs is off)");
  return false;
}

void Healer::ScheduleRecheck(ComponentId tray) { After(policy_.recheck, tray, &Healer::Remediate); }

// Runs `step` on `tray` after `d`, unless the tray has left quarantine by then. (A tray leaves only on
// a diagnostic result, when none of its steps is pending.)
void Healer::After(Duration d, ComponentId tray, void (Healer::*step)(ComponentId)) {
  clock_.CallAfter(d, [this, tray, step] {
    if (isolated_.count(tray)) (this->*step)(tray);
  });
}

// The first step back, once the tray's jobs have moved: reboot a node whose Xid asked for it (then
// diagnose after reboot_wait), or reset the GPUs whose Xid asked for it, then diagnose.
void Healer::Remediate(ComponentId tray) {
  Quarantine& q = isolated_.at(tray);
  if (!q.drained && topo_.at(tray).kind == Kind::kComputeTray) RetryDrain(tray);
  if (q.reboot) {
    q.reboot = false;
    if (Reboot(tray, "Xid asked for a node reboot")) return;
  }
  if (policy_.gpu_reset && !q.reset_gpus.empty() && Held(tray, "gpu_reset")) {
    // A failed reset is recorded as such; the diagnostic then decides (it fails on a GPU still broken).
    for (ComponentId g : q.reset_gpus) Act("gpu_reset", g, kNoJob, backend_.ResetGpu(g), "Xid asked for a reset");
  }
  q.reset_gpus.clear();
  Diagnose(tray);
}

// A tray whose drain failed at isolation (the scheduler busy or briefly out of reach) still runs work with
// a bad part in it: its drain is tried once more at the recheck, and when it takes, the tray's jobs move as
// they would have at isolation. A second failure leaves it as before: diagnosed, never resumed.
void Healer::RetryDrain(ComponentId tray) {
  Quarantine& q = isolated_.at(tray);
  const std::string& name = topo_.at(q.domain).name;
  Status s = backend_.Drain(tray, "rackchaos: " + name + ": drain retried");
  Act("drain", tray, kNoJob, s, "isolating " + name + " (its drain at isolation failed; retried at the recheck)");
  if (!s.ok()) return;
  q.drained = true;
  q.held = RestartJobsOn({tray}, name + " isolated (drain retried)", policy_.restart_jobs).empty();
}

// Reboots the node and diagnoses it `reboot_wait` later; false when the policy or backend cannot.
bool Healer::Reboot(ComponentId tray, const std::string& why) {
  if (!policy_.reboot || !backend_.Supports(cluster::Verb::kReboot) || !Held(tray, "reboot")) return false;
  Quarantine& q = isolated_.at(tray);
  q.reset_gpus.clear();  // a reboot resets every GPU of the node
  Status s = backend_.RebootNode(tray);
  Act("reboot", tray, kNoJob, s, why + "; diagnostic in " + FormatDuration(policy_.reboot_wait));
  if (!s.ok()) return false;
  q.rebooted_cool = q.rebooted_cool || CoolingOk(tray);
  After(policy_.reboot_wait, tray, &Healer::Diagnose);
  return true;
}

// The tray's coolant flows: its last flow reading (if any) was not low.
bool Healer::CoolingOk(ComponentId tray) const {
  return !flow_low_.Get(topo_.ValveOfTray(tray));
}

void Healer::Diagnose(ComponentId tray) {
  const Quarantine& q = isolated_.at(tray);
  Act("diagnose", tray, kNoJob, backend_.RunDiagnostic(tray),
      q.burning_in ? "burn-in check after repair" : "diagnostic before return to service");
}

void Healer::OnDiagnostic(const cluster::DiagnosticResult& r) {
  auto it = isolated_.find(r.tray);
  if (it == isolated_.end()) return;
  Quarantine& q = it->second;
  if (!r.passed) {
    q.failed = true;
    q.burning_in = false;
    // GPUs shut down by heat stay off the bus until a reboot: one done while the cooling was out (or
    // none) is retried once the tray's coolant flows again. A reboot under good cooling is not repeated.
    if (r.gpus_off_bus && !q.rebooted_cool && CoolingOk(r.tray) &&
        Reboot(r.tray, "diagnostic failed (" + r.detail + ") with the coolant flowing"))
      return;
    if (policy_.wait_for_repair && !q.waited_repair) {
      // The part goes to repair: no diagnostic until the repair time of its class has passed.
      q.waited_repair = true;
      const char* cls = RepairClassOf(topo_.at(q.domain).kind);
      Duration wait = policy_.repair.Of(cls);
      Act("wait_repair", r.tray, kNoJob, Status::Ok(),
          "diagnostic failed (" + r.detail + "); " + cls + " repair, next check in " + FormatDuration(wait) +
              " (repair." + cls + ")");
      return After(wait, r.tray, &Healer::Diagnose);
    }
    Act("quarantine", r.tray, kNoJob, Status::Ok(),
        "diagnostic failed (" + r.detail + "); next check in " + FormatDuration(policy_.recheck));
    return After(policy_.recheck, r.tray, &Healer::Diagnose);
  }
  if (q.failed && !q.burning_in && policy_.burn_in > Duration{}) {
    q.burning_in = true;
    Act("burn_in", r.tray, kNoJob, Status::Ok(),
        "diagnostic passed after repair (" + r.detail + "); burn-in for " + FormatDuration(policy_.burn_in) +
            " before return to service");
    return After(policy_.burn_in, r.tray, &Healer::Diagnose);
  }
  const bool drained = q.drained;
  isolated_.erase(it);
  if (!drained)  // it never left service: a resume would report a return that did not happen
    return Act("alert", r.tray, kNoJob, Status::Ok(),
               "diagnostic passed: " + r.detail + "; not resumed: its drain failed, so it never left service");
  Act("resume", r.tray, kNoJob, backend_.Resume(r.tray), "diagnostic passed: " + r.detail);
}

}  // namespace rackchaos::healer
