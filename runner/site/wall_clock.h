// WallClock: the real-mode Clock. Now() is steady time since construction; timers wait on an Asio
// steady_timer on the SSH pool's io_context, so SSH sessions keep being serviced while a run waits.
//
// Timer callbacks never run inside an Asio handler: RunNext() runs the io_context until the next timer
// is due and then calls the callback itself, so a callback may use the pool's blocking helpers
// (SshPool::RunAll), which run the same io_context. Timers due at the same instant run in the order
// they were scheduled. Not thread-safe: one clock, one thread, the one that runs `io`.
#pragma once

#include <chrono>
#include <functional>
#include <map>

#include "core/clock.h"
#include "runner/ssh/asio.h"

namespace rackchaos::runner {

class WallClock : public Clock {
 public:
  explicit WallClock(boost::asio::io_context& io);

  Time Now() const override;
  TimerId CallAt(Time at, std::function<void()> fn) override;
  void Cancel(TimerId id) override;

  // Waits for the next timer (servicing `io` meanwhile) and runs it. Returns false, without running
  // anything, when no timer is due by `limit` (it then returns once `limit` is reached) or as soon as
  // `stop()` turns true (checked at least every 50 ms).
  bool RunNext(Time limit, const std::function<bool()>& stop) override;
  // The Unix wall-clock time (microseconds since the epoch, this machine's system clock) at which
  // this clock will read `t`: the instant armed faults are told to land at on their hosts.
  int64_t UnixMicrosAt(Time t) const;
  size_t pending() const { return timers_.size(); }

 private:
  // Runs `io` for up to `d` (at least one handler or the timer).
  void Wait(Duration d);

  boost::asio::io_context& io_;
  std::chrono::steady_clock::time_point start_;
  boost::asio::steady_timer timer_;
  TimerId next_id_ = 1;
  // (due time, id) -> callback: ordered by time, then by scheduling order.
  std::map<std::pair<int64_t, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, int64_t> due_;
};

}  // namespace rackchaos::runner
