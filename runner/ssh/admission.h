// Caps how many operations run at once; the rest wait in FIFO order.
//
// Internal to runner/ssh. Used on the io_context's thread only. Queued starts run from a posted
// handler, never inside Release(), so a finishing operation cannot re-enter its own session.
#pragma once

#include <deque>
#include <functional>

#include "runner/ssh/asio.h"

namespace rackchaos::ssh {

class Admission {
 public:
  Admission(boost::asio::io_context& io, int limit) : io_(io), limit_(limit < 1 ? 1 : limit) {}

  // Runs `start` now if fewer than `limit` operations are in flight, else when one is released.
  // Every started operation must call Release() exactly once when it ends.
  void Submit(std::function<void()> start) {
    if (in_flight_ < limit_) {
      ++in_flight_;
      start();
    } else {
      queue_.push_back(std::move(start));
    }
  }

  void Release() {
    if (queue_.empty()) {
      --in_flight_;
      return;
    }
    // The slot passes straight to the next operation.
    boost::asio::post(io_, [start = std::move(queue_.front())] { start(); });
    queue_.pop_front();
  }

  // Forgets queued operations (they never start).
  void Clear() { queue_.clear(); }

  int in_flight() const { return in_flight_; }
  size_t queued() const { return queue_.size(); }

 private:
  boost::asio::io_context& io_;
  int limit_;
  int in_flight_ = 0;
  std::deque<std::function<void()>> queue_;
};

}  // namespace rackchaos::ssh
