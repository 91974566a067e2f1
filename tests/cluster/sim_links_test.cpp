// Degraded links in the simulator (link_degrade): the job's collectives over the link slow by
// 1 / bandwidth, the link logs nothing and reads up, and only the rank behind it reports slow sends.
// Numbers from Job(): 10 s steps of which 8.5 s compute, 1 s NVLink (TP) and 0.5 s scale-out (DP).
#include <doctest/doctest.h>

#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

TEST_CASE("sim.link_degrade: a NIC at 10% makes scale-out 10x slower, only its rank sends slowly, revert restores") {
  Harness h;
  JobConfig cfg = Job(8);  // trays 1 and 2
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId nic = h.Id("r01.tray02.nic1"), behind = h.Id("r01.tray02.gpu1");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetLinkBandwidth(nic, -1, 0.1, 3).ok()); });
  h.At(Duration::Minutes(15), [&] { CHECK(h.sim.Release(Held::kLinkBandwidth, {nic, -1}, 3).ok()); });
  h.clock.RunUntil(Duration::Minutes(30));

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[1].first == Duration::Minutes(10));
  CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 + 1 + 0.5 / 0.1));
  CHECK(changes[1].second.cause == 3);  // ground truth: the fault slowed the job
  CHECK(changes[2].second.step_time_s == doctest::Approx(10));
  REQUIRE(h.Physics("link_bandwidth", nic).size() == 2);
  CHECK(h.seen.Of<LinkStateChange>().empty());  // the link never went down
  CHECK(h.seen.Of<KernelLogLine>().empty());

  auto reports = h.seen.Of<StepReport>();
  REQUIRE(reports.size() == 6);  // every minute while degraded, then one all-clear
  for (size_t k = 0; k + 1 < reports.size(); ++k) {
    const StepReport& r = reports[k].second;
    REQUIRE(r.rank_gpus == std::vector<ComponentId>{behind});
    REQUIRE(r.comm_s.size() == 1);
    CHECK(r.comm_s[0] == doctest::Approx(1 + 0.5 / 0.1).epsilon(0.2));  // its NVLink share plus 10x scale-out
    CHECK(r.compute_s[0] == doctest::Approx(8.5).epsilon(0.2));         // it computes at full speed
    CHECK(r.bulk_ranks == 7);
    CHECK(r.bulk_comm_median_s == doctest::Approx(1.5).epsilon(0.05));
  }
  CHECK(reports.back().second.rank_gpus.empty());
  CHECK(reports.back().second.comm_s.empty());
}

TEST_CASE("sim.link_degrade: an NVLink port at 25% makes TP traffic 4x slower for the job") {
  Harness h;
  JobConfig cfg = Job(8);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray01.gpu2");
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(gpu, 7, 0.25, 9).ok()); });
  h.clock.RunUntil(Duration::Minutes(5));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 + 1 / 0.25 + 0.5));
  CHECK(changes[1].second.cause == 9);
  auto reports = h.seen.Of<StepReport>();
  REQUIRE_FALSE(reports.empty());
  REQUIRE(reports[0].second.comm_s.size() == 1);
  CHECK(reports[0].second.comm_s[0] == doctest::Approx(4 + 0.5).epsilon(0.2));
}

TEST_CASE("sim.link_degrade: a link outside the job, bad ports, kinds and bandwidths") {
  Harness h;
  JobId job = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  CHECK(h.sim.SetLinkBandwidth(h.Id("r01.tray05.nic0"), -1, 0.1, 1).ok());  // no job there: nothing slows
  h.clock.RunUntil(Duration::Minutes(5));
  CHECK(h.JobChanges(job).size() == 1);
  CHECK(h.seen.Of<StepReport>().empty());
  CHECK(h.sim.SetLinkBandwidth(h.Id("r01.tray01.gpu0"), 18, 0.5, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetLinkBandwidth(h.Id("r01.tray01"), -1, 0.5, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetLinkBandwidth(h.Id("r01.tray01.nic0"), -1, 0, 1).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rackchaos::cluster
