#include "reports/live_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "reports/escape.h"
#include "reports/fault_digest.h"

namespace rackchaos::reports {
namespace {

// Recovery times span a second (an Xid seen at once) to hours (a tray waiting for repair).
const std::vector<double> kLiveSecondsBuckets = {1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600};
// ETTR of burn-in jobs sits between 0.5 and 1; below that the run is broken anyway.
const std::vector<double> kLiveRatioBuckets = {0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99, 1};
// An observation poll is a command over SSH or an HTTP query: milliseconds to tens of seconds.
const std::vector<double> kLivePollBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
// Serve's pages are answered in milliseconds; 200 ms is the target (bench/serve).
const std::vector<double> kLiveRequestBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 5};

std::string LivePromLabels(const LiveMetrics::Labels& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ',';
    out += std::string(key) + "=\"" + PromLabelValue(value) + "\"";
  }
  return out;
}

// Prometheus' float format: integers without a fraction, others with enough digits to round-trip.
std::string LivePromValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else {  // the shortest of 15 or 17 significant digits that reads back as the same double
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  return buf;
}

std::string LivePromBraced(const std::string& labels, const std::string& extra = "") {
  std::string inner = labels;
  if (!extra.empty()) inner += (inner.empty() ? "" : ",") + extra;
  return inner.empty() ? "" : "{" + inner + "}";
}

}  // namespace

LiveMetrics::LiveMetrics() {
  Define("rackchaos_runs_started_total", Type::kCounter, "Runs started, by backend (sim or ssh).");
  Define("rackchaos_runs_finished_total", Type::kCounter,
         "Runs finished, by status (passed, failed, aborted, error, interrupted).");
  Define("rackchaos_runs_active", Type::kGauge, "Runs going on in this process now.");
  Define("rackchaos_events_total", Type::kCounter, "Events recorded, by type (fault_injected, detected, ...).");
  Define("rackchaos_faults_injected_total", Type::kCounter, "Faults applied, by kind.");
  Define("rackchaos_faults_reverted_total", Type::kCounter, "Faults reverted, by kind.");
  Define("rackchaos_faults_active", Type::kGauge, "Faults applied and not yet reverted, by kind.");
  Define("rackchaos_faults_unrecovered_total", Type::kCounter,
         "Faults of finished runs that never recovered (no time to recover), by kind.");
  Define("rackchaos_detections_total", Type::kCounter, "Healer detections, by detector.");
  Define("rackchaos_isolations_total", Type::kCounter,
         "Healer isolations, by the detector of the first detection they explain and by failure domain.");
  Define("rackchaos_actions_total", Type::kCounter, "Actions carried out (drain, resume, ...), by action and result.");
  Define("rackchaos_jobs", Type::kGauge, "Jobs of the active runs, by state (running, hung, restarting, ...).");
  Define("rackchaos_time_to_detect_seconds", Type::kHistogram,
         "Time from a fault's injection to its first attributed detection, by fault kind.", kLiveSecondsBuckets);
  Define("rackchaos_time_to_isolate_seconds", Type::kHistogram,
         "Time from a fault's injection to its first attributed isolation, by fault kind.", kLiveSecondsBuckets);
  Define("rackchaos_time_to_recover_seconds", Type::kHistogram,
         "Time from a fault's injection until every job it touched ran at full speed again, by fault kind "
         "(from a run's final metrics).",
         kLiveSecondsBuckets);
  Define("rackchaos_rack_recoveries_total", Type::kCounter,
         "Recovered faults of finished runs, by rack (the first part of the target's name); serve: of the runs "
         "stored in database `db`.");
  Define("rackchaos_rack_recovery_seconds_total", Type::kCounter,
         "Sum of the times to recover of those faults, by rack; divided by rackchaos_rack_recoveries_total, the "
         "mean TTR.");
  Define("rackchaos_job_ettr_ratio", Type::kHistogram, "Effective training time ratio of each job of a finished run.",
         kLiveRatioBuckets);
  Define("rackchaos_ledger_entries_open", Type::kGauge,
         "Fault ledger entries still open (applied on a host), by ledger.");
  Define("rackchaos_ledger_oldest_open_timestamp_seconds", Type::kGauge,
         "Unix time the oldest open ledger entry was opened at (0: none open), by ledger.");
  Define("rackchaos_observation_polls_total", Type::kCounter, "Real mode: observation polls, by source.");
  Define("rackchaos_observation_poll_errors_total", Type::kCounter,
         "Real mode: observation polls that failed (missing data, command error), by source.");
  Define("rackchaos_observation_poll_duration_seconds", Type::kHistogram,
         "Real mode: wall time of one observation poll, by source.", kLivePollBuckets);
  Define("rackchaos_serve_requests_total", Type::kCounter,
         "Requests rackchaos serve answered, by route and HTTP code.");
  Define("rackchaos_serve_request_duration_seconds", Type::kHistogram,
         "Wall time rackchaos serve took to answer a request, by route.", kLiveRequestBuckets);
  Define("rackchaos_stored_runs", Type::kGauge,
         "Runs stored in a database rackchaos serve reads, by database and status.");
}

void LiveMetrics::Define(const std::string& name, Type type, std::string help, std::vector<double> buckets) {
  Family& f = families_[name];
  f.type = type;
  f.help = std::move(help);
  f.buckets = std::move(buckets);
}

LiveMetrics::Series& LiveMetrics::At(std::string_view name, const Labels& labels) {
  auto family = families_.find(name);
  Series& s = family->second.series[LivePromLabels(labels)];
  if (family->second.type == Type::kHistogram && s.counts.empty())
    s.counts.assign(family->second.buckets.size() + 1, 0);
  return s;
}

void LiveMetrics::Add(std::string_view name, const Labels& labels, double delta) { At(name, labels).value += delta; }
void LiveMetrics::Set(std::string_view name, const Labels& labels, double value) { At(name, labels).value = value; }

void LiveMetrics::Observe(std::string_view name, const Labels& labels, double value) {
  const std::vector<double>& bounds = families_.find(name)->second.buckets;
  Series& s = At(name, labels);
  size_t i = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();  // first bound >= value
  ++s.counts[i];
  s.sum += value;
  ++s.count;
}

std::unique_ptr<LiveMetrics::Run> LiveMetrics::StartRun(std::string_view backend) {
  std::lock_guard lock(mu_);
  Add("rackchaos_runs_started_total", {{"backend", backend}}, 1);
  Add("rackchaos_runs_active", {}, 1);
  return std::unique_ptr<Run>(new Run(*this, std::string(backend)));
}

void LiveMetrics::ObservePoll(std::string_view source, double seconds, bool ok) {
  std::lock_guard lock(mu_);
  Add("rackchaos_observation_polls_total", {{"source", source}}, 1);
  if (!ok) Add("rackchaos_observation_poll_errors_total", {{"source", source}}, 1);
  Observe("rackchaos_observation_poll_duration_seconds", {{"source", source}}, seconds);
}

void LiveMetrics::SetLedger(std::string_view ledger, int open, double oldest_opened_unix) {
  std::lock_guard lock(mu_);
  Set("rackchaos_ledger_entries_open", {{"ledger", ledger}}, open);
  Set("rackchaos_ledger_oldest_open_timestamp_seconds", {{"ledger", ledger}}, oldest_opened_unix);
}

void LiveMetrics::ObserveRequest(std::string_view route, int code, double seconds) {
  std::lock_guard lock(mu_);
  const std::string code_text = std::to_string(code);
  Add("rackchaos_serve_requests_total", {{"route", route}, {"code", code_text}}, 1);
  Observe("rackchaos_serve_request_duration_seconds", {{"route", route}}, seconds);
}

void LiveMetrics::SetStoredRuns(std::string_view db, std::string_view status, double runs) {
  std::lock_guard lock(mu_);
  Set("rackchaos_stored_runs", {{"db", db}, {"status", status}}, runs);
}

void LiveMetrics::SetStoredRackRecoveries(std::string_view db, std::string_view rack, double recoveries,
                                          double seconds) {
  std::lock_guard lock(mu_);
  Set("rackchaos_rack_recoveries_total", {{"db", db}, {"rack", rack}}, recoveries);
  Set("rackchaos_rack_recovery_seconds_total", {{"db", db}, {"rack", rack}}, seconds);
}

std::string LiveMetrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.type == Type::kCounter ? "counter" : f.type == Type::kGauge ? "gauge" : "histogram";
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out += name + LivePromBraced(labels) + " " + LivePromValue(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i <= f.buckets.size(); ++i) {
        cumulative += s.counts[i];
        const std::string le = i < f.buckets.size() ? LivePromValue(f.buckets[i]) : "+Inf";
        out += name + "_bucket" + LivePromBraced(labels, "le=\"" + le + "\"") + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + LivePromBraced(labels) + " " + LivePromValue(s.sum) + "\n";
      out += name + "_count" + LivePromBraced(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

// --- One run's feed ---

void LiveMetrics::Run::Record(const Event& e) {
  std::lock_guard lock(registry_.mu_);
  registry_.Add("rackchaos_events_total", {{"type", EventTypeName(e.body)}}, 1);
  if (const auto* f = std::get_if<FaultInjected>(&e.body)) {
    kinds_[f->fault] = f->kind;
    open_faults_[f->fault] = f->kind;
    registry_.Add("rackchaos_faults_injected_total", {{"kind", f->kind}}, 1);
    registry_.Add("rackchaos_faults_active", {{"kind", f->kind}}, 1);
  } else if (const auto* r = std::get_if<FaultReverted>(&e.body)) {
    auto open = open_faults_.find(r->fault);
    if (open == open_faults_.end()) return;
    registry_.Add("rackchaos_faults_reverted_total", {{"kind", open->second}}, 1);
    registry_.Add("rackchaos_faults_active", {{"kind", open->second}}, -1);
    open_faults_.erase(open);
  } else if (const auto* d = std::get_if<Detected>(&e.body)) {
    detectors_[d->detection] = d->detector;
    registry_.Add("rackchaos_detections_total", {{"detector", d->detector}}, 1);
  } else if (const auto* i = std::get_if<Isolated>(&e.body)) {
    std::string detector = "none";
    if (!i->because.empty() && detectors_.count(i->because.front())) detector = detectors_[i->because.front()];
    registry_.Add("rackchaos_isolations_total", {{"detector", detector}, {"domain", i->domain}}, 1);
  } else if (const auto* a = std::get_if<ActionTaken>(&e.body)) {
    registry_.Add("rackchaos_actions_total", {{"action", a->action}, {"result", a->ok ? "ok" : "failed"}}, 1);
  } else if (const auto* j = std::get_if<JobChanged>(&e.body)) {
    std::string& state = job_states_[j->job];
    if (!state.empty()) registry_.Add("rackchaos_jobs", {{"state", state}}, -1);
    state = JobStateName(j->state);
    registry_.Add("rackchaos_jobs", {{"state", state}}, 1);
  }
}

void LiveMetrics::Run::Scored(const RunMetrics& metrics, bool final) {
  std::lock_guard lock(registry_.mu_);
  for (const FaultMetrics& f : metrics.faults) {
    const Labels kind{{"kind", f.kind}};
    if (f.time_to_detect && ttd_seen_.insert(f.fault).second)
      registry_.Observe("rackchaos_time_to_detect_seconds", kind, f.time_to_detect->Seconds());
    if (f.time_to_isolate && tti_seen_.insert(f.fault).second)
      registry_.Observe("rackchaos_time_to_isolate_seconds", kind, f.time_to_isolate->Seconds());
    if (!final) continue;
    if (!f.time_to_recover) {
      registry_.Add("rackchaos_faults_unrecovered_total", kind, 1);
      continue;
    }
    const std::string rack(RackOfName(f.target));  // reports/fault_digest.h
    registry_.Observe("rackchaos_time_to_recover_seconds", kind, f.time_to_recover->Seconds());
    registry_.Add("rackchaos_rack_recoveries_total", {{"rack", rack}}, 1);
    registry_.Add("rackchaos_rack_recovery_seconds_total", {{"rack", rack}}, f.time_to_recover->Seconds());
  }
  if (final)
    for (const JobMetrics& j : metrics.jobs) registry_.Observe("rackchaos_job_ettr_ratio", {}, j.ettr);
}

void LiveMetrics::Run::Finish(std::string_view status) {
  std::lock_guard lock(registry_.mu_);
  if (finished_) return;
  finished_ = true;
  registry_.Add("rackchaos_runs_finished_total", {{"status", status}}, 1);
  registry_.Add("rackchaos_runs_active", {}, -1);
  // What this run still held leaves the gauges with it (an error can end a run with faults applied).
  for (const auto& [fault, kind] : open_faults_) registry_.Add("rackchaos_faults_active", {{"kind", kind}}, -1);
  for (const auto& [job, state] : job_states_) registry_.Add("rackchaos_jobs", {{"state", state}}, -1);
  open_faults_.clear();
  job_states_.clear();
}

LiveMetrics::Run::~Run() { Finish("error"); }

}  // namespace rackchaos::reports
