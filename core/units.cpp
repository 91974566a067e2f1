#include "core/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/strings.h"

namespace rackchaos {
namespace {

constexpr const char* kDurationUnits = "ms, s, m, h, d, w (e.g. 90s, 5m, 1h30m, 30d)";

bool ParseNumber(std::string_view text, size_t& pos, double& out) {
  size_t start = pos;
  while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) ++pos;
  if (pos == start) return false;
  std::string num(text.substr(start, pos - start));
  char* end = nullptr;
  out = std::strtod(num.c_str(), &end);
  return end == num.c_str() + num.size() && std::isfinite(out);
}

}  // namespace

Duration Duration::FromSecondsF(double s) {
  if (!(s > 0)) return {0};
  double us = std::round(s * 1e6);
  if (us >= 9.2e18) return Max();
  return {static_cast<int64_t>(us)};
}

Result<Duration> ParseDuration(std::string_view raw) {
  std::string text(Trim(raw));
  if (text.empty()) return Status::Invalid(std::string("empty duration; use a number with a unit: ") + kDurationUnits);
  if (text[0] == '-') return Status::Invalid(Quote(text) + " is negative; durations must be >= 0");
  double total_us = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    double value = 0;
    if (!ParseNumber(text, pos, value)) {
      return Status::Invalid(Quote(text) + " is not a duration; accepted units: " + kDurationUnits);
    }
    size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    std::string unit = text.substr(unit_start, pos - unit_start);
    double scale = 0;
    if (unit == "ms") scale = 1e3;
    else if (unit == "s") scale = 1e6;
    else if (unit == "m" || unit == "min") scale = 60e6;
    else if (unit == "h") scale = 3600e6;
    else if (unit == "d") scale = 86400e6;
    else if (unit == "w") scale = 7 * 86400e6;
    else if (unit.empty()) {
      return Status::Invalid(Quote(text) + " has no unit; accepted units: " + kDurationUnits);
    } else {
      return Status::Invalid(Quote(text) + ": unknown unit '" + unit + "'; accepted units: " + kDurationUnits);
    }
    total_us += value * scale;
  }
  // About 100 years is more than any plan needs and keeps sums far from overflow.
  if (total_us > 100.0 * 365 * 86400e6) return Status::Invalid(Quote(text) + " is too long (at most 100 years)");
  return Duration{static_cast<int64_t>(std::llround(total_us))};
}

std::string FormatDuration(Duration d) {
  if (d.us == 0) return "0s";
  std::string out;
  int64_t us = d.us;
  if (us < 0) { out = "-"; us = -us; }
  const int64_t day = 86400000000LL, hour = 3600000000LL, minute = 60000000LL, sec = 1000000LL;
  if (us >= day) { out += std::to_string(us / day) + "d"; us %= day; }
  if (us >= hour) { out += std::to_string(us / hour) + "h"; us %= hour; }
  if (us >= minute) { out += std::to_string(us / minute) + "m"; us %= minute; }
  if (us > 0) {
    char buf[32];
    if (us % sec == 0) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(us / sec));
    else if (us % 1000 == 0 && us < sec) std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(us / 1000));
    else {
      std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(us) / 1e6);
      std::string s(buf);
      while (!s.empty() && s.back() == '0') s.pop_back();
      std::snprintf(buf, sizeof buf, "%ss", s.c_str());
    }
    out += buf;
  }
  return out;
}

std::string FormatDurationShort(Duration d) {
  double s = d.Seconds();
  char buf[32];
  double a = std::fabs(s);
  if (a < 120) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (a < 7200) std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
  else if (a < 172800) std::snprintf(buf, sizeof buf, "%.2fh", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.2fd", s / 86400);
  return buf;
}

Result<double> ParseWatts(std::string_view raw) {
  std::string text(Trim(raw));
  size_t pos = 0;
  double value = 0;
  if (!ParseNumber(text, pos, value)) return Status::Invalid(Quote(text) + " is not a power; write e.g. 600W or 1.2kW");
  std::string unit(Trim(std::string_view(text).substr(pos)));
  if (unit == "W") return value;
  if (unit == "kW") return value * 1000;
  return Status::Invalid(Quote(text) + ": power needs a unit, W or kW (e.g. 600W)");
}

Result<double> ParseFraction(std::string_view raw) {
  std::string text(Trim(raw));
  size_t pos = 0;
  double value = 0;
  if (!ParseNumber(text, pos, value)) return Status::Invalid(Quote(text) + " is not a fraction; write e.g. 15% or 0.15");
  std::string unit(Trim(std::string_view(text).substr(pos)));
  if (unit == "%") value /= 100;
  else if (!unit.empty()) return Status::Invalid(Quote(text) + ": a fraction is a percentage (15%) or a number in [0, 1]");
  if (value < 0 || value > 1) return Status::Invalid(Quote(text) + " is outside [0%, 100%]");
  return value;
}

}  // namespace rackchaos
