// The region link on its own (cluster/sim_region_link.h): copies in flight share it equally, with the
// background traffic's share off the top, and land when their bytes run out. Times worked out by hand.
#include <doctest/doctest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "cluster/sim_region_link.h"
#include "core/clock.h"

namespace rackchaos::cluster {
namespace {

Time Secs(double seconds) { return Time{} + Duration::Micros(static_cast<int64_t>(seconds * 1e6)); }

struct LinkRig {
  explicit LinkRig(double gbytes_per_s, double background = 0, size_t regions = 2)
      : links(clock, regions, gbytes_per_s, background, [this](JobId j) { landed.push_back({j, clock.Now()}); }) {}
  VirtualClock clock;
  std::vector<std::pair<JobId, Time>> landed;
  RegionLinks links;
};

using Landed = std::vector<std::pair<JobId, Time>>;

TEST_CASE("region link: copies share it equally and land as their bytes run out") {
  LinkRig l(1.0);  // 1 GB/s
  l.links.Start(0, 7, 10);                               // alone: 10 GB at 1 GB/s
  l.clock.CallAt(Secs(5), [&] { l.links.Start(0, 8, 10); });  // 7 has 5 GB left; each now moves 0.5 GB/s
  l.clock.RunUntil(Secs(100));
  // 7: 5 GB at 0.5 GB/s, lands at 15 s; 8 has moved 5 GB by then and moves its last 5 GB alone: 20 s.
  CHECK(l.landed == Landed{{7, Secs(15)}, {8, Secs(20)}});
}

TEST_CASE("region link: each region's link is its own") {
  LinkRig l(1.0);
  l.links.Start(0, 1, 10);
  l.links.Start(1, 2, 10);
  l.clock.RunUntil(Secs(100));
  CHECK(l.landed == Landed{{1, Secs(10)}, {2, Secs(10)}});
}

TEST_CASE("region link: a cancelled copy gives its share back and never lands") {
  LinkRig l(1.0);
  l.links.Start(0, 1, 10);
  l.links.Start(0, 2, 10);
  l.clock.CallAt(Secs(4), [&] { l.links.Cancel(2); });  // 1 has moved 2 GB; 8 GB left alone
  l.clock.CallAt(Secs(5), [&] { l.links.Cancel(99); });  // not on any link: nothing happens
  l.clock.RunUntil(Secs(100));
  CHECK(l.landed == Landed{{1, Secs(12)}});
}

TEST_CASE("region link: background traffic takes its share off the top, at most 99%") {
  LinkRig half(1.0, 0.5);
  half.links.Start(0, 1, 10);
  half.clock.RunUntil(Secs(1000));
  CHECK(half.landed == Landed{{1, Secs(20)}});
  LinkRig all(1.0, 1.5);  // capped: the copies keep 1% of the link
  all.links.Start(0, 1, 10);
  all.clock.RunUntil(Secs(2000));
  REQUIRE(all.landed.size() == 1);
  CHECK(std::llabs(all.landed[0].second.us - Secs(1000).us) <= 1);
}

}  // namespace
}  // namespace rackchaos::cluster
