#include "runner/spec/safety.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace rackchaos::runner {
namespace {

std::string ListFaults(const std::vector<const ResolvedFault*>& active) {
  std::string out;
  for (const ResolvedFault* f : active) out += (out.empty() ? "#" : ", #") + std::to_string(f->id);
  return out;
}

Status CheckAllowed(const SafetySpec& safety, const RunSpec& spec) {
  if (!safety.allow) return Status::Ok();
  std::string allowed;
  for (const PlanValue& kind : *safety.allow) {
    if (!injectors::FindInjector(kind.text))
      return At(kind.pos, "safety.allow: unknown fault kind '" + kind.text + "'; known kinds: " + injectors::InjectorNames());
    allowed += (allowed.empty() ? "" : ", ") + kind.text;
  }
  for (const ResolvedFault& f : spec.faults) {
    std::string kind(f.injector->name());
    auto same = [&](const PlanValue& v) { return v.text == kind; };
    if (std::none_of(safety.allow->begin(), safety.allow->end(), same))
      return At(f.pos, "fault kind '" + kind + "' (" + f.selector + ") is not in safety.allow [" + allowed +
                           "]; add it to safety.allow or remove the fault");
  }
  return Status::Ok();
}

}  // namespace

std::vector<TimelineStep> BuildTimeline(const RunSpec& spec) {
  std::vector<TimelineStep> steps;
  for (const ResolvedFault& f : spec.faults) {
    int gpus = static_cast<int>(spec.topology->GpusServedBy(f.target.component).size());
    steps.push_back({f.at, true, &f, gpus});
    if (f.duration && f.at + *f.duration < spec.horizon) steps.push_back({f.at + *f.duration, false, &f, gpus});
  }
  // Time order; reverts first at equal times; then fault order, so the timeline is deterministic.
  std::stable_sort(steps.begin(), steps.end(), [](const TimelineStep& a, const TimelineStep& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.inject < b.inject;
  });
  int active = 0, gpus = 0;
  for (TimelineStep& s : steps) {
    active += s.inject ? 1 : -1;
    gpus += s.inject ? s.gpus : -s.gpus;
    s.active_faults = active;
    s.gpus_impaired = gpus;
  }
  return steps;
}

WorstCase FindWorstCase(const std::vector<TimelineStep>& timeline) {
  WorstCase w;
  for (const TimelineStep& s : timeline) {
    if (s.active_faults > w.faults) w = {s.active_faults, s.at, w.gpus, w.gpus_at};
    if (s.gpus_impaired > w.gpus) w = {w.faults, w.faults_at, s.gpus_impaired, s.at};
  }
  return w;
}

Status CheckSafety(const Plan& plan, const RunSpec& spec) {
  RC_RETURN_IF_ERROR(CheckAllowed(plan.safety, spec));
  if (!plan.safety.max_gpus_impaired) return Status::Ok();
  const int limit = *plan.safety.max_gpus_impaired;
  std::vector<const ResolvedFault*> active;
  for (const TimelineStep& s : BuildTimeline(spec)) {
    if (!s.inject) {
      active.erase(std::find(active.begin(), active.end(), s.fault));
      continue;
    }
    active.push_back(s.fault);
    if (s.gpus_impaired <= limit) continue;
    return At(s.fault->pos, "at " + FormatDuration(s.at) + " faults " + ListFaults(active) + " can be active at once and impair " +
                                std::to_string(s.gpus_impaired) + " GPUs, more than safety.max_gpus_impaired " +
                                std::to_string(limit) + " (" + plan.safety.pos.ToString() +
                                "); shorten or spread the faults, or raise the limit");
  }
  return Status::Ok();
}

std::string StopFilePath() {
  const char* env = std::getenv("RACKCHAOS_STOP_FILE");
  return env != nullptr && *env != '\0' ? env : "/run/rackchaos/stop";
}

bool StopFileExists() {
  std::error_code ec;
  return std::filesystem::exists(StopFilePath(), ec);
}

}  // namespace rackchaos::runner
