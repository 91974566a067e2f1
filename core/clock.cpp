#include "core/clock.h"

#include <algorithm>

namespace rackchaos {

TimerId VirtualClock::CallAt(Time at, std::function<void()> fn) {
  if (at < now_) at = now_;
  TimerId id = next_id_++;
  live_.push_back(true);  // live_[id]
  uint32_t slot = 0;
  if (free_fns_.empty()) {
    slot = static_cast<uint32_t>(fns_.size());
    fns_.push_back(std::move(fn));
  } else {
    slot = free_fns_.back();
    free_fns_.pop_back();
    fns_[slot] = std::move(fn);
  }
  heap_.push_back({at, id, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  ++pending_;
  return id;
}

void VirtualClock::Cancel(TimerId id) {
  if (id >= live_.size() || !live_[id]) return;
  live_[id] = false;
  --pending_;
}

bool VirtualClock::RunNext(Time limit) {
  while (!heap_.empty()) {
    if (!live_[heap_.front().id]) {  // cancelled
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      TakeFn(heap_.back().fn);  // its captures go now
      heap_.pop_back();
      continue;
    }
    if (heap_.front().at > limit) {
      if (limit != Time::Max()) now_ = limit;
      return false;
    }
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Entry e = heap_.back();
    heap_.pop_back();
    live_[e.id] = false;
    --pending_;
    now_ = e.at;
    std::function<void()> fn = TakeFn(e.fn);
    fn();
    return true;
  }
  if (limit != Time::Max() && now_ < limit) now_ = limit;
  return false;
}

std::function<void()> VirtualClock::TakeFn(uint32_t slot) {
  std::function<void()> fn = std::move(fns_[slot]);
  fns_[slot] = nullptr;
  free_fns_.push_back(slot);
  return fn;
}

uint64_t VirtualClock::RunUntil(Time limit) {
  stopped_ = false;
  uint64_t ran = 0;
  while (!stopped_ && RunNext(limit)) ++ran;
  if (!stopped_ && now_ < limit) now_ = limit;
  return ran;
}

}  // namespace rackchaos
