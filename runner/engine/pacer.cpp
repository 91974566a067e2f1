#include "runner/engine/pacer.h"

#include <algorithm>
#include <thread>

namespace rackchaos::runner {

Pacer::Pacer(double pace, PacerWall wall) : pace_(pace), wall_(std::move(wall)) {
  if (!wall_.now) wall_.now = [] { return std::chrono::steady_clock::now(); };
  if (!wall_.sleep) wall_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
}

Time Pacer::Allowed(Time limit) {
  if (!on()) return limit;
  const auto now = wall_.now();
  if (!started_) {  // the run's setup (store, topology) is not counted against its pace
    started_ = true;
    start_ = now;
  }
  const double wall_s = std::chrono::duration<double>(now - start_).count();
  return std::min(Duration::FromSecondsF(wall_s * pace_), limit);
}

void Pacer::Wait() const { wall_.sleep(std::chrono::milliseconds(20)); }

}  // namespace rackchaos::runner
