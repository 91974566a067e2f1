#include "reports/fault_digest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/strings.h"

namespace rackchaos::reports {
namespace {

// Nearest-rank percentile of `v` (microseconds; INT64_MAX for "never"), absent when it falls on "never".
std::optional<Duration> Rank(std::vector<int64_t>& v, double p) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  int64_t us = v[std::clamp<size_t>(rank, 1, v.size()) - 1];
  if (us == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return Duration::Micros(us);
}

// A group's running counts and the times its percentiles are taken from.
struct Acc {
  FaultGroup g;
  std::vector<int64_t> ttd, ttr;
  void Add(const FaultMetrics& f) {
    constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
    ++g.faults;
    g.detected += f.time_to_detect ? 1 : 0;
    g.isolated += f.time_to_isolate ? 1 : 0;
    g.recovered += f.time_to_recover ? 1 : 0;
    g.gpus += f.gpus_direct + f.gpus_collateral;
    g.gpu_hours_lost += f.gpu_hours_lost;
    ttd.push_back(f.time_to_detect ? f.time_to_detect->us : kNever);
    ttr.push_back(f.time_to_recover ? f.time_to_recover->us : kNever);
  }
  FaultGroup Done() {
    g.ttd_p50 = Rank(ttd, 50);
    g.ttr_p50 = Rank(ttr, 50);
    g.ttr_p95 = Rank(ttr, 95);
    g.ttr_max = Rank(ttr, 100);
    return g;
  }
};

// Most faults first, then by name: the same order on every host.
std::vector<FaultGroup> Ordered(std::map<std::string, Acc>& groups) {
  std::vector<FaultGroup> out;
  for (auto& [name, acc] : groups) {
    acc.g.name = name;
    out.push_back(acc.Done());
  }
  std::stable_sort(out.begin(), out.end(), [](const FaultGroup& a, const FaultGroup& b) { return a.faults > b.faults; });
  return out;
}

// Worst first: faults that never recovered and cost GPUs (most GPU-hours lost first), then the slowest
// to recover, then those that never recovered but touched nothing (a crash on an idle GPU); ties by id.
int Group(const FaultMetrics* f) {
  if (f->time_to_recover) return 1;
  return f->gpus_direct + f->gpus_collateral > 0 || f->jobs_touched > 0 ? 0 : 2;
}

bool Worse(const FaultMetrics* a, const FaultMetrics* b) {
  if (Group(a) != Group(b)) return Group(a) < Group(b);
  if (Group(a) == 1 && *a->time_to_recover != *b->time_to_recover) return *a->time_to_recover > *b->time_to_recover;
  if (Group(a) != 1 && a->gpu_hours_lost != b->gpu_hours_lost) return a->gpu_hours_lost > b->gpu_hours_lost;
  return a->fault < b->fault;
}

}  // namespace

std::string_view RackOfName(std::string_view component) { return component.substr(0, component.find('.')); }

FaultDigest DigestFaults(const RunMetrics& metrics, const ListLimits& limits) {
  FaultDigest d;
  d.total = metrics.faults.size();
  std::map<std::string, Acc> kinds, racks;
  for (const FaultMetrics& f : metrics.faults) {
    d.listed.push_back(&f);
    kinds[f.kind].Add(f);
    racks[std::string(RackOfName(f.target))].Add(f);
  }
  if (d.listed.size() > limits.faults) {
    // Only the first `limits.faults` need ordering: a partial sort keeps 40,000 faults cheap.
    std::partial_sort(d.listed.begin(), d.listed.begin() + static_cast<std::ptrdiff_t>(limits.faults), d.listed.end(), Worse);
    d.listed.resize(limits.faults);
  }
  d.by_kind = Ordered(kinds);
  d.by_rack = Ordered(racks);
  d.racks = d.by_rack.size();
  for (size_t i = limits.racks; i < d.by_rack.size(); ++i) d.faults_in_other_racks += d.by_rack[i].faults;
  if (d.by_rack.size() > limits.racks) d.by_rack.resize(limits.racks);
  return d;
}

std::string CutFaultsSentence(const FaultDigest& d) {
  return "the " + std::to_string(d.listed.size()) +
         " worst are listed (those that never recovered and cost GPUs first, then the slowest to recover); all " +
         Thousands(d.total) + " are counted by kind and by rack";
}

std::vector<const JobMetrics*> ListedJobs(const RunMetrics& metrics, const ListLimits& limits) {
  std::vector<const JobMetrics*> out;
  for (const JobMetrics& j : metrics.jobs) out.push_back(&j);
  if (out.size() <= limits.jobs) return out;
  std::stable_sort(out.begin(), out.end(), [](const JobMetrics* a, const JobMetrics* b) { return a->ettr < b->ettr; });
  out.resize(limits.jobs);
  return out;
}

}  // namespace rackchaos::reports
