// Durations and physical quantities with units, as plans write them ("90s", "1h30m", "600W", "15%").
//
// Time is an integer count of microseconds: integer arithmetic keeps the simulator bit-for-bit
// deterministic, and int64 covers ±292,000 years.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos {

struct Duration {
  int64_t us = 0;

  static constexpr Duration Micros(int64_t v) { return {v}; }
  static constexpr Duration Millis(int64_t v) { return {v * 1000}; }
  static constexpr Duration Seconds(int64_t v) { return {v * 1000000}; }
  static constexpr Duration Minutes(int64_t v) { return {v * 60000000}; }
  static constexpr Duration Hours(int64_t v) { return {v * 3600000000LL}; }
  // Rounds to the nearest microsecond; negative and NaN inputs give zero, huge ones saturate.
  static Duration FromSecondsF(double s);
  static constexpr Duration Max() { return {INT64_MAX}; }

  double Seconds() const { return static_cast<double>(us) / 1e6; }
  double Hours() const { return static_cast<double>(us) / 3.6e9; }

  friend constexpr Duration operator+(Duration a, Duration b) { return {a.us + b.us}; }
  friend constexpr Duration operator-(Duration a, Duration b) { return {a.us - b.us}; }
  friend constexpr Duration operator*(Duration a, int64_t k) { return {a.us * k}; }
  Duration& operator+=(Duration b) { us += b.us; return *this; }
  Duration& operator-=(Duration b) { us -= b.us; return *this; }
  friend constexpr auto operator<=>(Duration a, Duration b) = default;
};

// A point in time, measured from the start of the run (virtual in simulation, steady clock in real mode).
using Time = Duration;

// Parses "250ms", "90s", "5m", "2h", "30d", "1w" and sums such as "1h30m". A bare number is refused:
// a plan must say its unit. On error the message lists the accepted units.
Result<Duration> ParseDuration(std::string_view text);

// Formats compactly and exactly: "0s", "1.5s", "2m30s", "1h2m3.25s", "3d4h".
std::string FormatDuration(Duration d);
// Formats with fixed precision for tables: "12.3s", "4.5m", "2.25h".
std::string FormatDurationShort(Duration d);

// Parses a power "600W" / "1.2kW" into watts.
Result<double> ParseWatts(std::string_view text);
// Parses a fraction "15%" or "0.15" into [0, 1].
Result<double> ParseFraction(std::string_view text);

}  // namespace rackchaos
