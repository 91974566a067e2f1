// The healer end to end on a recording fake backend: detect, isolate, restart, diagnose, resume, and
// the circuit breaker. Assertions are on the recorded event sequence and the backend calls, with times.
#include "healer/healer.h"

#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <vector>

#include "cluster/kernel_log.h"
#include "tests/healer/healer_rig.h"

namespace rackchaos::healer {
namespace {

using testing::Id;
using testing::Min;
using testing::Sec;
using testing::Topo;
using testing::FakeBackend;
using testing::Rig;

TEST_CASE("healer.healer: a lost tray is isolated, its job restarted, rechecked, burnt in and returned") {
  Rig rig;
  const ComponentId x = Id("r01.tray03"), y = Id("r01.tray04");
  rig.backend.verdicts = {false, true, true};
  rig.Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {x, y}, ""});
  rig.Feed(Sec(110), cluster::HeartbeatChange{x, false, Sec(100), Sec(10)});

  rig.clock.RunUntil(Sec(149));
  CHECK_FALSE(rig.healer.IsIsolated(x));  // detected at 130 s, still inside the correlation window
  rig.clock.RunUntil(Sec(150));
  CHECK(rig.healer.IsIsolated(x));
  CHECK_FALSE(rig.healer.IsIsolated(y));
  rig.clock.RunUntil(Min(58));
  CHECK(rig.healer.IsIsolated(x));
  rig.clock.RunUntil(Min(59));
  CHECK_FALSE(rig.healer.IsIsolated(x));

  // 130 s = last beat 100 s + 3 x 10 s; isolation 20 s later; diagnose 10 min after isolation, again
  // 10 min after the failed result (which takes the fake 2 min); that pass follows a failure, so a
  // 30 min burn-in follows, and a second pass returns the tray.
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "2m10s detected #1 heartbeat r01.tray03",
                              "2m30s isolated r01.tray03 compute_tray #1",
                              "2m30s drain r01.tray03",
                              "2m30s requeue_job - job 0",
                              "12m30s diagnose r01.tray03",
                              "14m30s quarantine r01.tray03",
                              "24m30s diagnose r01.tray03",
                              "26m30s burn_in r01.tray03",
                              "56m30s diagnose r01.tray03",
                              "58m30s resume r01.tray03",
                          });
  using Call = FakeBackend::Call;
  CHECK(rig.backend.calls == std::vector<Call>{{Sec(150), "drain r01.tray03"},
                                               {Sec(150), "requeue 0"},
                                               {Sec(750), "diagnose r01.tray03"},
                                               {Sec(1470), "diagnose r01.tray03"},
                                               {Sec(1590 + 1800), "diagnose r01.tray03"},
                                               {Sec(1710 + 1800), "resume r01.tray03"}});
  REQUIRE(rig.backend.drain_reasons.size() == 1);
  CHECK(rig.backend.drain_reasons[0] == "rackchaos: r01.tray03: node stopped answering");
  const auto& iso = std::get<Isolated>(rig.log.events()[1].body);
  CHECK(iso.reason == "node stopped answering");
  const auto& quarantine = std::get<ActionTaken>(rig.log.events()[5].body);
  CHECK(quarantine.detail == "diagnostic failed (memory test failed); next check in 10m");
}

TEST_CASE("healer.healer: symptoms on an isolated tray are recorded but decide nothing new") {
  Rig rig;
  const ComponentId x = Id("r01.tray03");
  rig.Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {x}, ""});
  rig.LoseHeartbeat(Sec(10), "r01.tray03");
  rig.clock.RunUntil(Sec(60));
  REQUIRE(rig.healer.IsIsolated(x));
  cluster::XidLine xid{"0000:41:00", 48, std::nullopt, "", "", false};
  rig.Feed(Sec(70), cluster::KernelLogLine{x, cluster::FormatXidLine(xid, cluster::LogStyle::kDmesg, 70, "")});
  rig.clock.RunUntil(Sec(200));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "30s detected #1 heartbeat r01.tray03",
                              "50s isolated r01.tray03 compute_tray #1",
                              "50s drain r01.tray03",
                              "50s requeue_job - job 0",
                              "1m10s detected #2 xid r01.tray03.gpu2",
                          });
}

TEST_CASE("healer.healer: an Xid asking for a reset resets that GPU once, before the first diagnostic") {
  Policy p = testing::Shipped("default");
  p.wait_for_repair = false;  // poll every recheck, no burn-in: as the aggressive policy does
  p.burn_in = {};
  Rig rig(p);
  const ComponentId tray = Id("r02.tray06");
  rig.backend.verdicts = {false, true};
  cluster::XidLine xid{"0000:02:00", 48, 99, "python", "", false};
  rig.Feed(Sec(5), cluster::KernelLogLine{tray, cluster::FormatXidLine(xid, cluster::LogStyle::kJournal, 5, "n")});
  rig.clock.RunUntil(Min(60));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "5s detected #1 xid r02.tray06.gpu1",
                              "25s isolated r02.tray06.gpu1 gpu #1",
                              "25s drain r02.tray06",
                              "10m25s gpu_reset r02.tray06.gpu1",
                              "10m25s diagnose r02.tray06",
                              "12m25s quarantine r02.tray06",
                              "22m25s diagnose r02.tray06",
                              "24m25s resume r02.tray06",
                          });
  CHECK(rig.backend.calls[1] == FakeBackend::Call{Sec(625), "reset r02.tray06.gpu1"});
}

TEST_CASE("healer.healer: application-level Xids are recorded but isolate no hardware") {
  Rig rig;
  const ComponentId tray = Id("r01.tray02");
  for (int code : {13, 31, 43, 45}) {
    cluster::XidLine xid{"0000:01:00", code, 77, "python", "", false};
    rig.Feed(Sec(code), cluster::KernelLogLine{tray, cluster::FormatXidLine(xid, cluster::LogStyle::kDmesg, code, "")});
  }
  rig.clock.RunUntil(Min(30));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "13s detected #1 xid r01.tray02.gpu0",
                              "31s detected #2 xid r01.tray02.gpu0",
                              "43s detected #3 xid r01.tray02.gpu0",
                              "45s detected #4 xid r01.tray02.gpu0",
                          });
  CHECK(rig.backend.calls.empty());
}

TEST_CASE("healer.healer: a failed job is requeued at once, without waiting for a window") {
  Rig rig;
  rig.Feed(Sec(0), cluster::JobStatus{2, JobState::kRunning, {Id("r01.tray01")}, ""});
  rig.Feed(Sec(42), cluster::JobStatus{2, JobState::kFailed, {}, "NCCL watchdog timeout"});
  CHECK(rig.Timeline() == std::vector<std::string>{"42s detected #1 job_failure -", "42s requeue_job - job 2"});
  rig.clock.RunUntil(Min(30));
  CHECK(rig.log.events().size() == 2);
  CHECK(rig.backend.calls == std::vector<FakeBackend::Call>{{Sec(42), "requeue 2"}});
}

TEST_CASE("healer.healer: a link that comes back inside the correlation window isolates nothing") {
  Rig rig;
  const ComponentId nic = Id("r01.tray03.nic1");
  rig.Feed(Sec(10), cluster::LinkStateChange{nic, -1, false});
  rig.Feed(Sec(15), cluster::LinkStateChange{nic, -1, true});
  rig.clock.RunUntil(Min(10));
  CHECK(rig.Timeline() == std::vector<std::string>{"10s detected #1 link_state r01.tray03.nic1"});
  CHECK(rig.backend.calls.empty());

  // Down for longer than the window: the NIC's tray is drained.
  rig.Feed(Min(11), cluster::LinkStateChange{nic, -1, false});
  rig.Feed(Min(11) + Sec(21), cluster::LinkStateChange{nic, -1, true});
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "10s detected #1 link_state r01.tray03.nic1",
                              "11m detected #2 link_state r01.tray03.nic1",
                              "11m20s isolated r01.tray03.nic1 nic #2",
                              "11m20s drain r01.tray03",
                          });
}

TEST_CASE("healer.healer: the circuit breaker refuses the isolation that would pass 10% of the GPUs") {
  Policy p = testing::Shipped("default");
  p.breaker_max_share = 0.10;
  Rig rig(p);  // 144 GPUs x 10% = 14.4: three trays (12 GPUs) fit, a fourth (16) does not
  rig.LoseHeartbeat(Min(10), "r01.tray01");
  rig.LoseHeartbeat(Min(20), "r01.tray05");
  rig.LoseHeartbeat(Min(30), "r02.tray02");
  rig.LoseHeartbeat(Min(40), "r02.tray07");
  rig.clock.RunUntil(Min(50));

  CHECK(rig.healer.IsIsolated(Id("r01.tray01")));
  CHECK(rig.healer.IsIsolated(Id("r01.tray05")));
  CHECK(rig.healer.IsIsolated(Id("r02.tray02")));
  CHECK_FALSE(rig.healer.IsIsolated(Id("r02.tray07")));
  int drains = 0, isolations = 0;
  for (const auto& c : rig.backend.calls) drains += c.what.starts_with("drain ");
  for (const Event& e : rig.log.events()) isolations += std::holds_alternative<Isolated>(e.body);
  CHECK(drains == 3);
  CHECK(isolations == 3);
  std::vector<std::pair<Time, ActionTaken>> alerts;
  for (const Event& e : rig.log.events())
    if (const auto* a = std::get_if<ActionTaken>(&e.body); a && a->action == "alert") alerts.push_back({e.at, *a});
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].first == Min(40) + Sec(40));  // last beat 39m50s + 30 s + 20 s window
  const ActionTaken* alert = &alerts[0].second;
  CHECK(alert->component == kNoComponent);
  CHECK(alert->detail ==
        "circuit breaker open: isolating r02.tray07 would take 16 GPUs out within 1h (limit 14)");

  // An hour after the first isolation its GPUs leave the window and a new isolation fits again.
  rig.LoseHeartbeat(Min(75), "r02.tray09");
  rig.clock.RunUntil(Min(77));
  CHECK(rig.healer.IsIsolated(Id("r02.tray09")));
}

TEST_CASE("healer.healer: symptoms of one failure inside the correlation window are explained together") {
  Rig rig;
  // Three trays of r01 lose their heartbeat within 15 s: one rack decision, which the breaker refuses
  // (72 GPUs of 144), rather than three tray isolations.
  rig.LoseHeartbeat(Sec(100), "r01.tray01");
  rig.LoseHeartbeat(Sec(105), "r01.tray02");
  rig.LoseHeartbeat(Sec(115), "r01.tray03");
  rig.clock.RunUntil(Min(10));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "2m detected #1 heartbeat r01.tray01",
                              "2m5s detected #2 heartbeat r01.tray02",
                              "2m15s detected #3 heartbeat r01.tray03",
                              "2m20s alert -",
                          });
  CHECK(rig.backend.calls.empty());

  // With a breaker that allows it, the whole rack is drained, trays in order, spares included.
  Policy open = testing::Shipped("default");
  open.breaker_max_share = 1.0;
  Rig wide(open);
  wide.LoseHeartbeat(Sec(100), "r01.tray01");
  wide.LoseHeartbeat(Sec(105), "r01.tray02");
  wide.LoseHeartbeat(Sec(115), "r01.tray03");
  wide.clock.RunUntil(Min(5));
  const auto& iso = std::get<Isolated>(wide.log.events()[3].body);
  CHECK(iso.component == Id("r01"));
  CHECK(iso.domain == "rack");
  CHECK(iso.because == std::vector<DetectionId>{1, 2, 3});
  REQUIRE(wide.backend.calls.size() == 18);
  CHECK(wide.backend.calls.front().what == "drain r01.tray01");
  CHECK(wide.backend.calls.back().what == "drain r01.tray18");
}

}  // namespace
}  // namespace rackchaos::healer
