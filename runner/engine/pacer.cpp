#include "runner/engine/pacer.h"

#include <algorithm>
#include <thread>

namespace rackchaos::runner {

Time Pacer::Allowed(Time limit) {
  if (!on()) return limit;
  const auto now = std::chrono::steady_clock::now();
  if (!started_) {  // the run's setup (store, topology) is not counted against its pace
    started_ = true;
    start_ = now;
  }
  const double wall_s = std::chrono::duration<double>(now - start_).count();
  const Time allowed = Duration::FromSecondsF(wall_s * pace_);
  return std::min(allowed, limit);
}

void Pacer::Wait() const { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

}  // namespace rackchaos::runner
