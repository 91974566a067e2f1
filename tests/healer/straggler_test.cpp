// The straggler detector: the robust outlier test on full and summarized step reports, and the
// streak over a window, driven one report at a time on a virtual clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "healer/detector.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using cluster::StepReport;
using testing::DetectorHarness;
using testing::Id;
using testing::Min;
using testing::Topo;


// Compute times of `ranks` ranks around 1 s with `jitter` relative Gaussian noise; `slow` (if any) is
// slower by `slowdown`.
std::vector<float> StepTimes(Rng& rng, size_t ranks, double jitter, size_t slow = SIZE_MAX, double slowdown = 0) {
  std::vector<float> v(ranks);
  for (size_t i = 0; i < ranks; ++i) {
    double x = rng.Normal(1.0, jitter);
    if (i == slow) x *= 1 + slowdown;
    v[i] = static_cast<float>(x);
  }
  return v;
}

TEST_CASE("healer.straggler: one rank 10% slower among 1,000 with 1% jitter is the only outlier, every time") {
  Rng rng(20261130);
  const Policy p = testing::Shipped("default");
  for (int report = 0; report < 100; ++report) {
    size_t slow = static_cast<size_t>(rng.Below(1000));
    auto out = RobustOutliers(StepTimes(rng, 1000, 0.01, slow, 0.10), p.straggler_mad_threshold,
                              p.straggler_min_slowdown);
    INFO("report ", report, " slow rank ", slow);
    CHECK(out == std::vector<size_t>{slow});
  }
}

TEST_CASE("healer.straggler: 1% jitter alone flags no rank in 200 reports of 1,000 ranks") {
  Rng rng(7);
  const Policy p = testing::Shipped("default");
  size_t flagged = 0;
  for (int report = 0; report < 200; ++report)
    flagged += RobustOutliers(StepTimes(rng, 1000, 0.01), p.straggler_mad_threshold, p.straggler_min_slowdown).size();
  CHECK(flagged == 0);
}

TEST_CASE("healer.straggler: small, equal, fast and barely slow ranks") {
  CHECK(RobustOutliers({}, 6, 0.05).empty());
  CHECK(RobustOutliers({1.0f, 5.0f}, 6, 0.05).empty());  // two ranks have no majority to compare with
  CHECK(RobustOutliers({1.0f, 1.0f, 1.0f, 1.0f}, 6, 0.05).empty());
  // Identical ranks make the MAD zero: an outlier is still found and nothing divides by zero.
  CHECK(RobustOutliers({1.0f, 1.0f, 1.0f, 1.0f, 1.2f}, 6, 0.05) == std::vector<size_t>{4});
  // 4% slower is a clear statistical outlier but below min_slowdown 5%.
  CHECK(RobustOutliers({1.0f, 1.0f, 1.0f, 1.0f, 1.04f}, 6, 0.05).empty());
  // A fast rank is never a straggler.
  CHECK(RobustOutliers({1.0f, 1.0f, 1.0f, 1.0f, 0.5f}, 6, 0.05).empty());
  // Two slow ranks of nine are both found.
  CHECK(RobustOutliers({1, 1, 1.3f, 1, 1, 1, 1.01f, 1.25f, 0.99f}, 6, 0.05) == std::vector<size_t>{2, 7});
}

// A summarized report of `full`: the ranks at or above `list_from` listed, the rest as median and MAD.
struct Summarized {
  std::vector<size_t> listed;
  std::vector<float> compute_s;
  RankSummary bulk;
};
Summarized Summarize(const std::vector<float>& full, float list_from) {
  Summarized s;
  std::vector<float> rest;
  for (size_t i = 0; i < full.size(); ++i) {
    if (full[i] >= list_from) {
      s.listed.push_back(i);
      s.compute_s.push_back(full[i]);
    } else {
      rest.push_back(full[i]);
    }
  }
  s.bulk.ranks = static_cast<int64_t>(rest.size());
  if (!rest.empty()) {
    std::vector<float> v = rest;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    s.bulk.median_s = v[v.size() / 2];
    for (float& x : v) x = std::fabs(x - static_cast<float>(s.bulk.median_s));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    s.bulk.mad_s = v[v.size() / 2];
  }
  return s;
}

TEST_CASE("healer.straggler: a summarized report flags the same ranks as the full one it summarizes") {
  Rng rng(99);
  const Policy p = testing::Shipped("default");
  int found = 0;
  for (int report = 0; report < 100; ++report) {
    size_t slow = report % 2 ? static_cast<size_t>(rng.Below(1000)) : SIZE_MAX;  // half of them: jitter only
    std::vector<float> full = StepTimes(rng, 1000, 0.01, slow, 0.10);
    std::vector<size_t> expected = RobustOutliers(full, p.straggler_mad_threshold, p.straggler_min_slowdown);
    Summarized s = Summarize(full, 1.02f);  // the sim lists ranks off nominal; here: the slowest tail
    std::vector<size_t> got;
    for (size_t i : RobustOutliers(s.compute_s, p.straggler_mad_threshold, p.straggler_min_slowdown, s.bulk))
      got.push_back(s.listed[i]);
    INFO("report ", report, " slow rank ", slow);
    CHECK(got == expected);
    CHECK(got == (slow == SIZE_MAX ? std::vector<size_t>{} : std::vector<size_t>{slow}));
    found += !got.empty();
  }
  CHECK(found == 50);
}

TEST_CASE("healer.straggler: summaries - bulk as majority or minority, barely slow and fast listed ranks") {
  const RankSummary bulk{997, 1.0, 0.0067};
  CHECK(RobustOutliers({1.10f, 1.03f, 0.9f}, 6, 0.05, bulk) == std::vector<size_t>{0});
  CHECK(RobustOutliers({}, 6, 0.05, bulk).empty());
  // Only two ranks summarized: the median comes from listed and summarized ranks together.
  CHECK(RobustOutliers({1.0f, 1.0f, 1.3f, 1.01f}, 6, 0.05, {2, 1.0, 0.005}) == std::vector<size_t>{2});
  CHECK(RobustOutliers({1.3f, 1.3f, 1.3f}, 6, 0.05, {2, 1.0, 0.005}).empty());  // most ranks slow: that is the norm
  CHECK(RobustOutliers({1.3f}, 6, 0.05, {1, 1.0, 0}).empty());                     // two ranks in all
}

// A job on the first `ranks` GPUs of `topo`, reporting every 60 s.
struct StragglerRun {
  const cluster::Topology& topo;
  DetectorHarness h;
  std::vector<ComponentId> gpus;
  Rng rng{42};

  StragglerRun(const cluster::Topology& t, size_t ranks) : topo(t), h("straggler", testing::Shipped("default"), t) {
    REQUIRE(topo.gpus().size() >= ranks);
    gpus.assign(topo.gpus().begin(), topo.gpus().begin() + static_cast<long>(ranks));
  }
  // Report number `n` (at n minutes); `slow` is slower by `slowdown` in it.
  void Report(int n, size_t slow = SIZE_MAX, double slowdown = 0) {
    h.Feed(Min(n), StepReport{7, 1.2, gpus, StepTimes(rng, gpus.size(), 0.01, slow, slowdown)});
  }
};

TEST_CASE("healer.straggler: a 1,000-rank job finds its slow rank after the window, once") {
  const cluster::Topology big = testing::BuildTopology(14, 0);  // 1,008 GPUs
  StragglerRun run(big, 1000);
  const size_t kSlow = 613;
  for (int n = 1; n <= 3; ++n) run.Report(n);
  for (int n = 4; n <= 30; ++n) run.Report(n, kSlow, 0.10);  // slow from the report at 4m on
  REQUIRE(run.h.raised().size() == 1);
  const auto& [at, s] = run.h.raised()[0];
  CHECK(at == Min(4) + Min(5));  // first outlier report + window
  CHECK(s.cls == SymptomClass::kStraggler);
  CHECK(s.detector == "straggler");
  CHECK(s.component == run.gpus[kSlow]);
  CHECK(s.job == 7);
  CHECK(s.text == "rank slower than the median for 5m");
}

TEST_CASE("healer.straggler: normal jitter never raises a symptom over 200 reports") {
  const cluster::Topology big = testing::BuildTopology(14, 0);
  StragglerRun run(big, 1000);
  for (int n = 1; n <= 200; ++n) run.Report(n);
  CHECK(run.h.raised().empty());
}

TEST_CASE("healer.straggler: one noisy report is not a straggler - a persistent one is, at first + window") {
  StragglerRun run(Topo(), 128);
  const size_t kRank = 37;
  run.Report(1);
  run.Report(2, kRank, 0.30);  // one bad step
  for (int n = 3; n <= 20; ++n) run.Report(n);
  CHECK(run.h.raised().empty());

  for (int n = 21; n <= 40; ++n) run.Report(n, kRank, 0.30);
  REQUIRE(run.h.raised().size() == 1);
  CHECK(run.h.raised()[0].at == Min(21) + Min(5));
  CHECK(run.h.raised()[0].symptom.component == Id("r01.tray10.gpu1"));  // rank 37 = GPU 37 = tray 10, gpu 1
}

TEST_CASE("healer.straggler: a streak broken before the window restarts - min_reports also has to be met") {
  StragglerRun run(Topo(), 64);
  for (int n = 1; n <= 4; ++n) run.Report(n, 5, 0.2);  // 3 minutes of streak, then back in line
  run.Report(5);
  for (int n = 6; n <= 10; ++n) run.Report(n, 5, 0.2);  // 4 minutes: still short of the window
  CHECK(run.h.raised().empty());
  run.Report(11, 5, 0.2);
  REQUIRE(run.h.raised().size() == 1);
  CHECK(run.h.raised()[0].at == Min(11));

  // Two reports 5 minutes apart cover the window but not min_reports 3.
  StragglerRun sparse(Topo(), 64);
  sparse.h.Feed(Min(1), StepReport{7, 1.2, sparse.gpus, StepTimes(sparse.rng, 64, 0.01, 9, 0.2)});
  sparse.h.Feed(Min(6), StepReport{7, 1.2, sparse.gpus, StepTimes(sparse.rng, 64, 0.01, 9, 0.2)});
  CHECK(sparse.h.raised().empty());
  sparse.h.Feed(Min(7), StepReport{7, 1.2, sparse.gpus, StepTimes(sparse.rng, 64, 0.01, 9, 0.2)});
  REQUIRE(sparse.h.raised().size() == 1);
  CHECK(sparse.h.raised()[0].at == Min(7));
}

TEST_CASE("healer.straggler: summarized reports - one noisy report is not a straggler, a persistent slow rank is") {
  const cluster::Topology big = testing::BuildTopology(14, 0);
  DetectorHarness h("straggler", testing::Shipped("default"), big);
  const ComponentId slow = big.gpus()[613];
  auto report = [&](int minute, float compute) {
    h.Feed(Min(minute), StepReport{7, 1.2, {slow}, {compute}, 999, 1.0, 0.0067});
  };
  report(1, 1.3f);  // one bad step, then back in line
  h.Feed(Min(2), StepReport{7, 1.2, {}, {}, 1000, 1.0, 0.0067});
  for (int n = 3; n <= 6; ++n) report(n, 1.01f);  // listed but not slow enough to matter
  CHECK(h.raised().empty());
  for (int n = 10; n <= 20; ++n) report(n, 1.1f);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Min(15));
  CHECK(h.raised()[0].symptom.component == slow);
}

TEST_CASE("healer.straggler: a report whose timings and GPUs do not pair up is ignored") {
  DetectorHarness h("straggler");
  std::vector<ComponentId> ten(Topo().gpus().begin(), Topo().gpus().begin() + 10);
  Rng rng(3);
  for (int n = 1; n <= 10; ++n) h.Feed(Min(n), StepReport{7, 1.2, ten, StepTimes(rng, 64, 0.01, 40, 0.3)});
  CHECK(h.raised().empty());
}

}  // namespace
}  // namespace rackchaos::healer
