// Logging through spdlog, stamped with the run's clock ("[  1h02m03s] ...") instead of the wall clock,
// so simulated runs log the time the events happen at.
#pragma once

#include <spdlog/spdlog.h>

#include "core/clock.h"

namespace rackchaos {

// Installs the default logger (stderr, colour when a terminal) at `level`. Idempotent.
void InitLogging(spdlog::level::level_enum level);
// The clock whose Now() stamps each line logged from the calling thread (each thread has its own);
// nullptr stamps "-". The clock must outlive its use here.
void SetLogClock(const Clock* clock);
// The clock that stamps the calling thread's lines now (nullptr: none).
const Clock* LogClock();

// Stamps the calling thread's lines with `clock` while it lives, then with the clock before it, on
// every way out of the scope (a run that fails half-way leaves no dangling clock behind).
class LogClockScope {
 public:
  explicit LogClockScope(const Clock* clock) : previous_(LogClock()) { SetLogClock(clock); }
  ~LogClockScope() { SetLogClock(previous_); }
  LogClockScope(const LogClockScope&) = delete;
  LogClockScope& operator=(const LogClockScope&) = delete;

 private:
  const Clock* previous_;
};

}  // namespace rackchaos
