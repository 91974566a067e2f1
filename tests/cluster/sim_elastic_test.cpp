// An elastic job under remediation.shrink: a requeue that finds too few healthy trays free restarts it on
// the whole trays there are (down to min_gpus), its steps gpus/placed_gpus as long (fixed global batch),
// and it grows back to full size, from its checkpoint, once trays are free again. Job() steps: 10 s.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

// One GB200 rack with 1 spare (17 regular trays): a 64-GPU job on tray01-16, tray17 and tray18 free.
struct ElasticRig {
  explicit ElasticRig(bool shrink, int min_gpus) : h(3, 1, 1, false, Options(shrink)), clock(h.clock), sim(h.sim) {
    JobConfig cfg = Job(64);
    cfg.min_gpus = min_gpus;
    job = sim.AddJob(cfg).value();
    sim.Start();
  }
  static SimOptions Options(bool shrink) {
    SimOptions o;
    o.shrink_elastic = shrink;
    return o;
  }
  ComponentId Tray(int n) const { return h.Id("r01.tray" + std::string(n < 10 ? "0" : "") + std::to_string(n)); }
  // At 10m: the two free trays and tray01 under the job are drained, and the job is requeued.
  void LoseThreeTrays() {
    clock.CallAt(Duration::Minutes(10), [this] {
      for (int n : {17, 18, 1}) REQUIRE(sim.Drain(Tray(n), "test").ok());
      REQUIRE(sim.RequeueJob(job, "tray01 lost").ok());
    });
  }
  std::vector<std::pair<Time, JobChanged>> Changes() const { return h.JobChanges(job); }
  std::vector<ActionTaken> Actions() const {
    std::vector<ActionTaken> out;
    for (const Event& e : h.events.events())
      if (const auto* a = std::get_if<ActionTaken>(&e.body)) out.push_back(*a);
    return out;
  }

  Harness h;
  VirtualClock& clock;
  SimBackend& sim;
  JobId job = kNoJob;
};

TEST_CASE("sim elastic: a requeued job shrinks onto the 15 trays left, runs 64/60 slower, then grows back") {
  ElasticRig r(true, 48);
  r.LoseThreeTrays();
  r.clock.CallAt(Duration::Minutes(60), [&] { REQUIRE(r.sim.Resume(r.Tray(17)).ok()); });
  r.clock.RunUntil(Duration::Minutes(75));

  const double shrunk_step = 10.0 * 64 / 60;  // 10.667 s
  auto c = r.Changes();
  REQUIRE(c.size() == 7);
  CHECK(c[1].first == Duration::Minutes(10));
  CHECK(c[1].second.state == JobState::kQueued);
  CHECK(c[1].second.lost_work == Duration::Minutes(10));  // no checkpoint yet
  CHECK(c[2].second.state == JobState::kRestarting);
  CHECK(c[2].second.gpus == 60);
  CHECK(c[2].second.detail == "shrunk to 60 of 64 GPUs, placed on 15 trays");
  CHECK(c[3].first == Duration::Minutes(15));  // restart overhead
  CHECK(c[3].second.state == JobState::kRunning);
  CHECK(c[3].second.step_time_s == doctest::Approx(shrunk_step));
  CHECK(c[3].second.speed == doctest::Approx(60.0 / 64));
  // Resume of tray17 at 60m: 15 own trays + 1 free = 16: back to the queue from the 35m checkpoint (a
  // requeue keeps the running time already counted toward the next checkpoint: 30m - 10m = 20m of running).
  CHECK(c[4].first == Duration::Minutes(60));
  CHECK(c[4].second.state == JobState::kQueued);
  CHECK(c[4].second.lost_work == Duration::Minutes(25));
  CHECK(c[4].second.steps == doctest::Approx(20 * 60 / shrunk_step));
  CHECK(c[5].second.state == JobState::kRestarting);
  CHECK(c[5].second.gpus == 64);
  CHECK(c[5].second.detail == "grown back to 64 GPUs on 16 trays");
  CHECK(c[6].first == Duration::Minutes(65));
  CHECK(c[6].second.step_time_s == doctest::Approx(10));
  CHECK(c[6].second.speed == doctest::Approx(1));
  CHECK(r.sim.JobTrays(r.job).size() == 16);
  CHECK(r.sim.JobSteps(r.job) == doctest::Approx(20 * 60 / shrunk_step + 60));

  auto a = r.Actions();
  REQUIRE(a.size() == 2);
  CHECK(a[0].action == "shrink");
  CHECK(a[0].detail == "shrunk to 60 of 64 GPUs, placed on 15 trays: too few healthy trays free (remediation.shrink)");
  CHECK(a[1].action == "grow");
  CHECK(a[1].detail == "grown back to 64 GPUs on 16 trays (was 60), from the last checkpoint");
  CHECK(a[1].job == r.job);
}

TEST_CASE("sim elastic: no shrink without the option, below min_gpus, or for a job not elastic") {
  struct Case {
    bool shrink;
    int min_gpus;
  };
  for (Case k : {Case{false, 48}, Case{true, 64}, Case{true, 0}}) {
    CAPTURE(k.shrink);
    CAPTURE(k.min_gpus);
    ElasticRig r(k.shrink, k.min_gpus);
    r.LoseThreeTrays();
    r.clock.RunUntil(Duration::Minutes(30));
    CHECK(r.sim.JobStateOf(r.job) == JobState::kQueued);
    CHECK(r.Actions().empty());
    // One tray back is enough for the full size.
    r.clock.CallAt(Duration::Minutes(31), [&] { REQUIRE(r.sim.Resume(r.Tray(17)).ok()); });
    r.clock.RunUntil(Duration::Minutes(40));
    CHECK(r.sim.JobStateOf(r.job) == JobState::kRunning);
    CHECK(r.Changes().back().second.gpus == 64);
  }
}

TEST_CASE("sim elastic: a shrunk job left with fewer whole trays than min_gpus waits queued") {
  ElasticRig r(true, 60);  // 15 trays at least
  r.LoseThreeTrays();      // shrinks onto 15
  r.clock.CallAt(Duration::Minutes(20), [&] {
    REQUIRE(r.sim.Drain(r.Tray(2), "test").ok());
    REQUIRE(r.sim.RequeueJob(r.job, "tray02 lost").ok());
  });
  r.clock.RunUntil(Duration::Minutes(30));
  CHECK(r.sim.JobStateOf(r.job) == JobState::kQueued);
  REQUIRE(r.Actions().size() == 1);
}

// Two GB200 racks, no spares; only r01.tray15-18 and r02.tray01-07 free. A grouped elastic job of
// tp 8 x dp 4 (blocks of 2 trays) takes r01.tray15-18 + r02.tray01-04. At 10m r01.tray18 and the three
// free trays of r02 are drained and the job requeued: 7 trays free, 3 in r01 and 4 in r02.
struct GroupedShrinkRig {
  GroupedShrinkRig() : h(5, 2, 0, false, ElasticRig::Options(true)) {
    for (int n = 1; n <= 14; ++n) REQUIRE(h.sim.Drain(Tray(1, n), "test").ok());
    for (int n = 8; n <= 18; ++n) REQUIRE(h.sim.Drain(Tray(2, n), "test").ok());
    JobConfig cfg = Job(32);
    cfg.grouped = true;
    cfg.tp = 8;
    cfg.dp = 4;
    cfg.min_gpus = 16;
    job = h.sim.AddJob(cfg).value();
    h.sim.Start();
    h.clock.CallAt(Duration::Minutes(10), [this] {
      for (auto [rack, n] : {std::pair{1, 18}, {2, 5}, {2, 6}, {2, 7}})
        REQUIRE(h.sim.Drain(Tray(rack, n), "test").ok());
      REQUIRE(h.sim.RequeueJob(job, "tray18 lost").ok());
    });
  }
  ComponentId Tray(int rack, int n) const {
    return h.Id("r0" + std::to_string(rack) + ".tray" + std::string(n < 10 ? "0" : "") + std::to_string(n));
  }
  Harness h;
  JobId job = kNoJob;
};

TEST_CASE("sim elastic: a shrunk grouped job keeps whole TP blocks inside one NVLink domain") {
  GroupedShrinkRig r;
  Harness& h = r.h;
  const JobId job = r.job;
  auto tray = [&](int rack, int n) { return r.Tray(rack, n); };
  h.clock.RunUntil(Duration::Minutes(20));
  // 28 GPUs on the first 7 free trays would put ranks 8-15 on r01.tray17 and r02.tray01, and give dp 3.5.
  // Whole blocks per domain: one in r01 (2 of its 3 trays), two in r02: 24 GPUs, dp 3.
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() >= 3);
  CHECK(changes[2].second.gpus == 24);
  CHECK(changes[2].second.detail == "shrunk to 24 of 32 GPUs, placed on 6 trays");
  std::vector<ComponentId> expected = {tray(1, 15), tray(1, 16), tray(2, 1), tray(2, 2), tray(2, 3), tray(2, 4)};
  CHECK(h.sim.JobTrays(job) == expected);
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
  CHECK(h.JobChanges(job).back().second.step_time_s == doctest::Approx(10.0 * 32 / 24));
}

// The rig above, shrunk at 10m to 24 GPUs on r01.tray15-16 + r02.tray01-04, with r01.tray17 free. At 20m
// r02.tray05 comes back: 2 free + 6 own = 8 trays, but the first 8 free would split a block over
// r01.tray17 and r02.tray01, and whole blocks per domain hold only 6 trays. At 30m r01.tray18 comes back:
// r01.tray15-18 + r02.tray01-04.
TEST_CASE("sim.parallel: a shrunk grouped job grows back only in whole blocks per domain") {
  GroupedShrinkRig r;
  Harness& h = r.h;
  h.clock.CallAt(Duration::Minutes(20), [&] { REQUIRE(h.sim.Resume(r.Tray(2, 5)).ok()); });
  h.clock.RunUntil(Duration::Minutes(25));
  CHECK(h.sim.JobStateOf(r.job) == JobState::kRunning);  // not sent back to the queue to wait there
  CHECK(h.JobChanges(r.job).back().second.gpus == 24);
  std::vector<ActionTaken> grow;
  for (const Event& e : h.events.events())
    if (const auto* a = std::get_if<ActionTaken>(&e.body); a && a->action == "grow") grow.push_back(*a);
  REQUIRE(grow.size() == 1);
  CHECK_FALSE(grow[0].ok);
  CHECK(grow[0].detail ==
        "stays at 24 of 32 GPUs: 8 trays free but not in whole blocks of 8 GPUs (tp*ep) per NVLink domain");
  h.clock.CallAt(Duration::Minutes(30), [&] { REQUIRE(h.sim.Resume(r.Tray(1, 18)).ok()); });
  h.clock.RunUntil(Duration::Minutes(40));
  CHECK(h.sim.JobStateOf(r.job) == JobState::kRunning);
  CHECK(h.JobChanges(r.job).back().second.gpus == 32);
  std::vector<ComponentId> expected = {r.Tray(1, 15), r.Tray(1, 16), r.Tray(1, 17), r.Tray(1, 18),
                                       r.Tray(2, 1),  r.Tray(2, 2),  r.Tray(2, 3),  r.Tray(2, 4)};
  CHECK(h.sim.JobTrays(r.job) == expected);
}

}  // namespace
}  // namespace rackchaos::cluster
