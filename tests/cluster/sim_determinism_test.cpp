// Same seed, same result: a scenario with several faults, serialized field by field, run twice.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Ids(const std::vector<ComponentId>& ids) {
  std::string out = "[";
  for (ComponentId id : ids) out += std::to_string(id) + ",";
  return out + "]";
}

// Every field of every event type, so that any divergence shows.
struct EventText {
  std::string operator()(const FaultInjected& e) const {
    return "fault " + std::to_string(e.fault) + " " + e.kind + " " + std::to_string(e.target) + " " +
           std::to_string(e.port) + " " + e.selector + " " + e.detail;
  }
  std::string operator()(const FaultReverted& e) const { return "revert " + std::to_string(e.fault) + " " + e.detail; }
  std::string operator()(const PhysicsChanged& e) const {
    return "physics " + std::to_string(e.component) + " " + e.what + " " + Num(e.value) + " " + std::to_string(e.cause);
  }
  std::string operator()(const Detected& e) const {
    return "detected " + std::to_string(e.detection) + " " + e.detector + " " + std::to_string(e.component) + " " +
           e.symptom;
  }
  std::string operator()(const Isolated& e) const {
    std::string because;
    for (DetectionId d : e.because) because += std::to_string(d) + ",";
    return "isolated " + std::to_string(e.component) + " " + e.domain + " " + because + " " + e.reason;
  }
  std::string operator()(const ActionTaken& e) const {
    return "action " + e.action + " " + std::to_string(e.component) + " " + std::to_string(e.job) + " " +
           std::to_string(e.ok) + " " + e.detail;
  }
  std::string operator()(const JobChanged& e) const {
    return "job " + std::to_string(e.job) + " " + JobStateName(e.state) + " " + Num(e.steps) + " " +
           Num(e.step_time_s) + " " + Num(e.speed) + " " + std::to_string(e.gpus) + " " +
           std::to_string(e.lost_work.us) + " " + std::to_string(e.cause) + " " + e.detail + " " + Ids(e.trays.ids());
  }
  std::string operator()(const Checkpointed& e) const { return "ckpt " + std::to_string(e.job) + " " + Num(e.step); }
};

struct ObservationText {
  std::string operator()(const HeartbeatChange& o) const {
    return "hb " + std::to_string(o.node) + " " + std::to_string(o.alive) + " " + std::to_string(o.last_seen.us) +
           " " + std::to_string(o.period.us);
  }
  std::string operator()(const TelemetrySample& o) const {
    return "tm " + std::to_string(o.component) + " " + MetricName(o.metric) + " " + Num(o.value);
  }
  std::string operator()(const KernelLogLine& o) const { return "log " + std::to_string(o.node) + " " + o.line; }
  std::string operator()(const LinkStateChange& o) const {
    return "link " + std::to_string(o.component) + " " + std::to_string(o.port) + " " + std::to_string(o.up);
  }
  std::string operator()(const StepReport& o) const {
    std::string out = "step " + std::to_string(o.job) + " " + Num(o.step_time_s) + " " + Ids(o.rank_gpus);
    for (float c : o.compute_s) out += " " + Num(c);
    return out + " bulk " + std::to_string(o.bulk_ranks) + " " + Num(o.bulk_median_s) + " " + Num(o.bulk_mad_s);
  }
  std::string operator()(const JobStatus& o) const {
    return "jobstatus " + std::to_string(o.job) + " " + JobStateName(o.state) + " " + Ids(o.trays.ids()) + " " + o.reason;
  }
  std::string operator()(const DiagnosticResult& o) const {
    return "diag " + std::to_string(o.tray) + " " + std::to_string(o.passed) + " " + o.detail;
  }
};

struct Run {
  std::vector<std::string> events, observations, heartbeats;
};

// Two jobs; a shut valve, an NVLink port, a NIC flap, a power cap, a tray pull with a requeue and a
// reinsertion, a diagnostic; then rack-level parts: a switch tray (taken out, repaired, returned), a
// leaf, a PSU, the CDU; two hours.
Run RunScenario(uint64_t seed) {
  Harness h(seed);
  JobConfig big = Job(32);
  big.checkpoint_interval = Duration::Minutes(20);
  REQUIRE(h.sim.AddJob(big).ok());
  REQUIRE(h.sim.AddJob(Job(16)).ok());
  h.sim.Start();
  h.At(Duration::Minutes(5), [&] { CHECK(h.sim.SetValveOpening(h.Id("r01.tray03.valve"), 0.15, 1).ok()); });
  h.At(Duration::Minutes(7), [&] { CHECK(h.sim.SetNvlinkPort(h.Id("r01.tray10.gpu1"), 3, false, 2).ok()); });
  h.At(Duration::Minutes(9), [&] { CHECK(h.sim.SetNicLink(h.Id("r01.tray09.nic0"), false, 3).ok()); });
  h.At(Duration::Minutes(11), [&] { CHECK(h.sim.SetNicLink(h.Id("r01.tray09.nic0"), true, 3).ok()); });
  h.At(Duration::Minutes(13), [&] { CHECK(h.sim.SetPowerCap(h.Id("r01.tray02.gpu2"), 700, 4).ok()); });
  h.At(Duration::Minutes(20), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r01.tray05"), false, 5).ok()); });
  h.At(Duration::Minutes(25), [&] {
    CHECK(h.sim.Drain(h.Id("r01.tray05"), "gone").ok());
    CHECK(h.sim.RequeueJob(0, "tray lost").ok());
    CHECK(h.sim.RunDiagnostic(h.Id("r01.tray03")).ok());
  });
  h.At(Duration::Minutes(40), [&] { CHECK(h.sim.SetTrayPresent(h.Id("r01.tray05"), true, 5).ok()); });
  h.At(Duration::Minutes(50), [&] { CHECK(h.sim.Release(Held::kValveOpening, {h.Id("r01.tray03.valve"), -1}, 1).ok()); });
  const ComponentId sw = h.Id("r01.switch3");
  h.At(Duration::Minutes(100), [&] { CHECK(h.sim.SetComponentFailed(sw, true, 6).ok()); });
  h.At(Duration::Minutes(101), [&] { CHECK(h.sim.Drain(sw, "taken out").ok()); });
  h.At(Duration::Minutes(103), [&] { CHECK(h.sim.SetComponentFailed(sw, false, 6).ok()); });
  h.At(Duration::Minutes(104), [&] { CHECK(h.sim.Resume(sw).ok()); });
  h.At(Duration::Minutes(106), [&] { CHECK(h.sim.SetComponentFailed(h.Id("rail1.leaf01"), true, 7).ok()); });
  h.At(Duration::Minutes(108), [&] { CHECK(h.sim.SetComponentFailed(h.Id("rail1.leaf01"), false, 7).ok()); });
  h.At(Duration::Minutes(110), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.shelf2.psu4"), true, 8).ok()); });
  h.At(Duration::Minutes(112), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), true, 9).ok()); });
  h.At(Duration::Minutes(114), [&] { CHECK(h.sim.SetComponentFailed(h.Id("r01.cdu"), false, 9).ok()); });
  h.clock.RunUntil(Duration::Hours(2));

  Run run;
  for (const Event& e : h.events.events())
    run.events.push_back(std::to_string(e.at.us) + " " + std::visit(EventText{}, e.body));
  for (const Observation& o : h.seen.all) {
    std::string text = std::to_string(o.at.us) + " " + std::visit(ObservationText{}, o.body);
    if (std::holds_alternative<HeartbeatChange>(o.body)) run.heartbeats.push_back(text);
    run.observations.push_back(std::move(text));
  }
  return run;
}

TEST_CASE("the same scenario and seed give the same events and observations") {
  Run a = RunScenario(42), b = RunScenario(42);
  // The scenario exercises what it claims to: slowdowns, hangs, a restart, checkpoints, reports.
  auto count = [&](const std::string& part) {
    int n = 0;
    for (const std::string& e : a.events) n += e.find(part) != std::string::npos;
    return n;
  };
  CHECK(count("thermal_slowdown") >= 4);
  CHECK(count(" hung ") >= 2);
  CHECK(count(" restarting ") == 1);
  CHECK(count("nvlink_domain_UNHEALTHY") == 2);  // r01.switch3 at 100 min; the CDU's switch trays overheat at ~113 min
  CHECK(count("cdu_flow") == 2);
  CHECK(count("ckpt ") >= 4);
  CHECK(a.heartbeats.size() == 2);  // tray05: lost, and back after its boot
  int step_reports = 0;
  for (const std::string& o : a.observations) step_reports += o.find(" step ") != std::string::npos;
  CHECK(step_reports >= 3);  // the capped GPU is a slow rank for minutes
  REQUIRE(a.events.size() == b.events.size());
  for (size_t k = 0; k < a.events.size(); ++k) CHECK(a.events[k] == b.events[k]);
  REQUIRE(a.observations.size() == b.observations.size());
  for (size_t k = 0; k < a.observations.size(); ++k) CHECK(a.observations[k] == b.observations[k]);
}

TEST_CASE("another seed moves the heartbeat and poll phases") {
  Run a = RunScenario(42), c = RunScenario(43);
  REQUIRE(a.heartbeats.size() == c.heartbeats.size());
  CHECK(a.heartbeats != c.heartbeats);
  CHECK(a.observations != c.observations);
}

}  // namespace
}  // namespace rackchaos::cluster
