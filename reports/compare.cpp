#include "reports/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "core/strings.h"
#include "reports/escape.h"
#include "reports/text_table.h"

namespace rackchaos::reports {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Nearest-rank percentile; missing values sort last as +infinity. 0 when there are no faults.
double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

std::vector<double> Times(const RunMetrics& m, std::optional<Duration> FaultMetrics::*field) {
  std::vector<double> out;
  for (const FaultMetrics& f : m.faults) out.push_back((f.*field) ? (f.*field)->Seconds() : kInf);
  return out;
}

void AddTimes(std::vector<MetricValue>& out, const std::string& prefix, const std::vector<double>& v) {
  out.push_back({prefix + ".p50", true, true, Percentile(v, 50)});
  out.push_back({prefix + ".p95", true, true, Percentile(v, 95)});
  out.push_back({prefix + ".max", true, true, Percentile(v, 100)});
}

const char* const kMetricNames[] = {"ttr.p50", "ttr.p95", "ttr.max", "ttd.p50", "ttd.p95", "ttd.max",
                                    "blast.gpus", "blast.gpus.max", "blast.jobs", "gpu_hours_lost",
                                    "ettr.min", "ettr.mean", "precision", "recall", "faults",
                                    "faults.unrecovered"};

bool LowerIsBetter(const std::string& name) {
  return !(name.rfind("ettr", 0) == 0 || name == "precision" || name == "recall");
}

std::string Show(const MetricValue& v) {
  if (std::isinf(v.value)) return "never";
  if (v.is_time) return FormatDurationShort(Duration::FromSecondsF(v.value));
  return Num(v.value);
}

std::string ShowDelta(const MetricChange& c) {
  if (std::isnan(c.delta) || c.delta == 0) return "0";
  if (std::isinf(c.delta)) return c.delta > 0 ? "+inf" : "-inf";
  std::string sign = c.delta > 0 ? "+" : "-";
  std::string abs = c.a.is_time ? FormatDurationShort(Duration::FromSecondsF(std::fabs(c.delta)))
                                : Num(std::fabs(c.delta));
  std::string out = sign + abs;
  if (c.a.value != 0 && std::isfinite(c.a.value)) out += " (" + sign + Fixed(std::fabs(c.delta / c.a.value) * 100, 1) + "%)";
  return out;
}

// How much worse b is than a, in the metric's bad direction (<= 0 when not worse).
double Worsening(const MetricValue& a, const MetricValue& b) {
  if (a.value == b.value) return 0;  // also both infinite
  return a.lower_is_better ? b.value - a.value : a.value - b.value;
}

std::string CheckThreshold(const MetricChange& c, const Threshold& t) {
  double worse = Worsening(c.a, c.b);
  if (!(worse > 0)) return "";
  double allowed = t.amount;
  double measured = worse;
  if (t.relative) measured = c.a.value == 0 ? kInf : worse / std::fabs(c.a.value);
  if (measured <= allowed) return "";
  return c.a.name + " regressed: " + Show(c.a) + " -> " + Show(c.b) + " exceeds " + t.text;
}

// The largest worsening a --fail-on amount may allow (issue 26: every number a user types is bounded):
// a relative amount up to 10000% (100 times run A's value), a time up to 3650 days, a ratio (ETTR,
// precision, recall) up to 1, GPU-hours up to 10^12, counts (GPUs, jobs, faults) up to 10^7.
struct ThresholdBound {
  double max;
  const char* text;  // the valid range, for the refusal
};
ThresholdBound BoundOf(const std::string& metric, bool relative) {
  if (relative) return {10000, "a percentage from 0% to 10000%"};
  if (metric.rfind("tt", 0) == 0) return {3650.0 * 86400, "a duration from 0s to 3650d (or seconds)"};
  if (metric.rfind("ettr", 0) == 0 || metric == "precision" || metric == "recall")
    return {1, "a number from 0 to 1 (a ratio)"};
  if (metric == "gpu_hours_lost") return {1e12, "a number of GPU-hours from 0 to 1e12"};
  return {1e7, "a count from 0 to 10000000"};
}

Result<Threshold> ParseOne(std::string_view item) {
  Threshold t;
  t.text = std::string(item);
  size_t eq = item.find('=');
  if (eq == std::string_view::npos) return Status::Invalid("threshold '" + t.text + "' is not METRIC=AMOUNT (e.g. ttr.p95=+10%)");
  t.metric = std::string(item.substr(0, eq));
  if (std::find(std::begin(kMetricNames), std::end(kMetricNames), t.metric) == std::end(kMetricNames)) {
    std::string known;
    for (const char* n : kMetricNames) known += (known.empty() ? "" : ", ") + std::string(n);
    return Status::Invalid("threshold '" + t.text + "': unknown metric '" + t.metric + "'; known: " + known);
  }
  std::string amount(item.substr(eq + 1));
  bool lower_better = LowerIsBetter(t.metric);
  if (!amount.empty() && (amount[0] == '+' || amount[0] == '-')) {
    if ((amount[0] == '+') != lower_better) {
      return Status::Invalid("threshold '" + t.text + "': " + t.metric + " gets worse when it goes " +
                             (lower_better ? "up; write +" : "down; write -") + amount.substr(1));
    }
    amount = amount.substr(1);
  }
  bool is_time = t.metric.rfind("tt", 0) == 0;
  if (!amount.empty() && amount.back() == '%') {
    t.relative = true;
    amount.pop_back();
  }
  char* end = nullptr;
  double v = std::strtod(amount.c_str(), &end);
  if (!t.relative && is_time && end && *end != '\0') {
    auto d = ParseDuration(amount);
    if (!d.ok()) return Status::Invalid("threshold '" + t.text + "': " + d.status().message());
    v = d->Seconds();
  } else if (amount.empty() || !end || *end != '\0' || !(v >= 0)) {
    return Status::Invalid("threshold '" + t.text + "': amount '" + amount +
                           "' is not a non-negative number, percentage or (for times) duration");
  }
  const ThresholdBound bound = BoundOf(t.metric, t.relative);
  if (!(v <= bound.max))
    return Status::Invalid("threshold '" + t.text + "': " + Quote(amount + (t.relative ? "%" : "")) +
                           " is out of range; expected " + bound.text);
  t.amount = t.relative ? v / 100 : v;
  return t;
}

}  // namespace

Result<std::vector<MetricValue>> RunMetricValues(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(RunMetrics m, store.ReadMetrics(run));
  std::vector<MetricValue> out;
  AddTimes(out, "ttr", Times(m, &FaultMetrics::time_to_recover));
  AddTimes(out, "ttd", Times(m, &FaultMetrics::time_to_detect));
  double gpus = 0, gpus_max = 0, jobs = 0, hours = 0, unrecovered = 0;
  for (const FaultMetrics& f : m.faults) {
    gpus += f.gpus_direct + f.gpus_collateral;
    gpus_max = std::max<double>(gpus_max, f.gpus_direct + f.gpus_collateral);
    jobs += f.jobs_touched;
    hours += f.gpu_hours_lost;
    unrecovered += f.time_to_recover ? 0 : 1;
  }
  double ettr_min = m.jobs.empty() ? 1 : kInf, ettr_sum = 0;
  for (const JobMetrics& j : m.jobs) {
    ettr_min = std::min(ettr_min, j.ettr);
    ettr_sum += j.ettr;
  }
  double ettr_mean = m.jobs.empty() ? 1 : ettr_sum / static_cast<double>(m.jobs.size());
  const double values[] = {gpus, gpus_max, jobs, hours, ettr_min, ettr_mean, m.precision, m.recall,
                           static_cast<double>(m.faults.size()), unrecovered};
  for (size_t i = 0; i < std::size(values); ++i) {
    std::string name = kMetricNames[6 + i];
    out.push_back({name, false, LowerIsBetter(name), values[i]});
  }
  return out;
}

Result<std::vector<Threshold>> ParseThresholds(std::string_view spec) {
  std::vector<Threshold> out;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    if (!item.empty()) {
      RC_ASSIGN_OR_RETURN(Threshold t, ParseOne(item));
      out.push_back(t);
    }
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return out;
}

Comparison CompareMetrics(int64_t run_a, const std::vector<MetricValue>& a, int64_t run_b,
                          const std::vector<MetricValue>& b, const std::vector<Threshold>& thresholds) {
  Comparison c{run_a, run_b, {}, 0, ""};
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    MetricChange ch{a[i], b[i], b[i].value - a[i].value, 0, ""};
    double worse = Worsening(a[i], b[i]);
    ch.verdict = worse > 0 ? -1 : worse < 0 ? 1 : 0;
    for (const Threshold& t : thresholds) {
      if (t.metric != a[i].name) continue;
      std::string why = CheckThreshold(ch, t);
      if (!why.empty() && ch.regression.empty()) ch.regression = why;
    }
    c.regressions += ch.regression.empty() ? 0 : 1;
    c.changes.push_back(ch);
  }
  return c;
}

std::string PlanDifference(const RunRow& a, const RunRow& b) {
  if (a.info.plan_hash == b.info.plan_hash) return "";
  auto plan = [](const RunRow& r) {
    return "run " + std::to_string(r.id) + " ran '" + TerminalText(r.info.plan_name) + "' (plan hash " +
           TerminalText(r.info.plan_hash) + ")";
  };
  return "Warning: the two runs ran different plans: " + plan(a) + ", " + plan(b) +
         "; the differences below are partly the plans', not only the runs'";
}

std::string RenderComparison(const Comparison& c) {
  TextTable table({"metric", "run " + std::to_string(c.run_a), "run " + std::to_string(c.run_b), "delta", "better/worse"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const MetricChange& ch : c.changes) {
    const char* verdict = ch.verdict < 0 ? "worse" : ch.verdict > 0 ? "better" : "";
    table.AddRow({ch.a.name, Show(ch.a), Show(ch.b), ShowDelta(ch),
                  ch.regression.empty() ? verdict : "REGRESSED"});
  }
  std::string out = c.plan_warning.empty() ? "" : c.plan_warning + "\n";
  out += "Run " + std::to_string(c.run_b) + " compared with run " + std::to_string(c.run_a) + "\n" + table.Render("  ");
  for (const MetricChange& ch : c.changes) {
    if (!ch.regression.empty()) out += "FAIL  " + ch.regression + "\n";
  }
  return out;
}

}  // namespace rackchaos::reports
