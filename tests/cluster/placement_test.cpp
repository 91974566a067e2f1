// Placement as a pure function (cluster/placement.h): no simulator, clock or random draw. The expected
// trays are worked out by hand from the rule in the header; the last cases check that PlaceAtStart, what
// `rackchaos blast` and `rackchaos spof` use, gives what the simulator places when a run starts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/placement.h"
#include "tests/cluster/regions_harness.h"
#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

// "r01.tray03" ... for a list of trays.
std::vector<std::string> TrayNamesOf(const Topology& t, const std::vector<ComponentId>& trays) {
  std::vector<std::string> out;
  for (ComponentId tray : trays) out.push_back(t.at(tray).name);
  return out;
}

std::vector<std::string> TrayRange(const std::string& rack, int first, int last) {
  std::vector<std::string> out;
  for (int k = first; k <= last; ++k) out.push_back(rack + ".tray" + (k < 10 ? "0" : "") + std::to_string(k));
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A grouped job: tp*pp*dp GPUs, blocks of tp*ep consecutive ranks.
JobConfig GroupedJob(int tp, int pp, int dp, int ep) {
  JobConfig cfg = Job(tp * pp * dp);
  cfg.grouped = true;
  cfg.tp = tp;
  cfg.pp = pp;
  cfg.dp = dp;
  cfg.ep = ep;
  return cfg;
}

TEST_CASE("placement: regular trays first, then hot spares; a job that does not fit takes nothing") {
  const Topology t = BuildTopology(1, 2);  // tray17 and tray18 are hot spares
  const auto at = PlaceAtStart(t, {Job(64), Job(8), Job(4), Job(-1)}, 0, {});
  REQUIRE(at.size() == 4);
  CHECK(TrayNamesOf(t, at[0].trays.ids()) == TrayRange("r01", 1, 16));
  CHECK(at[0].gpus == 64);
  CHECK(TrayNamesOf(t, at[1].trays.ids()) == TrayRange("r01", 17, 18));
  CHECK(at[2].trays.empty());  // every tray is taken: it stays queued
  CHECK(at[3].trays.empty());  // CheckJob rejects it: the simulator would not have added it
  CHECK(!CheckJob(Job(-1), t).ok());
  CHECK(CheckJob(Job(73), t).message().find("the cluster has 72") != std::string::npos);
}

TEST_CASE("placement: a grouped job whose blocks the first free trays would split fills domain by domain") {
  const Topology t = BuildTopology(2, 0);
  // A takes r01.tray01-12. B's blocks are tp*ep = 16 GPUs (4 trays): the first free trays, r01.tray13-18
  // and r02.tray01-02, would put its second block across the two racks, so it takes whole blocks per
  // domain: one block (4 of the 6 free trays) in r01, the other in r02.
  const auto at = PlaceAtStart(t, {Job(48), GroupedJob(8, 1, 4, 2)}, 0, {});
  CHECK(TrayNamesOf(t, at[1].trays.ids()) == Concat(TrayRange("r01", 13, 16), TrayRange("r02", 1, 4)));
  // Its DP groups (ranks t, t+8, t+16, t+24) cross the two domains; its PP groups are one stage.
  CHECK(at[1].kinds[kDp].crosses());
  CHECK(at[1].kinds[kDp].hop_domains == std::vector<int>{0, 1});
  CHECK(!at[1].kinds[kPp].crosses());
  // Without the split (A takes 8 trays) the first free trays are taken as they are.
  const auto plain = PlaceAtStart(t, {Job(32), GroupedJob(8, 1, 4, 2)}, 0, {});
  CHECK(TrayNamesOf(t, plain[1].trays.ids()) == TrayRange("r01", 9, 16));
  CHECK(!plain[1].kinds[kDp].crosses());
  CHECK(plain[1].kinds[kDp].nvlink_domains == std::vector<int>{0});
}

TEST_CASE("placement: spare racks are only for a job requeued from a lost NVLink domain, and then first") {
  const Topology t = BuildTopology(3, 0);
  TrayPool pool(t, 1, {});  // r03 is the spare rack
  CHECK(pool.free_count() == 54);
  CHECK(pool.free_spare_rack() == 18);
  CHECK(pool.use(t.TraySlot(t.Find("r03.tray01").value())) == TrayUse::kSpareRack);
  for (size_t k = 0; k < 18; ++k) pool.SetFree(k, false);  // r01 is taken
  CHECK(pool.free_count() == 36);
  const JobConfig job = Job(72);
  const auto regular = ChooseTrays(t, pool, PlaceAsk{job, -1, false, false}, {});
  REQUIRE(regular.has_value());
  CHECK(TrayNamesOf(t, regular->trays) == TrayRange("r02", 1, 18));
  CHECK(regular->regular == 18);
  const auto lost = ChooseTrays(t, pool, PlaceAsk{job, -1, true, false}, {});
  REQUIRE(lost.has_value());
  CHECK(TrayNamesOf(t, lost->trays) == TrayRange("r03", 1, 18));
  CHECK(lost->regular == 0);
  for (size_t k = 18; k < 36; ++k) pool.SetFree(k, false);  // r02 too: only the spare rack is left
  CHECK(pool.free_count() == 18);
  CHECK(!ChooseTrays(t, pool, PlaceAsk{job, -1, false, false}, {}).has_value());
  CHECK(ChooseTrays(t, pool, PlaceAsk{job, -1, true, false}, {}).has_value());
}

TEST_CASE("placement: an elastic job shrinks to the whole trays free only when it may") {
  const Topology t = BuildTopology(1, 0);
  TrayPool pool(t, 0, {});
  for (size_t k = 0; k < 8; ++k) pool.SetFree(k, false);  // 10 trays (40 GPUs) left
  JobConfig job = Job(64);
  job.min_gpus = 32;
  CHECK(!ChooseTrays(t, pool, PlaceAsk{job, -1, false, false}, {}).has_value());
  const auto shrunk = ChooseTrays(t, pool, PlaceAsk{job, -1, false, true}, {});
  REQUIRE(shrunk.has_value());
  CHECK(shrunk->gpus == 40);
  CHECK(TrayNamesOf(t, shrunk->trays) == TrayRange("r01", 9, 18));
  job.min_gpus = 48;  // more than is free
  CHECK(!ChooseTrays(t, pool, PlaceAsk{job, -1, false, true}, {}).has_value());
}

TEST_CASE("placement: region windows put a job in its own region first and skip regions that are down") {
  const Topology t = TwoRegions();  // east r01-r02 (tray slots 0-35), west r03-r04 (36-71)
  using Windows = std::vector<std::pair<size_t, size_t>>;
  CHECK(RegionWindows(t, -1, {0, 0}) == Windows{{0, 36}, {36, 72}});
  CHECK(RegionWindows(t, 1, {0, 0}) == Windows{{36, 72}, {0, 36}});
  CHECK(RegionWindows(t, 1, {0, 1}) == Windows{{0, 36}});
  CHECK(RegionWindows(BuildTopology(2, 0), -1, {}) == Windows{{0, 36}});
  // A job that fits in no one region waits, though the cluster has the trays.
  JobConfig west = Job(72);
  west.region = 1;
  const auto at = PlaceAtStart(t, {Job(80), west, Job(216)}, 0, {});
  CHECK(TrayNamesOf(t, at[0].trays.ids()) == Concat(TrayRange("r01", 1, 18), TrayRange("r02", 1, 2)));
  CHECK(TrayNamesOf(t, at[1].trays.ids()) == TrayRange("r03", 1, 18));
  CHECK(at[2].trays.empty());
}

TEST_CASE("placement: CrossingOf names the pods whose spines a job's traffic crosses") {
  const Topology t = BuildTopology(6, 0);  // 4 racks per leaf group: r01-r04, r05-r06; one pod
  const auto at = PlaceAtStart(t, {Job(288), Job(72)}, 0, {});
  CHECK(CrossingOf(t, Job(288), at[0]).dp.pods.empty());  // r01-r04: one leaf group
  CHECK(TrayNamesOf(t, at[1].trays.ids()) == TrayRange("r05", 1, 18));
  CHECK(CrossingOf(t, Job(72), at[1]).dp.pods.empty());  // r05 alone
  const auto big = PlaceAtStart(t, {Job(360)}, 0, {});  // r01-r05: spans the two leaf groups
  const SpineCrossing spans = CrossingOf(t, Job(360), big[0]);
  CHECK(spans.dp.pods == std::vector<int>{0});
  CHECK(!spans.dp.spans_pods);
  CHECK(spans.pp.pods.empty());  // an ungrouped job's traffic is all dp
  CHECK(CrossingOf(t, Job(8), Placement{}).dp.pods.empty());
}

// The placements a run starts with, from the simulator itself.
std::vector<std::vector<ComponentId>> SimulatorTrays(const Topology& t, const std::vector<JobConfig>& jobs,
                                                      SimOptions options) {
  Harness h(t, 1, options);
  std::vector<JobId> ids;
  for (const JobConfig& j : jobs) ids.push_back(h.sim.AddJob(j).value());
  h.sim.Start();
  std::vector<std::vector<ComponentId>> out;
  for (JobId id : ids) out.push_back(h.sim.JobTrays(id));
  return out;
}

TEST_CASE("placement: PlaceAtStart gives the trays and spine crossings the simulator starts with") {
  struct Case {
    const char* name;
    Topology topo;
    std::vector<JobConfig> jobs;
    SimOptions options;
  };
  JobConfig west = Job(144);
  west.region = 1;
  SimOptions spare_racks;
  spare_racks.spare_racks = 2;
  spare_racks.region_spare_racks = {1, 1};
  SimOptions one_spare_rack;
  one_spare_rack.spare_racks = 1;
  std::vector<Case> cases;
  cases.push_back({"hot spares", BuildTopology(2, 2), {Job(64), Job(72), Job(8), Job(12)}, {}});
  cases.push_back({"grouped", BuildTopology(3, 0), {Job(48), GroupedJob(8, 2, 4, 2), GroupedJob(4, 1, 8, 1)}, {}});
  cases.push_back({"nvl36x2", BuildTopology(4, 0, false, "gb200-nvl36x2"), {Job(40), GroupedJob(4, 1, 10, 2)}, {}});
  cases.push_back({"spare rack", BuildTopology(3, 0), {Job(72), Job(72), Job(8)}, one_spare_rack});
  cases.push_back({"regions", TwoRegions(3, 3), {west, Job(200), Job(72)}, spare_racks});
  cases.push_back({"spans leaf groups", BuildTopology(6, 0), {Job(36), Job(360), GroupedJob(4, 4, 18, 1)}, {}});
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto pure = PlaceAtStart(c.topo, c.jobs, c.options.spare_racks, c.options.region_spare_racks);
    const auto sim = SimulatorTrays(c.topo, c.jobs, c.options);
    REQUIRE(pure.size() == sim.size());
    Harness h(c.topo, 1, c.options);
    for (const JobConfig& j : c.jobs) h.sim.AddJob(j).value();
    h.sim.Start();
    for (size_t j = 0; j < pure.size(); ++j) {
      CAPTURE(j);
      CHECK(pure[j].trays.ids() == sim[j]);
      const SpineCrossing mine = CrossingOf(c.topo, c.jobs[j], pure[j]);
      const SpineCrossing theirs = h.sim.JobSpineCrossing(static_cast<JobId>(j));
      CHECK(mine.dp.pods == theirs.dp.pods);
      CHECK(mine.dp.spans_pods == theirs.dp.spans_pods);
      CHECK(mine.pp.pods == theirs.pp.pods);
    }
    size_t placed = 0;
    for (const Placement& p : pure) placed += !p.trays.empty();
    CHECK(placed >= 2);  // each case places more than one job, so the later ones see the earlier ones' trays
  }
}

TEST_CASE("TrayPool::NextFree finds the first free slot of a use as a slot-by-slot scan does") {
  // 300 racks: 5,400 tray slots, past one summary word (4,096 slots); hot spares and spare racks too.
  const Topology t = BuildTopology(300, 2);
  TrayPool pool(t, 10, {});
  const size_t n = t.trays().size();
  REQUIRE(n > 4096);
  auto naive = [&](TrayUse u, size_t k, size_t hi) {
    for (; k < std::min(hi, n); ++k)
      if (pool.free(k) && pool.use(k) == u) return k;
    return std::min(hi, n);
  };
  uint64_t x = 12345;  // a fixed stream of slots to take and give back: long taken runs, a few free
  auto next = [&x] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int round = 0; round < 4; ++round) {
    for (size_t k = 0; k < n; ++k) pool.SetFree(k, next() % 100 < static_cast<uint64_t>(round == 3 ? 0 : 3 * round + 1));
    for (TrayUse u : {TrayUse::kRegular, TrayUse::kHotSpare, TrayUse::kSpareRack}) {
      CAPTURE(round);
      CAPTURE(static_cast<int>(u));
      for (size_t lo = 0; lo <= n + 1; lo += 1 + next() % 7) {
        CAPTURE(lo);
        REQUIRE(pool.NextFree(u, lo, SIZE_MAX) == naive(u, lo, SIZE_MAX));
        const size_t hi = lo + next() % 5000;
        CAPTURE(hi);
        REQUIRE(pool.NextFree(u, lo, hi) == naive(u, lo, hi));
        std::vector<size_t> visited, expected;  // ForEachFree: the same slots, in order, up to a stop
        const size_t most = next() % 40;
        pool.ForEachFree(u, lo, hi, [&](size_t k) {
          visited.push_back(k);
          return visited.size() < most;
        });
        for (size_t k = naive(u, lo, hi); k < std::min(hi, n) && expected.size() < std::max<size_t>(most, 1);
             k = naive(u, k + 1, hi))
          expected.push_back(k);
        REQUIRE(visited == expected);
      }
    }
  }
  CHECK(pool.NextFree(TrayUse::kRegular, 0, SIZE_MAX) == n);  // the last round took every tray
}

}  // namespace
}  // namespace rackchaos::cluster
