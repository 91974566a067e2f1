#include "runner/campaign/sweep_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "core/units.h"
#include "runner/spec/expect.h"

namespace rackchaos::runner {
namespace {

double Percentile(const std::vector<double>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PointAxes(const std::string& point) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= point.size()) {
    size_t end = point.find(',', start);
    if (end == std::string::npos) end = point.size();
    const std::string part = point.substr(start, end - start);
    const size_t eq = part.find('=');
    if (eq == std::string::npos) out.emplace_back("", part);
    else out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

namespace {

// A grid value as a number: itself when it reads whole as one, its seconds when it is a duration.
std::optional<double> Magnitude(const std::string& value) {
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  if (end == value.c_str() + value.size() && std::isfinite(number)) return number;
  auto duration = ParseDuration(value);
  if (duration.ok()) return static_cast<double>(duration->us) / 1e6;
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& DefaultSweepMetrics() {
  static const std::vector<std::string> metrics = {"ttr.p50",           "ttr.p95",          "ettr.min",
                                                   "ettr.mean",         "gpu_hours_lost.total", "drained.gpus",
                                                   "drained.gpu_hours", "healer.precision", "healer.recall"};
  return metrics;
}

Result<std::vector<std::string>> ParseSweepMetrics(const std::string& list) {
  if (list.empty()) return DefaultSweepMetrics();
  std::set<std::string> known;
  std::string names;
  for (const auto& [name, help] : ExpectationMetrics()) {
    known.insert(name);
    names += (names.empty() ? "" : ", ") + name;
  }
  std::vector<std::string> out;
  if (const size_t items = static_cast<size_t>(std::count(list.begin(), list.end(), ',')) + 1; items > kMaxSweepMetrics)
    return Status::Invalid("--metrics lists " + std::to_string(items) + " names; expected 1 to " +
                           std::to_string(kMaxSweepMetrics) + " metric names");
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(start, end - start);
    if (!known.contains(name))
      return Status::Invalid("--metrics '" + list + "': unknown metric '" + name + "'; known metrics: " + names);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    start = end + 1;
  }
  return out;
}

Summary Summarize(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  std::sort(values.begin(), values.end());
  Summary s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  const double n = static_cast<double>(s.n);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / n;
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.sd = s.n > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.min = values.front();
  s.max = values.back();
  s.p50 = Percentile(values, 0.5);
  s.p95 = Percentile(values, 0.95);
  const double half = 1.96 * s.sd / std::sqrt(n);
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

bool PointBefore(const std::string& a, const std::string& b) {
  const auto xs = PointAxes(a), ys = PointAxes(b);
  for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
    const std::string &x = xs[i].second, &y = ys[i].second;
    if (xs[i].first != ys[i].first) return xs[i].first < ys[i].first;
    if (x == y) continue;
    const auto mx = Magnitude(x), my = Magnitude(y);
    if (mx && my && *mx != *my) return *mx < *my;
    if (mx.has_value() != my.has_value()) return mx.has_value();  // numbers before words
    return x < y;
  }
  return xs.size() < ys.size();
}

}  // namespace rackchaos::runner
