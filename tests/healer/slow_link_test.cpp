// The slow_link detector: the robust outlier test on the ranks' send times (StepReport::comm_s), with
// the absolute floor min_excess, on the rig's time scale and on the simulator's summarized reports.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "healer/detector.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using cluster::StepReport;
using testing::DetectorHarness;
using testing::Min;
using testing::Sec;
using testing::Topo;

Policy RigPolicy() {
  auto p = LoadPolicy(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/rig/rig-policy.yaml");
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return *p;
}

// The rig's job: 4 ranks, one per tray, reporting every second. Healthy sends take ~0.1 ms, and on a
// busy machine a rank's median send is now and then much longer (up to 0.19 s measured at load 50 on
// 2 cores; up to 0.15 s in 30% of reports here). A rank behind the rig's 1% link sends in ~0.55 s.
struct RigJob {
  DetectorHarness h;
  std::vector<ComponentId> gpus;
  Rng rng{20261130};

  explicit RigJob(Policy p, const char* detector = "slow_link") : h(detector, std::move(p)) {
    for (const char* t : {"r01.tray01.gpu0", "r01.tray02.gpu0", "r01.tray03.gpu0", "r01.tray04.gpu0"})
      gpus.push_back(testing::Id(t));
  }
  // Report at second `s`; rank `slow` (if any) sends in `slow_s`.
  void Report(int64_t s, size_t slow = SIZE_MAX, double slow_s = 0) {
    StepReport r{7, 0.2, gpus, std::vector<float>(4, 0.012f)};
    for (size_t i = 0; i < 4; ++i) {
      double send = 0.0001 * (1 + rng.Uniform());
      if (rng.Uniform() < 0.3) send = rng.Uniform(0, 0.15);  // a jitter spike
      r.comm_s.push_back(static_cast<float>(i == slow ? slow_s : send));
    }
    h.Feed(Sec(s), r);
  }
};

TEST_CASE("healer.slow_link: on the rig a rank sending 550 ms per step is found after the 3 s window, once") {
  RigJob job(RigPolicy());
  for (int64_t s = 1; s < 10; ++s) job.Report(s);
  for (int64_t s = 10; s <= 30; ++s) job.Report(s, 1, 0.55);
  REQUIRE(job.h.raised().size() == 1);
  const auto& [at, sym] = job.h.raised()[0];
  CHECK(at == Sec(13));  // first slow report + window
  CHECK(sym.cls == SymptomClass::kSlowLink);
  CHECK(sym.detector == "slow_link");
  CHECK(sym.component == job.gpus[1]);
  CHECK(sym.job == 7);
  CHECK(sym.text == "rank's sends slower than the median for 3s");
}

TEST_CASE("healer.slow_link: the rig's send jitter never fires over 2,000 reports - it would without min_excess") {
  RigJob job(RigPolicy());
  for (int64_t s = 1; s <= 2000; ++s) job.Report(s);
  CHECK(job.h.raised().empty());

  Policy no_floor = RigPolicy();
  no_floor.slow_link.min_excess = Duration{};
  RigJob bare(no_floor);
  for (int64_t s = 1; s <= 2000; ++s) bare.Report(s);
  CHECK_FALSE(bare.h.raised().empty());  // the floor is what keeps jitter out
}

TEST_CASE("healer.slow_link: straggler ignores send times, slow_link ignores reports without them") {
  RigJob straggler(RigPolicy(), "straggler");
  for (int64_t s = 1; s <= 20; ++s) straggler.Report(s, 2, 0.55);
  CHECK(straggler.h.raised().empty());

  DetectorHarness h("slow_link", RigPolicy());
  std::vector<ComponentId> gpus(Topo().gpus().begin(), Topo().gpus().begin() + 4);
  for (int64_t s = 1; s <= 20; ++s) h.Feed(Sec(s), StepReport{7, 0.2, gpus, {0.01f, 0.01f, 0.5f, 0.01f}});
  CHECK(h.raised().empty());
}

TEST_CASE("healer.slow_link: summarized reports with the default policy - a rank sending 4x slower, after 5 min") {
  DetectorHarness h("slow_link");
  const ComponentId rank = testing::Id("r01.tray02.gpu1");
  auto report = [&](int minute, float comm) {
    StepReport r{7, 14.5, {rank}, {8.5f}, 7, 8.5, 0.06};
    r.comm_s = {comm};
    r.bulk_comm_median_s = 1.5;
    r.bulk_comm_mad_s = 0.01;
    h.Feed(Min(minute), r);
  };
  for (int n = 1; n <= 4; ++n) report(n, 2.5f);  // 67% slower: under min_slowdown 100%
  CHECK(h.raised().empty());
  for (int n = 5; n <= 15; ++n) report(n, 6.0f);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Min(10));
  CHECK(h.raised()[0].symptom.component == rank);
}

}  // namespace
}  // namespace rackchaos::healer

namespace rackchaos::healer {
namespace {

TEST_CASE("healer.slow_link: a few ranks - each judged against the others, so one slow rank of 4 stands out") {
  // The rig under a 1% link: the degraded rank's sends, its peer's (slowed by late ACKs) and two healthy.
  const std::vector<float> sends = {0.08f, 0.55f, 0.067f, 0.0001f};
  CHECK(LeaveOneOutOutliers(sends, 4, 1.0, 0.2) == std::vector<size_t>{1});
  CHECK(RobustOutliers(sends, 4, 1.0, {}, 0.2).empty());  // against all four, its own value inflates the MAD
  CHECK(LeaveOneOutOutliers({0.1f, 0.15f, 0.12f, 0.0001f}, 4, 1.0, 0.2).empty());  // a busy machine
  CHECK(LeaveOneOutOutliers({0.5f, 0.6f}, 4, 1.0, 0.2).empty());                    // two ranks: no majority
}

}  // namespace
}  // namespace rackchaos::healer
