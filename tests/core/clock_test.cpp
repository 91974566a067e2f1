#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

TEST_CASE("clock: cancelling a timer that ran, one cancelled before or an unknown id changes nothing") {
  VirtualClock clock;
  int ran = 0;
  TimerId first = clock.CallAt(Duration::Seconds(1), [&] { ++ran; });
  TimerId second = clock.CallAt(Duration::Seconds(2), [&] { ran += 10; });
  clock.CallAt(Duration::Seconds(3), [&] { ran += 100; });
  CHECK(clock.pending() == 3);
  clock.RunUntil(Duration::Seconds(1));
  clock.Cancel(first);  // already ran
  clock.Cancel(second);
  clock.Cancel(second);  // twice
  clock.Cancel(12345);   // never issued
  CHECK(clock.pending() == 1);
  clock.RunUntil(Duration::Seconds(5));
  CHECK(ran == 101);
  CHECK(clock.pending() == 0);
}

TEST_CASE("clock: many timers run in (time, scheduling) order without the cancelled ones") {
  VirtualClock clock;
  std::vector<std::pair<int64_t, int>> expected;  // (at in s, index)
  std::vector<int> order;
  std::vector<TimerId> ids;
  uint64_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t at = static_cast<int64_t>(x >> 58);  // 0..63 s: many share an instant
    ids.push_back(clock.CallAt(Duration::Seconds(at), [&order, i] { order.push_back(i); }));
    expected.push_back({at, i});
  }
  for (int i = 0; i < 2000; i += 7) clock.Cancel(ids[static_cast<size_t>(i)]);
  std::erase_if(expected, [](const auto& e) { return e.second % 7 == 0; });
  std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  clock.RunUntil(Duration::Seconds(100));
  REQUIRE(order.size() == expected.size());
  for (size_t k = 0; k < order.size(); ++k) CHECK(order[k] == expected[k].second);
}

TEST_CASE("clock: timers scheduled while others run follow a sorted reference of (time, scheduling order)") {
  // Timer i runs, then schedules timer `count` at now + Delay(count), until 3,000 were scheduled: pushes
  // and pops interleave as in a run. The reference keeps the same timers in a set sorted by (time, index).
  auto delay = [](uint64_t i) { return static_cast<int64_t>(((i + 1) * 0x9e3779b97f4a7c15ULL) >> 59); };  // 0..31 s
  constexpr int kTotal = 3000;
  VirtualClock clock;
  std::vector<int> order;
  int count = 0;
  std::function<void(int)> run = [&](int i) {
    order.push_back(i);
    if (count >= kTotal) return;
    const int child = count++;
    clock.CallAfter(Duration::Seconds(delay(static_cast<uint64_t>(child))), [&run, child] { run(child); });
  };
  for (; count < 500; ++count) {
    const int i = count;
    clock.CallAt(Duration::Seconds(delay(static_cast<uint64_t>(i))), [&run, i] { run(i); });
  }
  clock.RunUntil(Time::Max());

  std::set<std::pair<int64_t, int>> ref;  // (at in s, index)
  for (int i = 0; i < 500; ++i) ref.insert({delay(static_cast<uint64_t>(i)), i});
  std::vector<int> want;
  for (int scheduled = 500; !ref.empty();) {
    const auto [at, i] = *ref.begin();
    ref.erase(ref.begin());
    want.push_back(i);
    if (scheduled < kTotal) {
      ref.insert({at + delay(static_cast<uint64_t>(scheduled)), scheduled});
      ++scheduled;
    }
  }
  REQUIRE(order.size() == want.size());
  CHECK(order == want);
}
