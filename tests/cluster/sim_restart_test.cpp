// Restarts in place (cluster/sim_restart.cpp): a requeued job that gets back all its trays but the lost
// ones must end up exactly where, and exactly as warm as, a full release and placement would leave it.
// Each test runs the same script twice, with SimOptions::restart_in_place on and off, and compares.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

// What a run leaves that a restart could change: every job event, every physics event and every GPU's
// temperature at a few instants after the restarts.
struct Outcome {
  std::vector<std::string> job_events, physics;
  std::vector<double> temperatures;
  std::vector<ComponentId> trays;
  int in_place = 0;
};

// Runs the script to 6 h, samples once more, and keeps what the two ways of restarting must agree on.
void Finish(Harness& h, JobId job, Outcome& out, const std::function<void()>& sample) {
  h.clock.RunUntil(Duration::Hours(6));
  sample();
  for (const Event& e : h.events.events()) {
    if (const auto* j = std::get_if<JobChanged>(&e.body))
      out.job_events.push_back(std::to_string(e.at.us) + " " + JobStateName(j->state) + " " + j->detail + " " +
                               std::to_string(j->trays.size()) + " " + std::to_string(j->gpus) + " " +
                               std::to_string(j->steps));
    if (const auto* p = std::get_if<PhysicsChanged>(&e.body))
      out.physics.push_back(std::to_string(e.at.us) + " " + std::to_string(p->component) + " " + p->what + " " +
                            std::to_string(p->value));
  }
  out.trays = h.sim.JobTrays(job);
  out.in_place = h.sim.RestartsInPlace();
}

// The same trays, events and temperatures, bit for bit, not within a tolerance.
void CheckSame(const Outcome& fast, const Outcome& full) {
  CHECK(fast.trays == full.trays);
  CHECK(fast.job_events == full.job_events);
  CHECK(fast.physics == full.physics);
  REQUIRE(fast.temperatures.size() == full.temperatures.size());
  size_t differ = 0;
  for (size_t i = 0; i < fast.temperatures.size(); ++i) differ += fast.temperatures[i] != full.temperatures[i];
  CHECK(differ == 0);
}

// Two racks (16 regular trays and 2 hot spares each); a 96-GPU job on 24 trays: r01.tray01-16 and
// r02.tray01-08. Requeues after a drain, after a tray pull (its GPUs get trajectories of their own)
// and with nothing changed, then a watchdog timeout that releases everything.
Outcome RunScript(bool in_place) {
  SimOptions options;
  options.restart_in_place = in_place;
  Harness h(7, 2, 2, false, options);
  JobId job = h.sim.AddJob(Job(96)).value();
  h.sim.Start();
  Outcome out;
  auto sample = [&] {
    for (ComponentId g : h.topo.gpus()) out.temperatures.push_back(h.sim.GpuTemperature(g));
  };
  h.At(Duration::Hours(2), [&] {
    CHECK(h.sim.Drain(h.Id("r01.tray03"), "isolated").ok());
    CHECK(h.sim.RequeueJob(job, "tray drained").ok());
  });
  // Soon after each restart, while what the job left on its trays has not decayed away yet.
  for (Duration after : {Duration::Seconds(1), Duration::Seconds(20), Duration::Seconds(90)})
    for (Duration restart : {Duration::Hours(2), Duration::Hours(3), Duration::Hours(3) + Duration::Minutes(20)})
      h.At(restart + after, sample);
  h.At(Duration::Hours(3), [&] {
    CHECK(h.sim.SetTrayPresent(h.Id("r01.tray07"), false, 3).ok());
    CHECK(h.sim.RequeueJob(job, "tray pulled").ok());
  });
  h.At(Duration::Hours(3) + Duration::Minutes(20), [&] { CHECK(h.sim.RequeueJob(job, "again").ok()); });
  h.At(Duration::Hours(4), sample);
  h.At(Duration::Hours(4) + Duration::Minutes(1), [&] {  // a GPU dies: the job hangs, times out, lets go
    CHECK(h.sim.SetGpuFailed(h.Id("r01.tray10.gpu1"), true, 79, 4).ok());
  });
  h.At(Duration::Hours(5), sample);
  Finish(h, job, out, sample);
  if (in_place) {  // the first requeue kept 23 trays and took the first free regular one, r02.tray09
    const auto& changes = h.JobChanges(job);
    bool saw = false;
    for (const auto& [at, c] : changes)
      if (at == Duration::Hours(2) && c.state == JobState::kRestarting) {
        saw = true;
        CHECK_FALSE(c.trays.Contains(h.Id("r01.tray03")));
        CHECK(c.trays.Contains(h.Id("r02.tray09")));
        CHECK(c.trays.size() == 24);
        // The new list carries the GPUs on its trays for scoring, counted as Topology counts them.
        CHECK(c.trays.tray_gpus() == 96);
        CHECK(c.trays.tray_gpus() == static_cast<int64_t>(h.topo.GpusOnTrays(c.trays.ids())));
      }
    CHECK(saw);
    // The requeue at 3h20m changed nothing (no seat lost, no free tray below the job's last): the job keeps
    // the very list it ran on, shared, not an equal copy; the drain's restart at 2 h made a new one.
    const TrayList* running = nullptr;
    int checked = 0;
    for (const auto& [at, c] : changes) {
      if (c.state == JobState::kRestarting && running && at == Duration::Hours(2)) {
        CHECK_FALSE(c.trays == *running);
        ++checked;
      }
      if (c.state == JobState::kRestarting && running && at == Duration::Hours(3) + Duration::Minutes(20)) {
        CHECK(c.trays.SameAs(*running));
        ++checked;
      }
      if (c.state == JobState::kRunning) running = &c.trays;
    }
    CHECK(checked == 2);
  }
  return out;
}

TEST_CASE("sim.restart: in place gives the same trays, events and temperatures as a full release") {
  const Outcome fast = RunScript(true), full = RunScript(false);
  CHECK(fast.in_place == 3);
  CHECK(full.in_place == 0);
  CheckSame(fast, full);
}

// A process crash releases the job's trays as far as anyone sees; the release is owed until the healer's
// requeue, which restarts in place when it comes first (at 2 h), and is taken in full by anything that
// comes before it (a drain at 3 h, a sample at 4 h: then the requeue places from scratch).
Outcome RunCrashScript(bool in_place) {
  SimOptions options;
  options.restart_in_place = in_place;
  Harness h(7, 2, 2, false, options);
  JobId job = h.sim.AddJob(Job(96)).value();
  h.sim.Start();
  Outcome out;
  auto sample = [&] {
    for (ComponentId g : h.topo.gpus()) out.temperatures.push_back(h.sim.GpuTemperature(g));
  };
  h.At(Duration::Hours(2), [&] {
    CHECK(h.sim.CrashProcesses(h.Id("r01.tray05.gpu2"), 1).ok());
    CHECK(h.sim.RequeueJob(job, "job failed").ok());
  });
  h.At(Duration::Hours(3), [&] { CHECK(h.sim.CrashProcesses(h.Id("r02.tray02.gpu0"), 2).ok()); });
  h.At(Duration::Hours(3), [&] {
    CHECK(h.sim.Drain(h.Id("r01.tray03"), "isolated").ok());
    CHECK(h.sim.RequeueJob(job, "job failed").ok());
  });
  h.At(Duration::Hours(4), [&] { CHECK(h.sim.CrashProcesses(h.Id("r01.tray01.gpu0"), 3).ok()); });
  h.At(Duration::Hours(4), sample);
  h.At(Duration::Hours(4), [&] { CHECK(h.sim.RequeueJob(job, "job failed").ok()); });
  for (Duration after : {Duration::Seconds(1), Duration::Seconds(20), Duration::Seconds(90)})
    for (Duration restart : {Duration::Hours(2), Duration::Hours(3), Duration::Hours(4)})
      h.At(restart + after, sample);
  Finish(h, job, out, sample);
  return out;
}

TEST_CASE("sim.restart: a crashed job requeued at once restarts in place, with a full release's results") {
  const Outcome fast = RunCrashScript(true), full = RunCrashScript(false);
  CHECK(fast.in_place == 1);  // only the 2 h requeue came before anything else
  CHECK(full.in_place == 0);
  CheckSame(fast, full);
}

TEST_CASE("sim.restart: a job with another one waiting restarts in full (the other may take its trays)") {
  Harness h(7, 1, 2);
  JobId small = h.sim.AddJob(Job(8)).value();  // 2 trays
  JobId big = h.sim.AddJob(Job(68)).value();   // 17 trays: 14 regular and 2 spares are left, it waits
  h.sim.Start();
  REQUIRE(h.sim.JobStateOf(big) == JobState::kQueued);
  h.At(Duration::Hours(1), [&] { CHECK(h.sim.RequeueJob(small, "test").ok()); });
  h.clock.RunUntil(Duration::Hours(2));
  CHECK(h.sim.RestartsInPlace() == 0);
  CHECK(h.sim.JobStateOf(small) == JobState::kRunning);
}

TEST_CASE("sim.restart: a job whose last tray is partly used restarts in full") {
  Harness h(7, 1, 2);
  JobId odd = h.sim.AddJob(Job(10)).value();  // 2 trays and half of a third
  h.sim.Start();
  h.At(Duration::Hours(1), [&] { CHECK(h.sim.RequeueJob(odd, "test").ok()); });
  h.clock.RunUntil(Duration::Hours(2));
  CHECK(h.sim.RestartsInPlace() == 0);
  CHECK(h.sim.JobStateOf(odd) == JobState::kRunning);
}

}  // namespace
}  // namespace rackchaos::cluster
