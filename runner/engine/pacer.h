// Pacing of a simulated run (`rackchaos run --pace N`): at most N simulated seconds per wall second, so a
// simulated plan lasts long enough to be watched (serve's live page) or scraped (--metrics-listen by a
// real Prometheus). Besides the real-mode WallClock, this is the only place that waits on wall time.
//
// It never changes what the run computes: the virtual clock still runs every timer in the same order,
// only later in wall time; between timers its Now() moves to the time the wall clock allows (a jump
// VirtualClock::RunNext makes with any limit). A paced and an unpaced run of a plan give the same report
// (tests/serve/prometheus_test.py compares them).
//
// Not thread-safe: one pacer per run loop.
#pragma once

#include <chrono>
#include <functional>

#include "core/units.h"

namespace rackchaos::runner {

// Where a pacer reads wall time and how it waits: the steady clock and a real sleep unless a test gives
// its own.
struct PacerWall {
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<void(std::chrono::milliseconds)> sleep;
};

class Pacer {
 public:
  // `pace` simulated seconds per wall second; 0 or less: not paced.
  explicit Pacer(double pace, PacerWall wall = {});

  bool on() const { return pace_ > 0; }
  // How far the simulated clock may run now: `limit` when not paced, else the simulated time that
  // corresponds to the wall time since the first call (capped at `limit`).
  Time Allowed(Time limit);
  // Waits a short slice of wall time (20 ms) so that Allowed moves on.
  void Wait() const;

 private:
  double pace_;
  PacerWall wall_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace rackchaos::runner
