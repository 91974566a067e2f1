// The Clock gives "now" and "call me at T". Nothing else in rackchaos reads a system clock or sleeps.
//
// VirtualClock jumps straight to the next timer, so a simulated month takes as long as its events.
// Timers due at the same instant run in the order they were scheduled, which keeps runs deterministic.
// Not thread-safe: one clock belongs to one event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/units.h"

namespace rackchaos {

using TimerId = uint64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
  // Runs `fn` at `at` (or at once, on the next turn, if `at` is in the past). Returns an id for Cancel.
  virtual TimerId CallAt(Time at, std::function<void()> fn) = 0;
  TimerId CallAfter(Duration d, std::function<void()> fn) { return CallAt(Now() + d, std::move(fn)); }
  // Cancelling an id that already ran or was cancelled does nothing.
  virtual void Cancel(TimerId id) = 0;
  // Runs the next timer due by `limit` and returns true. Returns false, running nothing, when none is
  // due by then (the clock then reads `limit`) or as soon as `stop()` turns true while it waits for
  // one. How a run goes on (runner/engine/engine.h): a virtual clock never waits, so it never asks.
  virtual bool RunNext(Time limit, const std::function<bool()>& stop) = 0;
};

class VirtualClock : public Clock {
 public:
  Time Now() const override { return now_; }
  TimerId CallAt(Time at, std::function<void()> fn) override;
  void Cancel(TimerId id) override;

  // Runs the next due timer; returns false when none is left or the next one is after `limit`
  // (then the clock stops at `limit`).
  bool RunNext(Time limit = Time::Max());
  bool RunNext(Time limit, const std::function<bool()>&) override { return RunNext(limit); }
  // Runs timers up to and including `limit`, then sets now to `limit`. Returns how many ran.
  uint64_t RunUntil(Time limit);
  // Stops RunUntil after the timer that is running now.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  size_t pending() const { return pending_; }

 private:
  // The heap holds small plain entries; each timer's function waits in a slot of fns_ (reused once
  // run), so sifting moves 24 bytes, not a std::function. A cancelled timer stays in the heap, marked
  // not live, until it reaches the top.
  struct Entry {
    Time at;
    TimerId id;  // ids grow, so they order same-time timers by scheduling order
    uint32_t fn;  // its slot in fns_
  };
  static bool Later(const Entry& a, const Entry& b) { return a.at != b.at ? a.at > b.at : a.id > b.id; }
  std::function<void()> TakeFn(uint32_t slot);
  Time now_{};
  TimerId next_id_ = 1;
  bool stopped_ = false;
  std::vector<Entry> heap_;           // a min-heap on (at, id)
  std::vector<std::function<void()>> fns_;
  std::vector<uint32_t> free_fns_;    // slots of fns_ not in use
  std::vector<bool> live_ = {false};  // by id: scheduled, and neither run nor cancelled yet
  size_t pending_ = 0;
};

}  // namespace rackchaos
