#include "runner/engine/watch.h"

#include <algorithm>
#include <limits>

#include "core/log.h"

namespace rackchaos::runner {

double Watch::GpuTemperatureLineC(const RunSpec& spec) {
  return spec.abort.gpu_temperature ? static_cast<double>(*spec.abort.gpu_temperature)
                                    : std::numeric_limits<double>::infinity();
}

namespace {

std::string Limit(const char* key, int limit) { return std::string("safety.abort.") + key + " " + std::to_string(limit); }

bool Down(JobState s) { return s != JobState::kRunning && s != JobState::kFinished; }

}  // namespace

bool Watch::has_continuous_gates() const {
  return std::any_of(spec_.gates.begin(), spec_.gates.end(), [](const Gate& g) { return g.continuous; });
}

void Watch::Trip(Time at, const std::string& why) {
  if (reason_.empty()) reason_ = "at " + FormatDuration(at) + ": " + why;
}

void Watch::OnObservation(const cluster::Observation& obs) {
  const AbortSpec& abort = spec_.abort;
  const cluster::Topology& topo = spec_.topology;
  if (const auto* hb = std::get_if<cluster::HeartbeatChange>(&obs.body)) {
    if (hb->alive) dead_trays_.erase(hb->node);
    else dead_trays_.insert(hb->node);
    size_t offline = 0;
    for (ComponentId tray : dead_trays_) offline += topo.GpusOfTray(tray).size();
    if (abort.gpus_offline && offline > static_cast<size_t>(*abort.gpus_offline))
      Trip(obs.at, std::to_string(offline) + " GPUs offline (" + std::to_string(dead_trays_.size()) +
                       " compute tray(s) without heartbeats, last " + topo.at(hb->node).name + "), more than " +
                       Limit("gpus_offline", *abort.gpus_offline));
  } else if (const auto* t = std::get_if<cluster::TelemetrySample>(&obs.body)) {
    if (abort.gpu_temperature && t->metric == cluster::Metric::kGpuTemperature && t->value > *abort.gpu_temperature)
      Trip(obs.at, topo.at(t->component).name + " at " + std::to_string(static_cast<int>(t->value)) +
                       " C, above " + Limit("gpu_temperature", *abort.gpu_temperature));
  } else if (const auto* j = std::get_if<cluster::JobStatus>(&obs.body)) {
    if (j->state == JobState::kRunning || jobs_.count(j->job)) jobs_[j->job] = j->state;
    auto down = std::count_if(jobs_.begin(), jobs_.end(), [](const auto& kv) { return Down(kv.second); });
    if (abort.jobs_down && down > *abort.jobs_down)
      Trip(obs.at, std::to_string(down) + " job(s) down (" + spec_.jobs[static_cast<size_t>(j->job)].name + " " +
                       JobStateName(j->state) + "), more than " + Limit("jobs_down", *abort.jobs_down));
  }
}

void Watch::OnFaultsActive(size_t active, Time now) {
  const auto& limit = spec_.abort.faults_at_once;
  if (limit && active > static_cast<size_t>(*limit))
    Trip(now, std::to_string(active) + " faults applied at once, more than " + Limit("faults_at_once", *limit));
}

void Watch::ScheduleGateChecks(Clock& clock, const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs,
                               Duration period) {
  if (!has_continuous_gates()) return;
  clock.CallAfter(period, [this, &clock, &events, &jobs, period] { CheckGates(clock, events, jobs, period); });
}

void Watch::CheckGates(Clock& clock, const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs,
                       Duration period) {
  RunMetrics metrics = healer::ComputeMetrics(events, spec_.topology, jobs, clock.Now());
  for (const Gate& g : spec_.gates) {
    if (!g.continuous) continue;
    GateResult r = EvaluateGateSoFar(g, metrics, clock.Now());
    if (!r.passed) {
      Trip(clock.Now(), "continuous gate " + r.message);
      return;
    }
  }
  ScheduleGateChecks(clock, events, jobs, period);
}

void Watch::RecordAbort(EventSink& events, Time now) const {
  events.Record({now, ActionTaken{"abort", kNoComponent, kNoJob, true, reason_}});
  spdlog::warn("run aborted {}", reason_);
}

}  // namespace rackchaos::runner
