#include "runner/site/wall_clock.h"

#include <algorithm>

#include "core/wall_time.h"

namespace rackchaos::runner {

WallClock::WallClock(boost::asio::io_context& io)
    : io_(io), start_(std::chrono::steady_clock::now()), timer_(io) {}

Time WallClock::Now() const {
  return Duration::Micros(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count());
}

int64_t WallClock::UnixMicrosAt(Time t) const {
  return UnixMicrosNow() + (t - Now()).us;
}

TimerId WallClock::CallAt(Time at, std::function<void()> fn) {
  const TimerId id = next_id_++;
  timers_[{at.us, id}] = std::move(fn);
  due_[id] = at.us;
  return id;
}

void WallClock::Cancel(TimerId id) {
  auto it = due_.find(id);
  if (it == due_.end()) return;
  timers_.erase({it->second, id});
  due_.erase(it);
}

void WallClock::Wait(Duration d) {
  bool fired = false;
  timer_.expires_after(std::chrono::microseconds(std::max<int64_t>(d.us, 0)));
  timer_.async_wait([&fired](const boost::system::error_code&) { fired = true; });
  while (!fired) {
    if (io_.stopped()) io_.restart();
    io_.run_one();
  }
}

bool WallClock::RunNext(Time limit, const std::function<bool()>& stop) {
  constexpr Duration kPoll = Duration::Millis(50);
  for (;;) {
    if (stop()) return false;
    const bool have = !timers_.empty() && timers_.begin()->first.first <= limit.us;
    const Time target = have ? Duration::Micros(timers_.begin()->first.first) : limit;
    const Time now = Now();
    if (now >= target) break;
    Wait(std::min(target - now, kPoll));
  }
  if (timers_.empty() || timers_.begin()->first.first > limit.us) return false;
  auto node = timers_.extract(timers_.begin());
  due_.erase(node.key().second);
  node.mapped()();
  return true;
}

}  // namespace rackchaos::runner
