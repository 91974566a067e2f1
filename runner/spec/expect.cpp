#include "runner/spec/expect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <limits>
#include <optional>

#include "core/strings.h"
#include "core/units.h"

namespace rackchaos::runner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least p of the data at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

double Aggregate(const std::vector<double>& v, const std::string& agg) {
  if (v.empty()) return 0;
  if (agg == "max") return *std::max_element(v.begin(), v.end());
  if (agg == "min") return *std::min_element(v.begin(), v.end());
  if (agg == "mean") {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  }
  if (agg == "p50") return Percentile(v, 0.5);
  if (agg == "p95") return Percentile(v, 0.95);
  if (agg == "total") {
    double s = 0;
    for (double x : v) s += x;
    return s;
  }
  return 0;
}

double Seconds(const std::optional<Duration>& d) { return d ? d->Seconds() : kInf; }

// Time gates look at faults that did something: a crash on an idle GPU leaves nothing to detect.
bool HadEffect(const FaultMetrics& f) { return f.gpus_direct > 0 || f.jobs_touched > 0; }

// A time gate sees the times the report's fault table shows: every fault with a time (a PSU failed within
// its shelf's redundancy touches no GPU, yet the healer detects and isolates it), and every fault that
// had an effect, whose missing time counts as never.
bool Timed(const FaultMetrics& f, const std::optional<Duration>& time) { return time || HadEffect(f); }

// Time to isolate looks at faults that needed isolation: those isolated and those missed (recall's
// faults). A crashed process or a link flap that heals itself needs none: no isolation is not "never".
bool NeededIsolation(const RunMetrics& m, const FaultMetrics& f) {
  if (f.time_to_isolate) return true;
  const std::string id = "#" + std::to_string(f.fault) + " ";
  return std::any_of(m.missed_faults.begin(), m.missed_faults.end(),
                     [&](const std::string& missed) { return missed.starts_with(id); });
}

// A job's MTTF in hours: time up per fault that stopped it (docs/metrics.md); never (infinite) when none did.
double Mttf(const JobMetrics& j) { return j.failures > 0 ? j.up.Hours() / j.failures : kInf; }
double FailuresPerDay(const JobMetrics& j) { return j.up > Duration{} ? j.failures / (j.up.Hours() / 24) : 0; }

using Extract = std::function<std::vector<double>(const RunMetrics&)>;

struct MetricDef {
  std::string base;
  GateSubject subject;
  bool is_time;
  bool higher_better;  // ETTR, goodput, MTTF, precision, recall; every other metric is better lower
  std::vector<std::string> aggs;
  std::string description;
  Extract values;
};

const std::vector<MetricDef>& Defs() {
  static const std::vector<MetricDef> kDefs = {
      {"ttd", GateSubject::kFaults, true, false, {"max", "p50", "p95", "mean"}, "time to detect, per fault",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) if (Timed(f, f.time_to_detect)) v.push_back(Seconds(f.time_to_detect)); return v; }},
      {"tti", GateSubject::kFaults, true, false, {"max", "p50", "p95", "mean"}, "time to isolate, per fault that needed isolation",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) if (Timed(f, f.time_to_isolate) && NeededIsolation(m, f)) v.push_back(Seconds(f.time_to_isolate)); return v; }},
      {"ttr", GateSubject::kFaults, true, false, {"max", "p50", "p95", "mean"}, "time to recover, per fault",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) if (Timed(f, f.time_to_recover)) v.push_back(Seconds(f.time_to_recover)); return v; }},
      {"blast.gpus", GateSubject::kFaults, false, false, {"max", "total"}, "GPUs touched per fault (direct + collateral)",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) v.push_back(f.gpus_direct + f.gpus_collateral); return v; }},
      {"blast.jobs", GateSubject::kFaults, false, false, {"max", "total"}, "jobs touched per fault",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) v.push_back(f.jobs_touched); return v; }},
      {"gpu_hours_lost", GateSubject::kFaults, false, false, {"max", "total"}, "GPU-hours lost per fault",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& f : m.faults) v.push_back(f.gpu_hours_lost); return v; }},
      {"ettr", GateSubject::kJobs, false, true, {"min", "mean"}, "effective training time ratio per job",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& j : m.jobs) v.push_back(j.ettr); return v; }},
      {"goodput", GateSubject::kJobs, false, true, {"min", "mean"}, "kept work / wall time per job",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& j : m.jobs) v.push_back(j.goodput); return v; }},
      {"job.mttf", GateSubject::kJobs, false, true, {"min", "mean"}, "hours up (running or restarting) per failure that stopped it, per job; "
       "never when none did",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& j : m.jobs) v.push_back(Mttf(j)); return v; }},
      {"job.failures_per_day", GateSubject::kJobs, false, false, {"max", "mean"}, "failures that stopped it per day up, per job",
       [](const RunMetrics& m) { std::vector<double> v; for (auto& j : m.jobs) v.push_back(FailuresPerDay(j)); return v; }},
      {"healer.precision", GateSubject::kRun, false, true, {""}, "isolations that hit a faulty component / all isolations",
       [](const RunMetrics& m) { return std::vector<double>{m.precision}; }},
      {"healer.recall", GateSubject::kRun, false, true, {""}, "faults isolated / faults that needed isolation",
       [](const RunMetrics& m) { return std::vector<double>{m.recall}; }},
      {"drained.gpus", GateSubject::kRun, false, false, {""}, "GPUs of the trays the healer drained",
       [](const RunMetrics& m) { return std::vector<double>{static_cast<double>(m.gpus_drained)}; }},
      {"drained.gpu_hours", GateSubject::kRun, false, false, {""}, "drained GPUs x hours until resumed",
       [](const RunMetrics& m) { return std::vector<double>{m.drained_gpu_hours}; }},
      {"healer.false_isolations", GateSubject::kRun, false, false, {""}, "isolations of healthy components",
       [](const RunMetrics& m) { return std::vector<double>{static_cast<double>(m.false_isolations.size())}; }},
  };
  return kDefs;
}

const MetricDef* FindDef(const std::string& metric, std::string& agg) {
  for (const MetricDef& d : Defs())
    for (const std::string& a : d.aggs) {
      std::string name = a.empty() ? d.base : d.base + "." + a;
      if (name == metric) {
        agg = a;
        return &d;
      }
    }
  return nullptr;
}

std::string Format(double v, bool is_time) {
  if (std::isinf(v)) return "never";
  if (is_time) return FormatDurationShort(Duration::FromSecondsF(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& ExpectationMetrics() {
  static const auto kList = [] {
    std::vector<std::pair<std::string, std::string>> out;
    // "ttr.p95" -> "time to recover, per fault: 95th percentile (a duration)"
    static const std::map<std::string, std::string> kAggWords = {
        {"max", "the largest"}, {"min", "the smallest"}, {"mean", "the mean"}, {"p50", "the median"},
        {"p95", "the 95th percentile"}, {"total", "the sum over the run"}};
    for (const MetricDef& d : Defs())
      for (const std::string& a : d.aggs)
        out.push_back({a.empty() ? d.base : d.base + "." + a,
                       d.description + (a.empty() ? "" : ": " + kAggWords.at(a)) + (d.is_time ? " (a duration)" : "")});
    return out;
  }();
  return kList;
}

bool HigherIsBetter(const std::string& metric) {
  std::string agg;
  const MetricDef* def = FindDef(metric, agg);
  return def && def->higher_better;
}

bool IsTimeMetric(const std::string& metric) {
  std::string agg;
  const MetricDef* def = FindDef(metric, agg);
  return def && def->is_time;
}

Result<Gate> ParseGate(const std::string& text) {
  static const char* kOps[] = {"<=", ">=", "==", "!=", "<", ">"};
  Gate g;
  g.text = text;
  size_t at = std::string::npos;
  for (const char* op : kOps) {
    at = text.find(op);
    if (at != std::string::npos) {
      g.op = op;
      break;
    }
  }
  if (at == std::string::npos)
    return Status::Invalid("'" + text + "' is not a gate; write METRIC OP VALUE, e.g. 'ttr.max < 30m' (OP: < <= > >= == !=)");
  g.metric = std::string(Trim(std::string_view(text).substr(0, at)));
  std::string value(Trim(std::string_view(text).substr(at + g.op.size())));
  std::string agg;
  const MetricDef* def = FindDef(g.metric, agg);
  if (!def) {
    std::string known;
    for (const auto& [name, desc] : ExpectationMetrics()) known += (known.empty() ? "" : ", ") + name;
    return Status::Invalid("unknown metric '" + g.metric + "'; known metrics: " + known);
  }
  if (def->is_time) {
    auto d = ParseDuration(value);
    if (!d.ok()) return d.status().WithContext("gate '" + text + "'");
    g.value = d->Seconds();
  } else if (!value.empty() && value.back() == '%') {
    auto f = ParseFraction(value);
    if (!f.ok()) return f.status().WithContext("gate '" + text + "'");
    g.value = *f;
  } else {
    char* end = nullptr;
    g.value = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(g.value))
      return Status::Invalid("gate '" + text + "': '" + value + "' is not a number");
  }
  return g;
}

namespace {

GateResult Evaluate(const Gate& gate, const RunMetrics& metrics, bool so_far) {
  std::string agg;
  const MetricDef* def = FindDef(gate.metric, agg);
  GateResult r{gate, false, 0, ""};
  if (!def) {
    r.message = gate.text + ": unknown metric";
    return r;
  }
  std::vector<double> v = def->values(metrics);
  r.actual = agg.empty() ? (v.empty() ? 0 : v[0]) : Aggregate(v, agg);
  const std::string& op = gate.op;
  double a = r.actual, b = gate.value;
  r.passed = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : op == ">=" ? a >= b
           : op == "==" ? std::fabs(a - b) < 1e-9 : std::fabs(a - b) >= 1e-9;
  if (v.empty() && !agg.empty()) {  // nothing to measure: the comparison with 0 would mean nothing
    r.passed = gate.allow_empty || so_far;
    const char* over = def->subject == GateSubject::kJobs ? "no job ran" : "no fault had an effect";
    r.message = gate.text + ": no data, " + over +
                (r.passed ? " (pass" + std::string(gate.allow_empty ? ": allow_empty" : "") + ")"
                          : " (FAIL: it measured nothing; allow_empty: true lets it pass)");
  } else {
    r.message = gate.text + ": " + Format(r.actual, def->is_time) + " (" + (r.passed ? "pass" : "FAIL") + ")";
  }
  return r;
}

}  // namespace

GateResult EvaluateGate(const Gate& gate, const RunMetrics& metrics) { return Evaluate(gate, metrics, false); }

GateSubject SubjectOf(const std::string& metric) {
  std::string agg;
  const MetricDef* def = FindDef(metric, agg);
  return def ? def->subject : GateSubject::kRun;
}

Status CheckContinuous(const Gate& gate) {
  static const char* kMonotone[] = {"ttd.max", "tti.max", "ttr.max", "blast.gpus.max", "blast.gpus.total",
                                    "blast.jobs.max", "blast.jobs.total", "gpu_hours_lost.max",
                                    "gpu_hours_lost.total", "healer.false_isolations"};
  bool upper = gate.op == "<" || gate.op == "<=";
  bool monotone = std::any_of(std::begin(kMonotone), std::end(kMonotone), [&](const char* m) { return gate.metric == m; });
  if (upper && monotone) return Status::Ok();
  std::string list;
  for (const char* m : kMonotone) list += (list.empty() ? "" : ", ") + std::string(m);
  return Status::Invalid("gate '" + gate.text + "' cannot be continuous: a continuous gate is an upper bound (< or <=) " +
                         "on a metric that never decreases during a run (" + list + ")");
}

GateResult EvaluateGateSoFar(const Gate& gate, const RunMetrics& metrics, Time now) {
  RunMetrics so_far = metrics;
  for (FaultMetrics& f : so_far.faults) {
    // Only a fault that had an effect counts with a time still missing (Timed): a time made up for one
    // that had none would put it in the gate.
    if (!HadEffect(f)) continue;
    Duration late = now - f.injected;
    for (std::optional<Duration>* t : {&f.time_to_detect, &f.time_to_isolate, &f.time_to_recover})
      if (!*t) *t = late;
  }
  return Evaluate(gate, so_far, true);
}

}  // namespace rackchaos::runner
