// A failure that lands on a job's trays while it restarts (cluster/sim_step.cpp, docs/jobs.md): the
// restart stalls or fails, charged to that failure, as a running job would hang or fail; a part back
// before the watchdog fires starts the restart over. Job(): 5 min restart overhead, 10 min watchdog.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

constexpr Time kRequeue = Duration::Hours(1);
constexpr Time kDuring = Duration::Hours(1) + Duration::Minutes(2);  // 3 min before the restart would end

struct Restarting {
  Harness h;
  JobId job = 0;
  ComponentId tray = kNoComponent;

  Restarting() {
    job = h.sim.AddJob(Job(4)).value();
    h.sim.Start();
    tray = h.sim.JobTrays(job).front();
    h.At(kRequeue, [this] { CHECK(h.sim.RequeueJob(job, "test").ok()); });
  }
  ComponentId Part(const std::string& suffix) const { return h.Id(h.topo.at(tray).name + suffix); }
  // The job's last change at or before `at`.
  JobChanged At(Time at) const {
    JobChanged last{};
    for (const auto& [t, c] : h.JobChanges(job))
      if (t <= at) last = c;
    return last;
  }
};

TEST_CASE("restart failures: a NIC flap during a restart stalls it, charged to the flap, and the restart starts over") {
  Restarting r;
  const ComponentId nic = r.Part(".nic0");
  r.h.At(kDuring, [&] { CHECK(r.h.sim.SetNicLink(nic, false, 3).ok()); });
  r.h.At(kDuring + kMinute, [&] { CHECK(r.h.sim.SetNicLink(nic, true, 3).ok()); });
  r.h.clock.RunUntil(kRequeue + Duration::Minutes(20));
  const JobChanged stalled = r.At(kDuring);
  CHECK(stalled.state == JobState::kHung);
  CHECK(stalled.cause == 3);
  CHECK(stalled.detail.starts_with("restart stalled: "));
  const JobChanged again = r.At(kDuring + kMinute);
  CHECK(again.state == JobState::kRestarting);
  CHECK(again.detail == "restart starts over: its collectives can run again");
  // The whole overhead again from the flap's end, not the rest of the first restart.
  CHECK(r.At(kDuring + Duration::Minutes(5)).state == JobState::kRestarting);
  CHECK(r.At(kDuring + Duration::Minutes(6)).state == JobState::kRunning);
}

TEST_CASE("restart failures: a GPU lost during a restart hangs the job until the watchdog fails it") {
  Restarting r;
  const ComponentId gpu = r.h.topo.GpusOfTray(r.tray).front();
  r.h.At(kDuring, [&] { CHECK(r.h.sim.SetGpuFailed(gpu, true, 79, 4).ok()); });
  r.h.clock.RunUntil(kRequeue + Duration::Minutes(30));
  CHECK(r.At(kDuring).state == JobState::kHung);
  CHECK(r.At(kDuring).cause == 4);
  const JobChanged failed = r.At(kDuring + Duration::Minutes(10));
  CHECK(failed.state == JobState::kFailed);
  CHECK(failed.cause == 4);
}

TEST_CASE("restart failures: a crashed process during a restart fails the job, charged to the crash") {
  Restarting r;
  const ComponentId gpu = r.h.topo.GpusOfTray(r.tray).front();
  r.h.At(kDuring, [&] { CHECK(r.h.sim.CrashProcesses(gpu, 5).ok()); });
  r.h.clock.RunUntil(kRequeue + Duration::Minutes(10));
  const JobChanged failed = r.At(kDuring);
  CHECK(failed.state == JobState::kFailed);
  CHECK(failed.cause == 5);
  CHECK(failed.detail.ends_with("exited with an error during the restart"));
  CHECK(r.h.sim.JobStateOf(r.job) == JobState::kFailed);  // nothing restarts it but the healer
}

}  // namespace
}  // namespace rackchaos::cluster
