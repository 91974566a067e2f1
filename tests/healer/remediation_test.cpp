// The way back from isolation: node reboot for an Xid that asks for it, waiting for a repair of the
// isolated domain's class, burn-in after a repair, and how the three shipped policies differ there.
// Assertions are on the recorded event sequence, with times, on the recording fake backend.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster/kernel_log.h"
#include "tests/healer/healer_rig.h"

namespace rackchaos::healer {
namespace {

using testing::FakeBackend;
using testing::Id;
using testing::Min;
using testing::Rig;
using testing::Sec;
using testing::Shipped;

// Xid `code` from the GPU at PCI 0000:02:00 (gpu1) of r02.tray06, at 5 s.
void FeedXid(Rig& rig, int code) {
  cluster::XidLine xid{"0000:02:00", code, 99, "python", "", false};
  rig.Feed(Sec(5), cluster::KernelLogLine{Id("r02.tray06"), cluster::FormatXidLine(xid, cluster::LogStyle::kDmesg, 5, "")});
}

// The action details of the recorded ActionTaken events named `action`.
std::vector<std::string> Details(const Rig& rig, const std::string& action) {
  std::vector<std::string> out;
  for (const Event& e : rig.log.events())
    if (const auto* a = std::get_if<ActionTaken>(&e.body); a && a->action == action) out.push_back(a->detail);
  return out;
}

TEST_CASE("healer.remediation: Xid 79 reboots the node, then diagnoses it after reboot_wait") {
  Rig rig;
  rig.backend.verdicts = {true};
  FeedXid(rig, 79);
  rig.clock.RunUntil(Min(60));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "5s detected #1 xid r02.tray06.gpu1",
                              "25s isolated r02.tray06.gpu1 gpu #1",
                              "25s drain r02.tray06",
                              "10m25s reboot r02.tray06",
                              "20m25s diagnose r02.tray06",
                              "22m25s resume r02.tray06",
                          });
  CHECK(Details(rig, "reboot") == std::vector<std::string>{"Xid asked for a node reboot; diagnostic in 10m"});
}

TEST_CASE("healer.remediation: without a reboot verb or with reboot off the tray is diagnosed at once") {
  Rig no_verb;
  no_verb.backend.can_reboot = false;
  Policy off = Shipped("default");
  off.reboot = false;
  Rig no_policy(off);
  for (Rig* rig : {&no_verb, &no_policy}) {
    rig->backend.verdicts = {true};
    FeedXid(*rig, 79);
    rig->clock.RunUntil(Min(60));
    CHECK(rig->Timeline() == std::vector<std::string>{
                                 "5s detected #1 xid r02.tray06.gpu1",
                                 "25s isolated r02.tray06.gpu1 gpu #1",
                                 "25s drain r02.tray06",
                                 "10m25s diagnose r02.tray06",
                                 "12m25s resume r02.tray06",
                             });
  }
}

// A tray whose drain failed is quarantined all the same (diagnosed, no reset or reboot), but it never left
// service: when its diagnostic passes it is not resumed, and the end of a run does not return it either
// (HoldsDrained, runner/engine/engine.cpp). Before, both "returned" it as if the drain had happened.
TEST_CASE("healer.remediation: a tray whose drain failed is not resumed: it never left service") {
  Rig rig;
  rig.backend.fail_drain = true;
  rig.backend.verdicts = {true};
  FeedXid(rig, 48);
  rig.clock.RunUntil(Min(1));
  REQUIRE(rig.healer.IsIsolated(Id("r02.tray06")));
  CHECK_FALSE(rig.healer.HoldsDrained(Id("r02.tray06")));
  rig.clock.RunUntil(Min(60));
  CHECK_FALSE(rig.healer.IsIsolated(Id("r02.tray06")));
  for (const FakeBackend::Call& c : rig.backend.calls) CHECK(c.what.rfind("resume", 0) != 0);
  CHECK(Details(rig, "resume").empty());
  CHECK(Details(rig, "alert").back() ==
        "diagnostic passed: all tests passed; not resumed: its drain failed, so it never left service");
  // A tray that did drain is held, and resumed once its diagnostic passes.
  Rig drained;
  drained.backend.verdicts = {true};
  FeedXid(drained, 48);
  drained.clock.RunUntil(Min(1));
  CHECK(drained.healer.HoldsDrained(Id("r02.tray06")));
  drained.clock.RunUntil(Min(60));
  CHECK(Details(drained, "resume").size() == 1);
}

// A drain refused at isolation (Slurm busy, the controller briefly out of reach) is tried once more at the
// recheck; when it takes, the job on it is requeued again (its first requeue, at isolation, could bring it
// back to the undrained tray, and the healer has seen nothing move it since) and the way back goes on as if
// it had drained at once: the reboot its Xid asked for, the diagnostic, the resume. Before, the tray stayed
// in service with its failed GPU for the rest of the run and was never rebooted.
TEST_CASE("healer.remediation: a drain that failed at isolation is retried at the recheck") {
  Rig rig;
  rig.backend.drains_to_fail = 1;
  rig.backend.verdicts = {true};
  rig.Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {Id("r02.tray06")}, ""});
  FeedXid(rig, 79);
  rig.clock.RunUntil(Min(1));
  CHECK_FALSE(rig.healer.HoldsDrained(Id("r02.tray06")));
  rig.clock.RunUntil(Min(60));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "5s detected #1 xid r02.tray06.gpu1",
                              "25s isolated r02.tray06.gpu1 gpu #1",
                              "25s drain r02.tray06 FAILED",
                              "25s requeue_job - job 0",
                              "10m25s drain r02.tray06",
                              "10m25s requeue_job - job 0",
                              "10m25s reboot r02.tray06",
                              "20m25s diagnose r02.tray06",
                              "22m25s resume r02.tray06",
                          });
  CHECK(Details(rig, "drain").back() ==
        "isolating r02.tray06.gpu1 (its drain at isolation failed; retried at the recheck)");
  CHECK(Details(rig, "alert").empty());
  // Refused again, the tray stays as it was: diagnosed, never resumed, and the retry was the only one.
  Rig refused;
  refused.backend.fail_drain = true;
  refused.backend.verdicts = {true};
  FeedXid(refused, 48);
  refused.clock.RunUntil(Min(60));
  CHECK(Details(refused, "drain").size() == 2);
  CHECK(Details(refused, "resume").empty());
}

TEST_CASE("healer.remediation: no reset or reboot on a tray that did not drain or still runs a job") {
  // Xid 79 (reboot) and Xid 48 (reset) on r02.tray06. A reboot or a reset would kill what still runs there
  // (a real `nvidia-smi -r` refuses a GPU with processes): the healer diagnoses the tray as it is and says why.
  Rig undrained;
  undrained.backend.fail_drain = true;
  Rig unmoved;
  unmoved.backend.fail_requeue = true;
  Policy no_restart = Shipped("default");
  no_restart.restart_jobs = false;
  Rig kept(no_restart);
  for (Rig* rig : {&undrained, &unmoved, &kept}) {
    rig->backend.verdicts = {true};
    if (rig != &undrained) rig->Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {Id("r02.tray06")}, ""});
    FeedXid(*rig, 79);
    rig->clock.RunUntil(Min(60));
    for (const FakeBackend::Call& c : rig->backend.calls) CHECK(c.what.rfind("reboot", 0) != 0);
    const std::vector<std::string> alerts = Details(*rig, "alert");
    REQUIRE(alerts.size() == (rig == &undrained ? 2 : 1));
    CHECK(alerts[0].starts_with("no reboot: the tray did not drain or a job still runs on it"));
    // The tray whose drain failed never left service: it is not resumed (healer.remediation below).
    CHECK(rig->Timeline().back() == (rig == &undrained ? "12m25s alert r02.tray06" : "12m25s resume r02.tray06"));
  }
  // The same for a GPU reset (Xid 48): the job could not be requeued, so the GPU is not reset.
  Rig reset;
  reset.backend.fail_requeue = true;
  reset.backend.verdicts = {true};
  reset.Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {Id("r02.tray06")}, ""});
  FeedXid(reset, 48);
  reset.clock.RunUntil(Min(60));
  for (const FakeBackend::Call& c : reset.backend.calls) CHECK(c.what.rfind("reset", 0) != 0);
  REQUIRE(Details(reset, "alert").size() == 1);
  CHECK(Details(reset, "alert")[0].starts_with("no gpu_reset: "));
  // And with the job moved the reset runs: the guard is the precondition, not a blanket refusal.
  Rig moved;
  moved.backend.verdicts = {true};
  moved.Feed(Sec(0), cluster::JobStatus{0, JobState::kRunning, {Id("r02.tray06")}, ""});
  FeedXid(moved, 48);
  moved.clock.RunUntil(Min(60));
  CHECK(Details(moved, "alert").empty());
  CHECK(Details(moved, "gpu_reset") == std::vector<std::string>{"Xid asked for a reset"});
}

// The default policy's repair times with wait_for_repair switched on (it is off in the shipped file).
Policy DefaultWaiting() {
  Policy p = Shipped("default");
  p.wait_for_repair = true;
  return p;
}

TEST_CASE("healer.remediation: a failed diagnostic waits for the repair time of the isolated class") {
  // A NIC isolation: repair.nic is 2h in the default policy and 3h in the conservative one; a GPU
  // isolation waits repair.gpu (4h).
  struct Case {
    const char* policy;
    bool nic;
    const char* wait;
  };
  for (const Case& c : {Case{"default", true, "2h"}, Case{"conservative", true, "3h"}, Case{"default", false, "4h"}}) {
    CAPTURE(c.policy);
    CAPTURE(c.nic);
    Rig rig(std::string(c.policy) == "default" ? DefaultWaiting() : Shipped(c.policy));
    rig.backend.verdicts = {false, true, true};
    if (c.nic) rig.Feed(Sec(5), cluster::LinkStateChange{Id("r02.tray06.nic1"), -1, false});
    else FeedXid(rig, 48);  // double-bit ECC: reset the GPU
    rig.clock.RunUntil(Duration::Hours(12));
    std::vector<std::string> waits = Details(rig, "wait_repair");
    REQUIRE(waits.size() == 1);
    std::string cls = c.nic ? "nic" : "gpu";
    CHECK(waits[0] == "diagnostic failed (memory test failed); " + cls + " repair, next check in " + c.wait +
                          " (repair." + cls + ")");
    CHECK_FALSE(rig.healer.IsIsolated(Id("r02.tray06")));
    CHECK(Details(rig, "burn_in").size() == 1);
    CHECK(Details(rig, "resume").size() == 1);
  }
}

TEST_CASE("healer.remediation: the aggressive policy polls a failed tray and returns it without burn-in") {
  Rig rig(Shipped("aggressive"));
  rig.backend.verdicts = {false, false, true};
  rig.Feed(Sec(5), cluster::LinkStateChange{Id("r02.tray06.nic1"), -1, false});
  rig.clock.RunUntil(Min(60));
  // Link down at 5 s, the aggressive 5 s window, recheck 5 min, then every 5 min after a 2 min failure.
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "5s detected #1 link_state r02.tray06.nic1",
                              "10s isolated r02.tray06.nic1 nic #1",
                              "10s drain r02.tray06",
                              "5m10s diagnose r02.tray06",
                              "7m10s quarantine r02.tray06",
                              "12m10s diagnose r02.tray06",
                              "14m10s quarantine r02.tray06",
                              "19m10s diagnose r02.tray06",
                              "21m10s resume r02.tray06",
                          });
}

TEST_CASE("healer.remediation: a burn-in that fails sends the tray back to quarantine and needs a new burn-in") {
  Rig rig(DefaultWaiting());
  rig.backend.verdicts = {false, true, false, true, true};
  rig.LoseHeartbeat(Sec(100), "r01.tray03");
  rig.clock.RunUntil(Duration::Hours(8));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "2m detected #1 heartbeat r01.tray03",
                              "2m20s isolated r01.tray03 compute_tray #1",
                              "2m20s drain r01.tray03",
                              "12m20s diagnose r01.tray03",
                              "14m20s wait_repair r01.tray03",
                              "4h14m20s diagnose r01.tray03",
                              "4h16m20s burn_in r01.tray03",
                              "4h46m20s diagnose r01.tray03",
                              "4h48m20s quarantine r01.tray03",  // the repair is not waited for twice
                              "4h58m20s diagnose r01.tray03",
                              "5h20s burn_in r01.tray03",
                              "5h30m20s diagnose r01.tray03",
                              "5h32m20s resume r01.tray03",
                          });
}

// GPUs shut down by heat (the CDU off) fall off the bus; a reboot brings them back only once the coolant flows.
TEST_CASE("healer.remediation: a reboot done while the coolant was low is retried once it flows - once") {
  const ComponentId valve = testing::Topo().ValveOfTray(Id("r02.tray06"));
  REQUIRE(valve != kNoComponent);
  auto flow = [valve](Rig& r, int s, double l_per_min) {
    r.Feed(Sec(s), cluster::TelemetrySample{valve, cluster::Metric::kCoolantFlow, l_per_min});
  };
  const double nominal = testing::Topo().model().tray_flow_l_per_min;
  Rig rig;
  rig.backend.off_bus = true;
  rig.backend.fail_detail = "r02.tray06.gpu1 not on the bus";
  rig.backend.verdicts = {false, false, true, true};
  flow(rig, 1, 0);  // one low reading: no symptom by itself (two are needed), but the healer remembers it
  FeedXid(rig, 79);
  flow(rig, 30 * 60, nominal);  // the CDU is back at 30 min
  rig.clock.RunUntil(Duration::Hours(3));
  CHECK(rig.Timeline() == std::vector<std::string>{
                              "5s detected #1 xid r02.tray06.gpu1",
                              "25s isolated r02.tray06.gpu1 gpu #1",
                              "25s drain r02.tray06",
                              "10m25s reboot r02.tray06",  // too early: no coolant
                              "20m25s diagnose r02.tray06",
                              "22m25s quarantine r02.tray06",
                              "32m25s diagnose r02.tray06",
                              "34m25s reboot r02.tray06",  // the coolant flows again
                              "44m25s diagnose r02.tray06",
                              "46m25s burn_in r02.tray06",
                              "1h16m25s diagnose r02.tray06",
                              "1h18m25s resume r02.tray06",
                          });
  CHECK(Details(rig, "reboot")[1] ==
        "diagnostic failed (r02.tray06.gpu1 not on the bus) with the coolant flowing; diagnostic in 10m");

  // A GPU still off the bus after a reboot under good cooling has really failed: no second reboot.
  Rig failed;
  failed.backend.off_bus = true;
  failed.backend.fail_detail = "r02.tray06.gpu1 not on the bus";
  flow(failed, 1, nominal);
  FeedXid(failed, 79);
  failed.clock.RunUntil(Duration::Hours(3));
  CHECK(Details(failed, "reboot").size() == 1);
  CHECK(Details(failed, "quarantine").size() >= 10);
  CHECK(failed.healer.IsIsolated(Id("r02.tray06")));
}

}  // namespace
}  // namespace rackchaos::healer
