// The wall clock, read here and nowhere else. Run rows, ledger rows and remote command stamps carry wall
// time so people and other hosts' logs can place them; simulated time never comes from here (the Clock
// in core/clock.h gives a run its time). Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rackchaos {

// Now as "2024-05-01T12:00:00Z": UTC, whole seconds (the run and ledger rows' stamps).
std::string WallStampNow();
// "2024-05-01T12:00:00Z" for a Unix time in seconds.
std::string FormatWallStamp(int64_t unix_seconds);
// FormatWallStamp's inverse: the Unix time of "2024-05-01T12:00:00Z"; nullopt for any other form.
std::optional<int64_t> ParseWallStamp(std::string_view stamp);
// Now in seconds and in microseconds since the Unix epoch (this machine's system clock).
int64_t UnixSecondsNow();
int64_t UnixMicrosNow();

}  // namespace rackchaos
