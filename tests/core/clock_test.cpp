#include <doctest/doctest.h>

#include <string>

#include "core/clock.h"

using namespace rackchaos;

TEST_CASE("virtual clock jumps to the next timer and keeps same-time order") {
  VirtualClock clock;
  std::string order;
  clock.CallAt(Duration::Seconds(5), [&] { order += "b"; });
  clock.CallAt(Duration::Seconds(1), [&] { order += "a"; });
  clock.CallAt(Duration::Seconds(5), [&] { order += "c"; });
  CHECK(clock.RunUntil(Duration::Seconds(10)) == 3);
  CHECK(order == "abc");
  CHECK(clock.Now() == Duration::Seconds(10));
}

TEST_CASE("cancelled timers do not run, and timers may schedule timers") {
  VirtualClock clock;
  int ran = 0;
  TimerId id = clock.CallAt(Duration::Seconds(2), [&] { ran += 100; });
  clock.CallAt(Duration::Seconds(1), [&] {
    ++ran;
    clock.CallAfter(Duration::Seconds(1), [&] { ran += 10; });
  });
  clock.Cancel(id);
  clock.RunUntil(Duration::Seconds(3));
  CHECK(ran == 11);
  CHECK(clock.pending() == 0);
}

TEST_CASE("RunUntil stops at the limit and leaves later timers") {
  VirtualClock clock;
  int ran = 0;
  clock.CallAt(Duration::Seconds(20), [&] { ++ran; });
  clock.RunUntil(Duration::Seconds(10));
  CHECK(ran == 0);
  CHECK(clock.Now() == Duration::Seconds(10));
  clock.RunUntil(Duration::Seconds(30));
  CHECK(ran == 1);
}

TEST_CASE("a timer in the past runs now, not before now") {
  VirtualClock clock;
  clock.RunUntil(Duration::Seconds(10));
  Time seen{};
  clock.CallAt(Duration::Seconds(1), [&] { seen = clock.Now(); });
  clock.RunUntil(Duration::Seconds(11));
  CHECK(seen == Duration::Seconds(10));
}
