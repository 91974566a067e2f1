// The far checkpoint copy and its destination (cluster/sim_region_link.cpp): a copy in flight when the
// region it copies to goes down (or that region's checkpoint store fails) is lost, the link's share is
// freed, and the copy of the newest acknowledged checkpoint starts again once the destination is back;
// other traffic on the link (cluster.region_link_background_percent) slows every copy.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "tests/cluster/regions_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr FaultId kFar = 61, kEast = 62, kCache = 63;

enum class FarFault { kNone, kOutage, kStoreFail };

// `jobs` copying jobs in east; west (where east's copies go) fails by `far` from `far_at` to
// `far_back`; east goes down at `east_at` and the jobs are requeued a minute later. Returns the work
// each redoes at that requeue.
struct Run {
  int jobs = 1;
  FarFault far = FarFault::kNone;
  Duration far_at{}, far_back{}, east_at{};
  std::optional<Duration> cache_lost{};  // the first job's tray loses its local store (its copy with it)
  int background_percent = 0;
};

struct Outcome {
  std::vector<Duration> lost;
  size_t far_copies_lost = 0;
};

Outcome LostAtOutage(const Run& run) {
  SimOptions o;
  o.region_link_gbytes_per_s = 50;
  o.region_link_background = run.background_percent / 100.0;
  Regions h(o);
  std::vector<JobId> ids;
  for (int i = 0; i < run.jobs; ++i) ids.push_back(h.sim.AddJob(Copying()).value());
  h.sim.Start();
  for (JobId id : ids) REQUIRE(h.RacksOf(id).front() <= "r02");
  auto set_far = [&](bool failed) {
    if (run.far == FarFault::kOutage) CHECK(h.sim.SetRegionDown(h.Id("west"), failed, kFar).ok());
    const ComponentId store = h.Id("west.ckptstore");
    if (run.far == FarFault::kStoreFail)
      CHECK((failed ? h.sim.SetStoreRate(store, 0, kFar) : h.sim.Release(Held::kStoreRate, {store, -1}, kFar)).ok());
  };
  if (run.far != FarFault::kNone) {
    h.At(Time{} + run.far_at, [&] { set_far(true); });
    h.At(Time{} + run.far_back, [&] { set_far(false); });
  }
  if (run.cache_lost)
    h.At(Time{} + *run.cache_lost,
         [&] { CHECK(h.sim.SetStorageRead(h.sim.JobTrays(ids.front()).front(), 0, kCache).ok()); });
  h.At(Time{} + run.east_at, [&] { CHECK(h.sim.SetRegionDown(h.Id("east"), true, kEast).ok()); });
  h.At(Time{} + run.east_at + kMinute, [&] {
    for (JobId id : ids) CHECK(h.sim.RequeueJob(id, "east down").ok());
  });
  h.clock.RunUntil(Time{} + run.east_at + Duration::Minutes(2));
  Outcome out;
  for (JobId id : ids)
    for (const JobChanged& c : h.Changes(id))
      if (c.state == JobState::kQueued) out.lost.push_back(c.lost_work);
  for (const auto& [at, p] : h.Physics("far_copy_lost")) {
    CHECK(p.component == h.Id("west.ckptstore"));
    CHECK(p.cause == kFar);
    CHECK(at == Time{} + run.far_at);
    ++out.far_copies_lost;
  }
  return out;
}

Duration M(int minutes) { return Duration::Minutes(minutes); }

// Acks at 20m30s, 40m30s, 60m30s. The 20m copy is done at 36m30s; the 40m one, in flight from 40m30s,
// is lost when west fails at 50m. West is back at 52m: the 40m checkpoint is copied again (done at
// 68m), so at 65m the far region still has only the 20m one: 45 minutes redone, not 25.
TEST_CASE("sim.region_far_copy: a copy in flight is lost when the far region goes down") {
  const Outcome r = LostAtOutage({.far = FarFault::kOutage, .far_at = M(50), .far_back = M(52), .east_at = M(65)});
  CHECK(r.lost == std::vector<Duration>{M(45)});
  CHECK(r.far_copies_lost == 1);
}

TEST_CASE("sim.region_far_copy: a copy in flight is lost when the far region's checkpoint store fails") {
  const Outcome r = LostAtOutage({.far = FarFault::kStoreFail, .far_at = M(50), .far_back = M(52), .east_at = M(65)});
  CHECK(r.lost == std::vector<Duration>{M(45)});
  CHECK(r.far_copies_lost == 1);
}

// The 40m copy is done at 56m30s, before west fails at 57m: the far region keeps it.
TEST_CASE("sim.region_far_copy: a copy done before the far region fails is kept") {
  const Outcome r = LostAtOutage({.far = FarFault::kOutage, .far_at = M(57), .far_back = M(59), .east_at = M(65)});
  CHECK(r.lost == std::vector<Duration>{M(25)});
  CHECK(r.far_copies_lost == 0);
}

// While west is down nothing is copied to it: the 40m and 60m checkpoints wait. West is back at 75m
// and the 60m checkpoint (the newest) is copied from then, done at 91m.
TEST_CASE("sim.region_far_copy: no copy starts while the far region is down and the newest goes once it is back") {
  const Run base{.far = FarFault::kOutage, .far_at = M(38), .far_back = M(75)};
  Run before = base, after = base;
  before.east_at = M(90);
  after.east_at = M(92);
  // 36m30s < 38m: the 20m copy was done; the 40m copy never started.
  CHECK(LostAtOutage(before).lost == std::vector<Duration>{M(70)});
  CHECK(LostAtOutage(before).far_copies_lost == 0);
  CHECK(LostAtOutage(after).lost == std::vector<Duration>{M(32)});
}

// Two copies share the link at 25 GB/s each from 20m30s (done at 52m30s had west stayed up). West fails
// at 30m (both lost) and is back at 35m: both start again from 35m on the link alone, the lost ones
// gone from it, and are done at 67m; had the lost copies kept their shares, not before 70m.
TEST_CASE("sim.region_far_copy: lost copies free the link for the copies after them") {
  const Run base{.jobs = 2, .far = FarFault::kOutage, .far_at = M(30), .far_back = M(35)};
  Run early = base, late = base;
  early.east_at = M(60);  // before the resumed copies are done: nothing in the far region
  late.east_at = M(68);   // after: the 20m checkpoints
  const Outcome e = LostAtOutage(early), l = LostAtOutage(late);
  CHECK(e.lost == std::vector<Duration>{M(60), M(60)});
  CHECK(e.far_copies_lost == 2);
  CHECK(l.lost == std::vector<Duration>{M(48), M(48)});
}

// The first job's tray loses its local store at 30m, its copy with it: the second job's copy has the
// link alone until the first copies its 40m checkpoint from 40m30s. Moved by 30m: 570 s x 25 GB/s =
// 14.25 TB; by 40m30s another 31.5 TB; the last 2.25 TB at 25 GB/s: done at 42m (not 52m30s), so at
// 45m the far region has its 20m checkpoint.
TEST_CASE("sim.region_far_copy: a copy lost at its source speeds up the copy beside it") {
  const Outcome r = LostAtOutage({.jobs = 2, .east_at = M(45), .cache_lost = M(30)});
  REQUIRE(r.lost.size() == 2);
  CHECK(r.lost[1] == M(25));
}

// Other traffic takes 60% of the 50 GB/s link: a copy alone moves at 20 GB/s and takes 40 minutes.
// The 20m copy is done at 60m30s: at 60m the far region has nothing, at 61m the 20m checkpoint.
TEST_CASE("sim.region_far_copy: background traffic on the region link slows the copies") {
  CHECK(LostAtOutage({.east_at = M(60), .background_percent = 60}).lost == std::vector<Duration>{M(60)});
  CHECK(LostAtOutage({.east_at = M(61), .background_percent = 60}).lost == std::vector<Duration>{M(41)});
  // Without it the 20m copy is done at 36m30s and the 40m one at 56m30s.
  CHECK(LostAtOutage({.east_at = M(60)}).lost == std::vector<Duration>{M(20)});
}

}  // namespace
}  // namespace rackchaos::cluster
