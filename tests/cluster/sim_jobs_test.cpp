// Jobs on the simulated cluster under power caps, link faults, tray pulls and requeues, with
// checkpoints, against step times and losses worked out by hand from Job(): 10 s steps of which
// 8.5 s compute, 1 s NVLink (TP) and 0.5 s scale-out (DP).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<ComponentId> Trays(const Harness& h, std::initializer_list<const char*> names) {
  std::vector<ComponentId> out;
  for (const char* n : names) out.push_back(h.Id(n));
  return out;
}

// --------------------------------------------------------------------------- power cap

TEST_CASE("a 600 W cap on one job GPU slows the job to compute at cbrt(1/2), the baseline restores it") {
  Harness h;
  JobConfig cfg = Job(8);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray02.gpu3");
  REQUIRE(h.sim.JobTrays(job) == Trays(h, {"r01.tray01", "r01.tray02"}));
  CHECK(h.sim.GetPowerCap(gpu).value() == 1200);

  h.At(Duration::Minutes(10), [&] {
    CHECK(h.sim.SetPowerCap(gpu, 600, 5).ok());
    CHECK(h.sim.GetPowerCap(gpu).value() == 600);
  });
  h.At(Duration::Minutes(20), [&] { CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 5).ok()); });
  h.clock.RunUntil(Duration::Minutes(30));

  const double capped_step = 8.5 / std::cbrt(0.5) + 1.5;  // 12.209 s
  CHECK(StepTime(cfg, std::cbrt(600.0 / 1200)) == doctest::Approx(capped_step));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].first == Time{});
  CHECK(changes[0].second.detail == "running");
  CHECK(changes[0].second.step_time_s == doctest::Approx(10));
  CHECK(changes[1].first == Duration::Minutes(10));
  CHECK(changes[1].second.step_time_s == doctest::Approx(capped_step));
  CHECK(changes[1].second.speed == doctest::Approx(10 / capped_step));
  CHECK(changes[1].second.cause == 5);
  CHECK(changes[2].first == Duration::Minutes(20));
  CHECK(changes[2].second.step_time_s == doctest::Approx(10));
  CHECK(changes[2].second.speed == doctest::Approx(1));
  CHECK(changes[2].second.cause == kNoFault);
  CHECK(h.sim.GetPowerCap(gpu).value() == 1200);
  // 10 min at 10 s, 10 min at 12.209 s, 10 min at 10 s.
  CHECK(h.sim.JobSteps(job) == doctest::Approx(60 + 600 / capped_step + 60));

  auto caps = h.Physics("power_cap", gpu);
  REQUIRE(caps.size() == 2);
  CHECK(caps[0].second.value == 600);
  CHECK(caps[1].second.value == 1200);
}

TEST_CASE("power caps are clamped to the GPU's range and only GPUs take them") {
  Harness h;
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray01.gpu0");
  CHECK(h.sim.SetPowerCap(gpu, 100, 1).ok());
  CHECK(h.sim.GetPowerCap(gpu).value() == 300);
  CHECK(h.sim.SetPowerCap(gpu, 5000, 1).ok());
  CHECK(h.sim.GetPowerCap(gpu).value() == 1200);
  CHECK(h.sim.SetPowerCap(h.Id("r01.tray01"), 600, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.GetPowerCap(h.Id("r01.tray01.nic0")).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("step reports: every 60 s while a rank is slow, listing it and summarizing the rest, then one all-clear") {
  Harness h;
  JobId job = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray02.gpu1");
  h.clock.RunUntil(Duration::Minutes(10));
  CHECK(h.seen.Of<StepReport>().empty());  // every rank at full speed: nothing a straggler test could flag
  CHECK(h.sim.SetPowerCap(gpu, 600, 1).ok());
  h.At(Duration::Minutes(15), [&] { CHECK(h.sim.Release(Held::kPowerCap, {gpu, -1}, 1).ok()); });
  h.clock.RunUntil(Duration::Minutes(30));
  auto reports = h.seen.Of<StepReport>();
  // Reports at the job's seeded phase in every minute from the cap on, and one more after it lifts.
  REQUIRE(reports.size() == 6);
  Time first = reports[0].first;
  CHECK(first > Duration::Minutes(10));
  CHECK(first <= Duration::Minutes(11));
  const double nominal = 8.5, capped = 8.5 / std::cbrt(0.5);
  for (size_t k = 0; k < reports.size(); ++k) {
    const auto& [at, r] = reports[k];
    CHECK(at == first + Duration::Minutes(static_cast<int64_t>(k)));
    CHECK(r.job == job);
    if (k == 5) {  // after the cap lifted: nobody listed, every rank in the bulk
      CHECK(r.rank_gpus.empty());
      CHECK(r.bulk_ranks == 8);
      CHECK(r.step_time_s == doctest::Approx(10));
    } else {
      CHECK(r.step_time_s == doctest::Approx(capped + 1.5));
      REQUIRE(r.rank_gpus == std::vector<ComponentId>{gpu});
      REQUIRE(r.compute_s.size() == 1);
      CHECK(r.compute_s[0] == doctest::Approx(capped).epsilon(0.2));  // jitter is clamped to 20%
      CHECK(r.bulk_ranks == 7);
    }
    CHECK(r.bulk_median_s == doctest::Approx(nominal).epsilon(0.05));
    CHECK(r.bulk_mad_s == doctest::Approx(nominal * 0.6745 * 0.01).epsilon(0.9));
  }
}

// --------------------------------------------------------------------------- NVLink and NIC links

TEST_CASE("one NVLink port down: 18/17 NVLink time, a link poll observation, Xid 145") {
  Harness h;
  JobConfig cfg = Job(8);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray01.gpu2");
  const Time down_at = Duration::Minutes(10) + Duration::Millis(300);
  h.At(down_at, [&] {
    CHECK(h.sim.SetNvlinkPort(gpu, 5, false, 4).ok());
    CHECK(h.sim.SetNvlinkPort(gpu, 5, false, 4).ok());  // already down: no second change
  });
  h.At(Duration::Minutes(11), [&] { CHECK(h.sim.SetNvlinkPort(gpu, 5, true, 4).ok()); });
  h.clock.RunUntil(Duration::Minutes(12));

  auto down = h.Physics("nvlink_down", gpu);
  REQUIRE(down.size() == 1);
  CHECK(down[0].first == down_at);
  CHECK(down[0].second.value == 5);
  CHECK(down[0].second.cause == 4);
  CHECK(h.Physics("nvlink_up", gpu).size() == 1);

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[1].first == down_at);
  CHECK(changes[1].second.step_time_s == doctest::Approx(StepTime(cfg, 1, 17)));
  CHECK(changes[1].second.step_time_s - 10 == doctest::Approx(1.0 * (18.0 / 17 - 1)));
  CHECK(changes[1].second.cause == 4);
  CHECK(changes[2].first == Duration::Minutes(11));
  CHECK(changes[2].second.step_time_s == doctest::Approx(10));

  // Link counters are polled every second on the tray's phase: seen at the first slot after the change.
  const Time phase = h.PollPhase(h.Id("r01.tray01"));
  auto links = h.seen.Of<LinkStateChange>();
  REQUIRE(links.size() == 2);
  CHECK(links[0].second.component == gpu);
  CHECK(links[0].second.port == 5);
  CHECK_FALSE(links[0].second.up);
  CHECK(links[0].first > down_at);
  CHECK(links[0].first <= down_at + kSecond);
  CHECK((links[0].first - phase).us % kSecond.us == 0);
  CHECK(links[1].second.up);
  CHECK(links[1].first > Duration::Minutes(11));
  CHECK(links[1].first <= Duration::Minutes(11) + kSecond);

  // The driver logs Xid 145 (NVLink 5) on the tray's kernel log, shipped after 2 s.
  auto lines = h.seen.Of<KernelLogLine>();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].first == down_at + Duration::Seconds(2));
  CHECK(lines[0].second.node == h.Id("r01.tray01"));
  CHECK(Contains(lines[0].second.line, "NVRM: Xid (PCI:0000:41:00): 145, "));
  CHECK(Contains(lines[0].second.line, "Link 5 is down"));
}

TEST_CASE("link changes in the first seconds of a run are seen within one link poll period") {
  // Each tray's poll phase lies anywhere in the 10 s telemetry period; link counters are polled every
  // second on it, so even before a tray's first telemetry poll a change shows within 1 s.
  Harness h;
  h.sim.Start();
  const Time down_at = Duration::Millis(100);
  h.At(down_at, [&] {
    for (ComponentId tray : h.topo.trays()) CHECK(h.sim.SetNvlinkPort(h.topo.GpusOfTray(tray)[0], 0, false, 1).ok());
  });
  h.clock.RunUntil(Duration::Seconds(20));
  auto links = h.seen.Of<LinkStateChange>();
  REQUIRE(links.size() == 18);
  for (const auto& [at, link] : links) {
    CAPTURE(h.topo.at(link.component).name);
    CHECK(at > down_at);
    CHECK(at <= down_at + kSecond);
    CHECK((at - h.PollPhase(h.topo.TrayOf(link.component))).us % kSecond.us == 0);
  }
}

TEST_CASE("NVLink ports outside 0-17 and non-GPUs are refused") {
  Harness h;
  h.sim.Start();
  CHECK(h.sim.SetNvlinkPort(h.Id("r01.tray01.gpu0"), 18, false, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetNvlinkPort(h.Id("r01.tray01.gpu0"), -1, false, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetNvlinkPort(h.Id("r01.tray01.nic0"), 0, false, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.SetNicLink(h.Id("r01.tray01.gpu0"), false, 1).code() == StatusCode::kInvalidArgument);
  CHECK(h.events.events().empty());
}

TEST_CASE("a NIC link down hangs the job, back before the collective timeout, it resumes") {
  Harness h;
  JobId job = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  ComponentId nic = h.Id("r01.tray02.nic2");
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetNicLink(nic, false, 6).ok()); });
  h.At(Duration::Minutes(12), [&] { CHECK(h.sim.SetNicLink(nic, true, 6).ok()); });
  h.clock.RunUntil(Duration::Minutes(40));

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[1].first == Duration::Minutes(10));
  CHECK(changes[1].second.state == JobState::kHung);
  CHECK(changes[1].second.detail == "r01.tray02.nic2 link down");
  CHECK(changes[1].second.cause == 6);
  CHECK(changes[1].second.steps == doctest::Approx(60));
  CHECK(changes[2].first == Duration::Minutes(12));
  CHECK(changes[2].second.state == JobState::kRunning);
  CHECK(changes[2].second.detail == "collectives resumed");
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
  CHECK(h.sim.JobSteps(job) == doctest::Approx((40 - 2) * 6));  // 38 running minutes at 6 steps/min

  auto statuses = h.seen.Of<JobStatus>();
  REQUIRE(statuses.size() == 3);
  CHECK(statuses[1].second.state == JobState::kHung);
  CHECK(statuses[2].second.state == JobState::kRunning);

  auto links = h.seen.Of<LinkStateChange>();
  REQUIRE(links.size() == 2);
  CHECK(links[0].second.component == nic);
  CHECK(links[0].second.port == -1);
  CHECK_FALSE(links[0].second.up);
  CHECK(links[0].first > Duration::Minutes(10));
  CHECK(links[0].first <= Duration::Minutes(10) + kSecond);
}

TEST_CASE("a NIC link down past the collective timeout fails the job from its last checkpoint") {
  Harness h;
  JobId job = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetNicLink(h.Id("r01.tray02.nic2"), false, 6).ok()); });
  h.clock.RunUntil(Duration::Minutes(25));

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  const auto& [at, failed] = changes[2];
  CHECK(at == Duration::Minutes(20));
  CHECK(failed.state == JobState::kFailed);
  CHECK(Contains(failed.detail, "NCCL watchdog"));
  CHECK(failed.cause == 6);
  CHECK(failed.lost_work == Duration::Minutes(10));  // no checkpoint yet: all 10 running minutes
  CHECK(failed.steps == 0);
  CHECK(h.sim.JobStateOf(job) == JobState::kFailed);
  CHECK(h.sim.JobTrays(job).empty());

  auto statuses = h.seen.Of<JobStatus>();
  REQUIRE_FALSE(statuses.empty());
  CHECK(statuses.back().first == Duration::Minutes(20));
  CHECK(statuses.back().second.state == JobState::kFailed);
  CHECK(Contains(statuses.back().second.reason, "NCCL watchdog"));
}

// --------------------------------------------------------------------------- tray pulls and requeues

TEST_CASE("a pulled tray: heartbeats stop at the first missed slot, the job hangs, a requeue moves it") {
  Harness h;
  JobConfig cfg = Job(8);
  cfg.checkpoint_write = Duration::Seconds(40);
  JobId job = h.sim.AddJob(cfg).value();
  CHECK(h.sim.Drain(h.Id("r01.tray03"), "maintenance").ok());
  h.sim.Start();
  REQUIRE(h.sim.JobTrays(job) == Trays(h, {"r01.tray01", "r01.tray02"}));
  ComponentId tray = h.Id("r01.tray02");
  const Time pull = Duration::Minutes(45) + Duration::Millis(1500);
  const Time requeue = Duration::Minutes(47);
  const Time reinsert = Duration::Minutes(48);
  h.At(pull, [&] { CHECK(h.sim.SetTrayPresent(tray, false, 9).ok()); });
  h.At(requeue, [&] { CHECK(h.sim.RequeueJob(job, "tray lost").ok()); });
  h.At(reinsert, [&] { CHECK(h.sim.SetTrayPresent(tray, true, 9).ok()); });
  h.clock.RunUntil(Duration::Hours(1));

  // Heartbeats: the first beat that does not come, carrying the last one that did.
  auto beats = h.seen.Of<HeartbeatChange>();
  REQUIRE(beats.size() == 2);
  const auto& [lost_at, lost] = beats[0];
  CHECK(lost.node == tray);
  CHECK_FALSE(lost.alive);
  CHECK(lost.period == Duration::Seconds(10));
  CHECK(lost_at == lost.last_seen + lost.period);
  CHECK(lost.last_seen <= pull);
  CHECK(lost_at > pull);
  // Back after the 5 min boot, on the same phase.
  const auto& [back_at, back] = beats[1];
  CHECK(back.node == tray);
  CHECK(back.alive);
  CHECK(back_at > reinsert + Duration::Minutes(5));
  CHECK(back_at <= reinsert + Duration::Minutes(5) + lost.period);
  CHECK((back_at - lost.last_seen).us % lost.period.us == 0);
  CHECK(h.Physics("booted").size() == 4);
  CHECK(h.Physics("booted")[0].first == reinsert + Duration::Minutes(5));
  for (ComponentId g : h.topo.GpusOfTray(tray)) CHECK(h.sim.GpuAlive(g));

  CHECK(h.Physics("removed", tray).size() == 1);
  CHECK(h.Physics("lost").size() == 4);

  // The 30 min checkpoint (180 steps) was acknowledged at 30m40s.
  auto ckpts = h.Checkpoints();
  REQUIRE_FALSE(ckpts.empty());
  CHECK(ckpts[0].first == Duration::Minutes(30) + Duration::Seconds(40));
  CHECK(ckpts[0].second.step == doctest::Approx(180));

  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 5);
  CHECK(changes[1].first == pull);
  CHECK(changes[1].second.state == JobState::kHung);
  CHECK(changes[1].second.detail == "r01.tray02.gpu0 is gone");
  CHECK(changes[1].second.cause == 9);
  // Requeued: the work since the 30 min snapshot is lost, progress goes back to 180 steps.
  CHECK(changes[2].first == requeue);
  CHECK(changes[2].second.state == JobState::kQueued);
  CHECK(changes[2].second.lost_work == Duration::Minutes(15) + Duration::Millis(1500));
  CHECK(changes[2].second.steps == doctest::Approx(180));
  CHECK(changes[2].second.detail == "requeued: tray lost");
  // Placed at once on the first free trays: its healthy tray01 again, then tray04, skipping the
  // pulled tray02 and the drained tray03.
  const auto moved = Trays(h, {"r01.tray01", "r01.tray04"});
  CHECK(changes[3].first == requeue);
  CHECK(changes[3].second.state == JobState::kRestarting);
  CHECK(changes[3].second.trays == moved);
  CHECK(changes[4].first == requeue + cfg.restart_overhead);
  CHECK(changes[4].second.state == JobState::kRunning);
  CHECK(changes[4].second.steps == doctest::Approx(180));
  CHECK(changes[4].second.trays == moved);
  CHECK(h.sim.JobTrays(job) == moved);
  // 8 minutes of running since the restart at 52 min.
  CHECK(h.sim.JobSteps(job) == doctest::Approx(180 + 8 * 6));
}

TEST_CASE("with too few free trays a requeued job waits until Resume frees one") {
  Harness h;
  JobId job = h.sim.AddJob(Job(64)).value();  // 16 trays: all regular ones
  h.sim.Start();
  REQUIRE(h.sim.JobTrays(job).size() == 16);
  CHECK(h.sim.Drain(h.Id("r01.tray17"), "suspect").ok());
  CHECK(h.sim.Drain(h.Id("r01.tray18"), "suspect").ok());
  h.At(Duration::Minutes(10), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r01.tray05"), false, 2).ok()); });
  h.At(Duration::Minutes(11), [&] { CHECK(h.sim.RequeueJob(job, "tray lost").ok()); });
  h.clock.RunUntil(Duration::Minutes(20));

  CHECK(h.sim.JobStateOf(job) == JobState::kQueued);
  CHECK(h.sim.JobTrays(job).empty());
  CHECK(h.JobChanges(job).back().second.state == JobState::kQueued);

  CHECK(h.sim.Resume(h.Id("r01.tray17")).ok());
  CHECK(h.sim.JobStateOf(job) == JobState::kRestarting);
  h.clock.RunUntil(Duration::Minutes(30));
  CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
  const auto& trays = h.sim.JobTrays(job);
  REQUIRE(trays.size() == 16);
  for (ComponentId t : trays) {
    CHECK(t != h.Id("r01.tray05"));
    CHECK(t != h.Id("r01.tray18"));
  }
  CHECK(trays.back() == h.Id("r01.tray17"));
}

TEST_CASE("a tray pulled again while booting boots in full after its last insertion") {
  Harness h;
  h.sim.Start();
  ComponentId tray = h.Id("r01.tray10");
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetTrayPresent(tray, false, 1).ok()); });
  h.At(Duration::Minutes(2), [&] { CHECK(h.sim.SetTrayPresent(tray, true, 1).ok()); });
  h.At(Duration::Minutes(3), [&] { CHECK(h.sim.SetTrayPresent(tray, false, 1).ok()); });
  h.At(Duration::Minutes(4), [&] { CHECK(h.sim.SetTrayPresent(tray, true, 1).ok()); });
  h.clock.RunUntil(Duration::Minutes(8) + Duration::Seconds(59));
  CHECK(h.Physics("booted").empty());
  CHECK_FALSE(h.sim.GpuAlive(h.Id("r01.tray10.gpu0")));
  h.clock.RunUntil(Duration::Minutes(30));
  auto booted = h.Physics("booted");
  REQUIRE(booted.size() == 4);
  CHECK(booted[0].first == Duration::Minutes(9));
  // Beats stopped once (the second pull found them stopped already) and resumed once.
  auto beats = h.seen.Of<HeartbeatChange>();
  REQUIRE(beats.size() == 2);
  CHECK_FALSE(beats[0].second.alive);
  CHECK(beats[1].second.alive);
  CHECK(beats[1].first > Duration::Minutes(9));
  // Booted and idle, the GPUs settle where idle GPUs do, drawing idle power.
  CHECK(h.sim.GpuTemperature(h.Id("r01.tray10.gpu0")) ==
        doctest::Approx(Steady(h.model(), h.model().gpu_idle_w, 1.0)).epsilon(1e-9));
}

TEST_CASE("jobs: bad configurations are refused, requeueing a queued job changes nothing") {
  Harness h;
  JobConfig too_big = Job(73);
  CHECK(h.sim.AddJob(too_big).status().code() == StatusCode::kInvalidArgument);
  CHECK(h.sim.AddJob(Job(0)).status().code() == StatusCode::kInvalidArgument);
  JobConfig shares = Job(4);
  shares.nvlink_share = 0.6;
  shares.scaleout_share = 0.4;
  CHECK(h.sim.AddJob(shares).status().code() == StatusCode::kInvalidArgument);

  JobId job = h.sim.AddJob(Job(72)).value();  // every tray, but one is drained
  CHECK(h.sim.Drain(h.Id("r01.tray01"), "suspect").ok());
  h.sim.Start();
  CHECK(h.sim.JobStateOf(job) == JobState::kQueued);
  CHECK(h.sim.RequeueJob(job, "again").ok());
  CHECK(h.sim.JobStateOf(job) == JobState::kQueued);
  CHECK(h.events.events().empty());
  CHECK(h.sim.RequeueJob(job + 1, "no such job").code() == StatusCode::kNotFound);
}

// --------------------------------------------------------------------------- checkpoints

TEST_CASE("checkpoints every 30 min are acknowledged 40 s after the snapshot") {
  Harness h;
  JobConfig cfg = Job(4);
  cfg.checkpoint_write = Duration::Seconds(40);
  h.sim.AddJob(cfg).value();
  h.sim.Start();
  h.clock.RunUntil(Duration::Hours(2));
  auto ckpts = h.Checkpoints();
  REQUIRE(ckpts.size() == 3);  // the 2 h snapshot is not acknowledged yet
  for (int k = 0; k < 3; ++k) {
    CHECK(ckpts[k].first == Duration::Minutes(30 * (k + 1)) + Duration::Seconds(40));
    CHECK(ckpts[k].second.step == doctest::Approx(180.0 * (k + 1)));  // steps at the snapshot
  }
}

TEST_CASE("a hang between snapshot and acknowledgment loses that checkpoint") {
  Harness h;
  JobConfig cfg = Job(4);
  cfg.checkpoint_write = Duration::Seconds(40);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId nic = h.Id("r01.tray01.nic0");
  const Time hang = Duration::Minutes(30) + Duration::Seconds(20);
  h.At(hang, [&] { CHECK(h.sim.SetNicLink(nic, false, 3).ok()); });

  SUBCASE("resumed: the next snapshot comes after 30 min of running, not of wall time") {
    h.At(Duration::Minutes(31), [&] { CHECK(h.sim.SetNicLink(nic, true, 3).ok()); });
    h.clock.RunUntil(Duration::Minutes(70));
    auto ckpts = h.Checkpoints();
    REQUIRE(ckpts.size() == 1);
    // 29m40s of interval left at the hang, resumed at 31m: snapshot at 1h0m40s, acked 40 s later,
    // with 60 running minutes behind it.
    CHECK(ckpts[0].first == Duration::Minutes(61) + Duration::Seconds(20));
    CHECK(ckpts[0].second.step == doctest::Approx(360));
  }
  SUBCASE("requeued: everything since the start is lost") {
    h.At(Duration::Minutes(31), [&] { CHECK(h.sim.RequeueJob(job, "link down").ok()); });
    h.clock.RunUntil(Duration::Minutes(32));
    CHECK(h.Checkpoints().empty());
    auto changes = h.JobChanges(job);
    REQUIRE(changes.size() >= 3);
    CHECK(changes[2].second.state == JobState::kQueued);
    CHECK(changes[2].second.lost_work == hang);
    CHECK(changes[2].second.steps == 0);
  }
}

// --------------------------------------------------------------------------- diagnostics

TEST_CASE("diagnostics pass on a healthy tray and name what is wrong on a broken one") {
  Harness h;
  h.sim.Start();
  h.At(Duration::Minutes(10), [&] {
    CHECK(h.sim.SetPowerCap(h.Id("r01.tray04.gpu1"), 600, 1).ok());
    CHECK(h.sim.SetTrayPresent(h.Id("r01.tray05"), false, 2).ok());
    CHECK(h.sim.SetValveOpening(h.Id("r01.tray06.valve"), 0, 3).ok());
    CHECK(h.sim.SetNvlinkPort(h.Id("r01.tray07.gpu3"), 11, false, 4).ok());
    CHECK(h.sim.SetNicLink(h.Id("r01.tray09.nic1"), false, 5).ok());
    for (const char* t : {"r01.tray03", "r01.tray04", "r01.tray05", "r01.tray06", "r01.tray07", "r01.tray09"})
      CHECK(h.sim.RunDiagnostic(h.Id(t)).ok());
  });
  h.clock.RunUntil(Duration::Minutes(11) + Duration::Seconds(59));
  CHECK(h.seen.Of<DiagnosticResult>().empty());
  h.clock.RunUntil(Duration::Minutes(13));
  auto results = h.seen.Of<DiagnosticResult>();
  REQUIRE(results.size() == 6);
  for (const auto& [at, r] : results) CHECK(at == Duration::Minutes(12));
  CHECK(results[0].second.tray == h.Id("r01.tray03"));
  CHECK(results[0].second.passed);
  CHECK(results[0].second.detail == "all checks passed");
  const char* const expected[] = {
      "r01.tray04.gpu1 below expected performance (power limited)",
      "node unreachable",
      "thermal test failed: GPUs throttle under load (coolant flow low)",
      "r01.tray07.gpu3 has inactive NVLink ports",
      "a NIC link is down",
  };
  for (size_t k = 1; k < results.size(); ++k) {
    CHECK_FALSE(results[k].second.passed);
    CHECK(results[k].second.detail == expected[k - 1]);
  }
  CHECK(h.sim.RunDiagnostic(h.Id("r01.tray03.gpu0")).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rackchaos::cluster
