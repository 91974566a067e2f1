#include "core/clock.h"

#include <algorithm>

namespace rackchaos {
namespace {

// The timer heap is 4-ary, not binary: half the levels, and a node's four children sit side by side, so
// a pop at 1,778 racks (some 100,000 timers pending) misses the cache about half as often. (at, id)
// orders timers totally, so any heap pops them in the same order.
constexpr size_t kArity = 4;

template <typename Entry, typename Later>
void HeapPush(std::vector<Entry>& heap, Entry e, Later later) {
  size_t i = heap.size();
  heap.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!later(heap[parent], e)) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = e;
}

// Removes the top (heap.front()), which the caller has read.
template <typename Entry, typename Later>
void HeapPop(std::vector<Entry>& heap, Later later) {
  const Entry e = heap.back();
  heap.pop_back();
  const size_t n = heap.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    const size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    for (size_t c = first + 1; c < std::min(first + kArity, n); ++c)
      if (later(heap[best], heap[c])) best = c;
    if (!later(e, heap[best])) break;
    heap[i] = heap[best];
    i = best;
  }
  heap[i] = e;
}

}  // namespace

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
  HeapPush(heap_, Entry{at, id, slot}, Later);
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
      TakeFn(heap_.front().fn);  // its captures go now
      HeapPop(heap_, Later);
      continue;
    }
    if (heap_.front().at > limit) {
      if (limit != Time::Max()) now_ = limit;
      return false;
    }
    const Entry e = heap_.front();
    HeapPop(heap_, Later);
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
