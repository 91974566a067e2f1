#include "core/clock.h"

namespace rackchaos {

TimerId VirtualClock::CallAt(Time at, std::function<void()> fn) {
  if (at < now_) at = now_;
  TimerId id = next_id_++;
  queue_.push({at, id});
  callbacks_.emplace(id, std::move(fn));
  return id;
}

void VirtualClock::Cancel(TimerId id) { callbacks_.erase(id); }

bool VirtualClock::RunNext(Time limit) {
  while (!queue_.empty()) {
    Entry e = queue_.top();
    auto it = callbacks_.find(e.id);
    if (it == callbacks_.end()) {  // cancelled
      queue_.pop();
      continue;
    }
    if (e.at > limit) {
      if (limit != Time::Max()) now_ = limit;
      return false;
    }
    queue_.pop();
    auto fn = std::move(it->second);
    callbacks_.erase(it);
    now_ = e.at;
    fn();
    return true;
  }
  if (limit != Time::Max() && now_ < limit) now_ = limit;
  return false;
}

uint64_t VirtualClock::RunUntil(Time limit) {
  stopped_ = false;
  uint64_t ran = 0;
  while (!stopped_ && RunNext(limit)) ++ran;
  if (!stopped_ && now_ < limit) now_ = limit;
  return ran;
}

}  // namespace rackchaos
