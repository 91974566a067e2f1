// The storage path and data stalls (cluster/sim_storage.cpp): a job reading 2 GB/s per GPU over a
// 10 s step needs 20 GB per GPU per step; the GB200 catalogue's cache gives 7 GB/s per GPU (2.9 s, hidden
// behind the step), the object store 1 GB/s (20 s: the step waits 10 s on data).
#include <doctest/doctest.h>

#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

JobConfig Reading(double gbytes_per_s) {
  JobConfig cfg = Job(8);  // r01.tray01 and r01.tray02
  cfg.input_gbytes_per_s = gbytes_per_s;
  return cfg;
}

TEST_CASE("sim.storage: the catalogue gives each tray's cache and the object store a read rate per GPU") {
  auto model = LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  CHECK(model->cache_gbytes_per_s_per_gpu == 7);
  CHECK(model->object_store_gbytes_per_s_per_gpu == 1);
  std::string text = ShippedModelText("gb200-nvl72");
  auto bare = ParseRackModel(text.substr(0, text.find("storage:")) + text.substr(text.find("service:")), "site.yaml");
  REQUIRE_MESSAGE(bare.ok(), bare.status().message());
  CHECK(bare->cache_gbytes_per_s_per_gpu == 0);  // no storage section: not modelled
  std::string zero = text;
  zero.replace(zero.find("cache_gbytes_per_s_per_gpu: 7"), 29, "cache_gbytes_per_s_per_gpu: 0");
  CHECK(ParseRackModel(zero, "site.yaml").status().message() ==
        "site.yaml: storage read rates must be > 0 (or leave the storage section out)");
}

TEST_CASE("sim.storage: a lost cache stalls every step on its tray's read from the object store") {
  Harness h;
  JobId job = h.sim.AddJob(Reading(2)).value();
  h.sim.Start();
  ComponentId tray = h.Id("r01.tray02");
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetStorageRead(tray, 0, 7).ok()); });
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.Release(Held::kStorageRead, {tray, -1}, 7).ok()); });
  h.clock.RunUntil(Duration::Minutes(10));

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].second.step_time_s == doctest::Approx(10));  // 2.9 s reads hidden behind the step
  CHECK(changes[1].first == Duration::Minutes(1));
  CHECK(changes[1].second.step_time_s == doctest::Approx(20));
  CHECK(changes[1].second.cause == 7);
  CHECK(changes[2].second.step_time_s == doctest::Approx(10));
  CHECK(h.Physics("storage_read", tray).size() == 1);
  CHECK(h.Physics("storage_read_up", tray).size() == 1);
  CHECK(h.seen.Of<KernelLogLine>().empty());  // nothing is logged

  auto reports = h.seen.Of<StepReport>();
  REQUIRE(reports.size() >= 2);
  std::vector<ComponentId> starved(h.topo.GpusOfTray(tray).begin(), h.topo.GpusOfTray(tray).end());
  for (size_t k = 0; k + 1 < reports.size(); ++k) {
    const StepReport& r = reports[k].second;
    REQUIRE(r.rank_gpus == starved);  // the tray's ranks wait on the loader; the others on them
    for (float c : r.compute_s) CHECK(c == doctest::Approx(8.5 + 10).epsilon(0.2));
    CHECK(r.bulk_ranks == 4);
    CHECK(r.bulk_median_s == doctest::Approx(8.5).epsilon(0.05));
  }
  CHECK(reports.back().second.rank_gpus.empty());
}

TEST_CASE("sim.storage: a degraded cache reads at part of its rate") {
  Harness h;
  JobId job = h.sim.AddJob(Reading(2)).value();
  h.sim.Start();
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetStorageRead(h.Id("r01.tray01"), 0.2, 8).ok()); });
  h.clock.RunUntil(Duration::Minutes(3));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.step_time_s == doctest::Approx(20 / (7 * 0.2)));
  CHECK(changes[1].second.cause == 8);
}

TEST_CASE("sim.storage: no stall without input, with input the slower path still covers, or off the job") {
  for (double input : {0.0, 0.5}) {  // 0.5 GB/s from the object store: 5 s per 10 s step
    CAPTURE(input);
    Harness h;
    JobId job = h.sim.AddJob(Reading(input)).value();
    h.sim.Start();
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetStorageRead(h.Id("r01.tray02"), 0, 7).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    CHECK(h.JobChanges(job).size() == 1);
    CHECK(h.seen.Of<StepReport>().empty());
  }
  Harness h;
  JobId job = h.sim.AddJob(Reading(2)).value();
  h.sim.Start();
  CHECK(h.sim.SetStorageRead(h.Id("r01.tray05"), 0, 7).ok());  // no job there
  h.clock.RunUntil(Duration::Minutes(5));
  CHECK(h.JobChanges(job).size() == 1);
  CHECK(h.sim.SetStorageRead(h.Id("r01.tray01.gpu0"), 0, 7).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetStorageRead(h.Id("r01.tray01"), 1.5, 7).code() == StatusCode::kInvalidArgument);
}

// Checkpoints at 20, 40 and 60 min of running time, acknowledged 30 s later, copied to the far region in
// 15 min (done at 35m30s, 55m30s, 75m30s). A tray's store lost at `loss`, the job requeued a minute later:
// the steps it restarts from and the running time thrown away.
struct Restart {
  double steps;
  Duration lost;
};
Restart LoseStoreThenRequeue(Duration copy, Duration loss) {
  Harness h;
  JobConfig cfg = Reading(0);
  cfg.checkpoint_interval = Duration::Minutes(20);
  cfg.checkpoint_write = Duration::Seconds(30);
  cfg.checkpoint_copy = copy;
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  h.At(loss, [&] { CHECK(h.sim.SetStorageRead(h.Id("r01.tray02"), 0, 4).ok()); });
  h.At(loss + kMinute, [&] { CHECK(h.sim.RequeueJob(job, "test").ok()); });
  h.clock.RunUntil(loss + kMinute + kMinute);
  for (const auto& [at, c] : h.JobChanges(job))
    if (c.state == JobState::kQueued) {
      CHECK(h.Physics("checkpoint_lost").size() == (c.steps < 300 ? 1u : 0u));
      return {c.steps, c.lost_work};
    }
  FAIL("the job was not requeued");
  return {};
}

TEST_CASE("sim.storage: a local store lost before the far copy ends sends the restart to the previous copy") {
  Restart lost = LoseStoreThenRequeue(Duration::Minutes(15), Duration::Minutes(70));
  CHECK(lost.steps == doctest::Approx(240));  // the 40 min checkpoint: 2,400 s of 10 s steps
  CHECK(lost.lost == Duration::Minutes(31));
  Restart durable = LoseStoreThenRequeue({}, Duration::Minutes(70));  // no copy modelled: the ack is durable
  CHECK(durable.steps == doctest::Approx(360));
  CHECK(durable.lost == Duration::Minutes(11));
  Restart copied = LoseStoreThenRequeue(Duration::Minutes(15), Duration::Minutes(78));  // after the 60 min copy
  CHECK(copied.steps == doctest::Approx(360));
  CHECK(copied.lost == Duration::Minutes(19));
}

}  // namespace
}  // namespace rackchaos::cluster
