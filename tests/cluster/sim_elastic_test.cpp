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

}  // namespace
}  // namespace rackchaos::cluster
