// The detectors, driven one observation at a time through their DetectorContext on a virtual clock
// (the straggler detector has its own file, straggler_test.cpp).
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "cluster/kernel_log.h"
#include "healer/detector.h"
#include "healer/healer.h"
#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using cluster::HeartbeatChange;
using cluster::JobStatus;
using cluster::KernelLogLine;
using cluster::LinkStateChange;
using cluster::Metric;
using cluster::TelemetrySample;
using testing::DetectorHarness;
using testing::MakeDetector;
using testing::Shipped;
using testing::Id;
using testing::Min;
using testing::Sec;
using testing::Topo;

// ---------------------------------------------------------------------------------------------------
// Heartbeats

TEST_CASE("healer.heartbeat: a lost node is reported after missed_beats periods from its last beat") {
  DetectorHarness h("heartbeat");
  const ComponentId tray = Id("r01.tray03");
  h.Feed(Sec(110), HeartbeatChange{tray, false, Sec(100), Sec(10)});
  h.RunUntil(Sec(129));
  CHECK(h.raised().empty());
  h.RunUntil(Min(60));
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(100) + Sec(10) * 3);
  const Symptom& s = h.raised()[0].symptom;
  CHECK(s.cls == SymptomClass::kHeartbeatLost);
  CHECK(s.detector == "heartbeat");
  CHECK(s.component == tray);
  CHECK(s.job == kNoJob);
  CHECK(s.text == "3 heartbeats missed");
}

TEST_CASE("healer.heartbeat: a beat before the deadline cancels the loss") {
  DetectorHarness h("heartbeat");
  const ComponentId tray = Id("r02.tray11");
  h.Feed(Sec(110), HeartbeatChange{tray, false, Sec(100), Sec(10)});
  h.Feed(Sec(125), HeartbeatChange{tray, true, Sec(125), Sec(10)});
  h.RunUntil(Min(60));
  CHECK(h.raised().empty());
  CHECK(h.clock().pending() == 0);
}

TEST_CASE("healer.heartbeat: a repeated loss report does not double the symptom - trays are independent") {
  DetectorHarness h("heartbeat", testing::Shipped("conservative"));  // missed_beats 6
  const ComponentId a = Id("r01.tray01"), b = Id("r02.tray01");
  h.Feed(Sec(10), HeartbeatChange{a, false, Sec(0), Sec(10)});
  h.Feed(Sec(30), HeartbeatChange{a, false, Sec(0), Sec(10)});
  h.Feed(Sec(35), HeartbeatChange{b, false, Sec(25), Sec(10)});
  h.RunUntil(Min(60));
  REQUIRE(h.raised().size() == 2);
  CHECK(h.raised()[0].at == Sec(60));
  CHECK(h.raised()[0].symptom.component == a);
  CHECK(h.raised()[1].at == Sec(85));
  CHECK(h.raised()[1].symptom.component == b);
  CHECK(h.raised()[1].symptom.text == "6 heartbeats missed");
}

TEST_CASE("healer.heartbeat: a loss reported again after its symptom is the same loss - after a beat, a new one") {
  DetectorHarness h("heartbeat");
  const ComponentId tray = Id("r01.tray07");
  h.Feed(Sec(10), HeartbeatChange{tray, false, Sec(0), Sec(10)});
  h.Feed(Sec(40), HeartbeatChange{tray, false, Sec(0), Sec(10)});  // a poller repeating itself
  h.RunUntil(Sec(90));
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(30));
  h.Feed(Sec(95), HeartbeatChange{tray, true, Sec(95), Sec(10)});
  h.Feed(Sec(105), HeartbeatChange{tray, false, Sec(95), Sec(10)});
  h.RunUntil(Min(60));
  REQUIRE(h.raised().size() == 2);
  CHECK(h.raised()[1].at == Sec(125));
}

// ---------------------------------------------------------------------------------------------------
// Thermal

// One telemetry poll of a GPU as the simulator and DCGM deliver it: temperature and throttle together.
void Poll(DetectorHarness& h, Time at, ComponentId gpu, double temp_c, bool throttling) {
  h.Feed(at, TelemetrySample{gpu, Metric::kGpuTemperature, temp_c});
  h.Feed(at, TelemetrySample{gpu, Metric::kThermalThrottle, throttling ? 1.0 : 0.0});
  h.Feed(at, TelemetrySample{gpu, Metric::kGpuPower, 1100});
}

// Detector::GpuTemperatureLineC is a promise the simulator relies on: it stops polling GPUs whose
// temperature stays below every line. Each detector keeps it: a GPU poll of a cool, unthrottled, uncapped
// GPU just below its line (or at 120 C when it has none) raises nothing however often it comes.
TEST_CASE("healer: polls below each detector's GPU temperature line raise nothing; the healer takes the lowest line") {
  const double inf = std::numeric_limits<double>::infinity();
  Policy warm = Shipped("default");
  warm.thermal_temperature_c = 70;
  Policy clock = Shipped("default");
  clock.clock_enabled = true;
  for (const Policy& policy : std::vector<Policy>{Shipped("default"), Shipped("aggressive"), Shipped("conservative"), warm, clock}) {
    CAPTURE(policy.thermal_temperature_c);
    CAPTURE(policy.clock_enabled);
    size_t bounded = 0;
    for (const DetectorInfo& info : DetectorTable()) {
      CAPTURE(info.name);
      const double line = MakeDetector(info.name)->GpuTemperatureLineC(policy);
      CHECK(line > -inf);  // none of today's detectors needs every poll
      if (line < inf) ++bounded;
      const double below = line < inf ? line - 0.1 : 120;
      DetectorHarness h(info.name, policy);
      const ComponentId gpu = Id("r01.tray03.gpu2");
      for (int k = 1; k <= 30; ++k) {
        h.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kGpuTemperature, below});
        h.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kThermalThrottle, 0});
        h.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kGpuPower, 1100});
        h.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kGpuClockFraction, k % 2 ? 1.0 : 0.5});
        h.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kPowerCapped, 0});
      }
      CHECK(h.raised().empty());
      if (line == inf) continue;
      // The line is where it acts, not merely somewhere below it.
      DetectorHarness at(info.name, policy);
      for (int k = 1; k <= 30; ++k) at.Feed(Sec(10 * k), TelemetrySample{gpu, Metric::kGpuTemperature, line});
      CHECK(!at.raised().empty());
    }
    CHECK(bounded == 1);  // the thermal detector's
    CHECK(Healer::GpuTemperatureLineC(policy) == policy.thermal_temperature_c);
  }
}

// A detector that says nothing of its line: -infinity when it reads a GPU metric, +infinity when not.
TEST_CASE("healer: a detector that reads GPU polls without a line needs every poll") {
  struct Reads : Detector {
    explicit Reads(Metric m) : m_(m) {}
    std::string_view name() const override { return "reads"; }
    void OnObservation(const cluster::Observation&, DetectorContext&) override {}
    size_t reads() const override { return KindOf<TelemetrySample>(); }
    bool ReadsMetric(Metric m, const Policy&) const override { return m == m_; }
    Metric m_;
  };
  struct Heartbeats : Detector {
    std::string_view name() const override { return "beats"; }
    void OnObservation(const cluster::Observation&, DetectorContext&) override {}
    size_t reads() const override { return KindOf<HeartbeatChange>(); }
  };
  struct Everything : Detector {
    std::string_view name() const override { return "everything"; }
    void OnObservation(const cluster::Observation&, DetectorContext&) override {}
  };
  const Policy policy = Shipped("default");
  const double inf = std::numeric_limits<double>::infinity();
  for (Metric m : {Metric::kGpuTemperature, Metric::kGpuPower, Metric::kGpuClockFraction, Metric::kThermalThrottle,
                   Metric::kPowerCapped})
    CHECK(Reads(m).GpuTemperatureLineC(policy) == -inf);
  for (Metric m : {Metric::kCoolantFlow, Metric::kLeak, Metric::kPsuOk, Metric::kSwitchTemperature})
    CHECK(Reads(m).GpuTemperatureLineC(policy) == inf);
  CHECK(Heartbeats().GpuTemperatureLineC(policy) == inf);
  CHECK(Everything().GpuTemperatureLineC(policy) == -inf);
}

TEST_CASE("healer.thermal: one hot poll is not enough with samples: 2, even when it also throttles") {
  DetectorHarness h("thermal");
  const ComponentId gpu = Id("r01.tray03.gpu2");
  Poll(h, Sec(10), gpu, 88, true);
  Poll(h, Sec(20), gpu, 70, false);
  Poll(h, Sec(30), gpu, 89, true);
  Poll(h, Sec(40), gpu, 60, false);
  CHECK(h.raised().empty());
}

TEST_CASE("healer.thermal: two hot polls in a row raise once, on the second") {
  DetectorHarness h("thermal");
  const ComponentId gpu = Id("r01.tray03.gpu2");
  Poll(h, Sec(10), gpu, 86, false);
  Poll(h, Sec(20), gpu, 86.5, false);
  Poll(h, Sec(30), gpu, 88, true);
  Poll(h, Sec(40), gpu, 90, true);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(20));
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kThermal);
  CHECK(h.raised()[0].symptom.component == gpu);
  CHECK(h.raised()[0].symptom.text == "temperature 86.5 C");

  // Cooled down, then hot again for two polls: a new episode.
  Poll(h, Sec(50), gpu, 60, false);
  Poll(h, Sec(60), gpu, 87, true);
  Poll(h, Sec(70), gpu, 87, true);
  REQUIRE(h.raised().size() == 2);
  CHECK(h.raised()[1].at == Sec(70));
  CHECK(h.raised()[1].symptom.text == "temperature 87.0 C");
}

TEST_CASE("healer.thermal: throttling below the temperature threshold counts - GPUs are independent") {
  DetectorHarness h("thermal");
  const ComponentId a = Id("r01.tray03.gpu0"), b = Id("r01.tray03.gpu1");
  Poll(h, Sec(10), a, 80, true);
  Poll(h, Sec(10), b, 86, false);
  Poll(h, Sec(20), a, 80, true);
  Poll(h, Sec(20), b, 70, false);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].symptom.component == a);
  CHECK(h.raised()[0].symptom.text == "thermal slowdown active");
}

TEST_CASE("healer.thermal: samples: 1 (aggressive) raises on the first hot poll") {
  DetectorHarness h("thermal", testing::Shipped("aggressive"));  // 80 C, one sample
  const ComponentId gpu = Id("r02.tray05.gpu3");
  Poll(h, Sec(10), gpu, 79.9, false);
  CHECK(h.raised().empty());
  Poll(h, Sec(20), gpu, 80, false);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(20));
}

TEST_CASE("healer.thermal: coolant flow below 70% of nominal for two samples raises once per episode") {
  DetectorHarness h("thermal");  // nominal 8 L/min: low below 5.6; samples: 2
  const ComponentId valve = Id("r01.tray03.valve");
  auto flow = [&](int s, double v) { h.Feed(Sec(s), TelemetrySample{valve, Metric::kCoolantFlow, v}); };
  flow(10, 8.0);
  flow(20, 5.7);
  CHECK(h.raised().empty());
  flow(30, 4.0);
  CHECK(h.raised().empty());
  flow(40, 3.0);
  flow(50, 0.0);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(40));
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kFlowLow);
  CHECK(h.raised()[0].symptom.component == valve);
  CHECK(h.raised()[0].symptom.text == "coolant flow 3.0 L/min (nominal 8.0)");
  CHECK(h.cleared().empty());
  flow(60, 8.0);
  CHECK(h.cleared() == std::vector<ComponentId>{valve});
  flow(70, 2.0);
  flow(80, 2.0);
  REQUIRE(h.raised().size() == 2);
  CHECK(h.raised()[1].at == Sec(80));
}

TEST_CASE("healer.thermal: single noisy flow samples between normal ones never raise") {
  DetectorHarness h("thermal");
  const ComponentId valve = Id("r02.tray07.valve");
  for (int s = 10; s <= 600; s += 10)  // every third reading drops to zero (a sensor glitch), the rest nominal
    h.Feed(Sec(s), TelemetrySample{valve, Metric::kCoolantFlow, s % 30 == 0 ? 0.0 : 8.0});
  CHECK(h.raised().empty());
  DetectorHarness once("thermal", testing::Shipped("aggressive"));  // samples: 1 acts on one reading
  once.Feed(Sec(10), TelemetrySample{valve, Metric::kCoolantFlow, 0.0});
  CHECK(once.raised().size() == 1);
}

// ---------------------------------------------------------------------------------------------------
// Clock (power cap)

// One poll of a GPU's clock telemetry: the power-cap clock event and the SM clock as a fraction of max.
void ClockPoll(DetectorHarness& h, Time at, ComponentId gpu, bool capped, double clock) {
  h.Feed(at, TelemetrySample{gpu, Metric::kGpuTemperature, 70});
  h.Feed(at, TelemetrySample{gpu, Metric::kPowerCapped, capped ? 1.0 : 0.0});
  h.Feed(at, TelemetrySample{gpu, Metric::kGpuClockFraction, clock});
}

Policy ClockOn(int samples = 2) {
  Policy p = testing::Shipped("default");
  p.clock_enabled = true;
  p.clock_samples = samples;
  return p;
}

TEST_CASE("healer.clock: off in the default policy - a capped, slow GPU raises nothing") {
  DetectorHarness h("clock");
  const ComponentId gpu = Id("r01.tray03.gpu0");
  for (int s = 10; s <= 100; s += 10) ClockPoll(h, Sec(s), gpu, true, 0.63);
  CHECK(h.raised().empty());
}

TEST_CASE("healer.clock: the power cap with the clock below min_clock for two polls raises once, on the second") {
  DetectorHarness h("clock", ClockOn());
  const ComponentId gpu = Id("r01.tray03.gpu0");
  ClockPoll(h, Sec(10), gpu, false, 1.0);
  ClockPoll(h, Sec(20), gpu, true, 0.63);
  CHECK(h.raised().empty());
  ClockPoll(h, Sec(30), gpu, true, 0.63);
  ClockPoll(h, Sec(40), gpu, true, 0.63);
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == Sec(30));
  const Symptom& s = h.raised()[0].symptom;
  CHECK(s.cls == SymptomClass::kClockLow);
  CHECK(s.detector == "clock");
  CHECK(s.component == gpu);
  CHECK(s.text == "SM clock 63% of max, held by the power cap for 2 polls");
  // The cap lifted, then set again for two polls: a new episode.
  ClockPoll(h, Sec(50), gpu, false, 1.0);
  ClockPoll(h, Sec(60), gpu, true, 0.7);
  ClockPoll(h, Sec(70), gpu, true, 0.7);
  REQUIRE(h.raised().size() == 2);
  CHECK(h.raised()[1].at == Sec(70));
}

TEST_CASE("healer.clock: either signal alone is no power cap - a routine cap at full clock, heat or idle clocks") {
  DetectorHarness h("clock", ClockOn(1));
  const ComponentId a = Id("r01.tray03.gpu0"), b = Id("r01.tray03.gpu1"), c = Id("r01.tray03.gpu2");
  for (int s = 10; s <= 60; s += 10) {
    ClockPoll(h, Sec(s), a, true, 0.95);   // at its normal limit: the cap reason, clock near max
    ClockPoll(h, Sec(s), b, false, 0.40);  // thermal slowdown or idle: slow, but not the power cap
  }
  CHECK(h.raised().empty());
  // The sample order within a poll does not matter; samples of other GPUs between them neither.
  h.Feed(Sec(70), TelemetrySample{c, Metric::kGpuClockFraction, 0.5});
  ClockPoll(h, Sec(70), a, false, 1.0);
  h.Feed(Sec(70), TelemetrySample{c, Metric::kPowerCapped, 1});
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].symptom.component == c);
}

TEST_CASE("healer.clock: a poll without the clock (a source error) breaks the streak") {
  DetectorHarness h("clock", ClockOn());
  const ComponentId gpu = Id("r02.tray05.gpu3");
  ClockPoll(h, Sec(10), gpu, true, 0.6);
  h.Feed(Sec(20), TelemetrySample{gpu, Metric::kPowerCapped, 1});  // the clock could not be read
  ClockPoll(h, Sec(30), gpu, true, 0.6);
  CHECK(h.raised().empty());
  ClockPoll(h, Sec(40), gpu, true, 0.6);
  CHECK(h.raised().size() == 1);
}

TEST_CASE("healer.clock: the rig policy turns it on - a capped rig tray is found on its second 1 s poll") {
  auto rig = LoadPolicy(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/rig/rig-policy.yaml");
  REQUIRE(rig.ok());
  CHECK(rig->clock_enabled);
  DetectorHarness h("clock", *rig);
  // tests/rig's GPU model: the tray's cap holds all its GPUs, at 300 W to 63% of the maximum clock.
  for (int i = 0; i < 4; ++i) ClockPoll(h, Sec(10), Id("r01.tray03.gpu" + std::to_string(i)), false, 1.0);
  for (int s : {11, 12})
    for (int i = 0; i < 4; ++i) ClockPoll(h, Sec(s), Id("r01.tray03.gpu" + std::to_string(i)), true, 0.63);
  REQUIRE(h.raised().size() == 4);
  for (const auto& r : h.raised()) CHECK(r.at == Sec(12));
}

// ---------------------------------------------------------------------------------------------------
// Xid, links, job failures

KernelLogLine Xid(ComponentId tray, const std::string& pci, int code, cluster::LogStyle style) {
  cluster::XidLine x{pci, code, 4242, "python3", "", false};
  return {tray, cluster::FormatXidLine(x, style, 1234.5, "gpu-node-7")};
}

TEST_CASE("healer.xid: the PCI address names the GPU of the reporting tray") {
  DetectorHarness h("xid");
  const ComponentId tray = Id("r01.tray03");
  h.Feed(Sec(5), Xid(tray, "0000:41:00", 79, cluster::LogStyle::kDmesg));
  h.Feed(Sec(6), Xid(Id("r02.tray01"), "0000:42:00", 48, cluster::LogStyle::kJournal));
  h.Feed(Sec(7), Xid(tray, "0000:01:00", 74, cluster::LogStyle::kSyslog));
  REQUIRE(h.raised().size() == 3);
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kXid);
  CHECK(h.raised()[0].symptom.component == Id("r01.tray03.gpu2"));
  CHECK(h.raised()[0].symptom.action == XidAction::kRebootNode);
  CHECK(h.raised()[0].symptom.text == "Xid 79 (GPU has fallen off the bus): reboot_node");
  CHECK(h.raised()[1].symptom.component == Id("r02.tray01.gpu3"));
  CHECK(h.raised()[1].symptom.action == XidAction::kResetGpu);
  CHECK(h.raised()[2].symptom.component == Id("r01.tray03.gpu0"));
  CHECK(h.raised()[2].symptom.action == XidAction::kCheckNvlink);
  CHECK(h.raised()[2].at == Sec(7));
}

TEST_CASE("healer.xid: kernel noise and NVSwitch SXids raise nothing - an unknown PCI blames the tray") {
  DetectorHarness h("xid");
  const ComponentId tray = Id("r01.tray03");
  h.Feed(Sec(1), KernelLogLine{tray, cluster::FormatKernelLine("mlx5_core 0000:03:00.0: link up", cluster::LogStyle::kDmesg, 3, "h")});
  h.Feed(Sec(2), KernelLogLine{tray, "NVRM: GPU at PCI:0000:41:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b"});
  h.Feed(Sec(3), KernelLogLine{tray, cluster::FormatSxidLine({3, "0000:05:00.0", 20034, true, "Link 46 LTSSM Fault Up"},
                                                           cluster::LogStyle::kDmesg, 3, "h")});
  CHECK(h.raised().empty());
  h.Feed(Sec(4), Xid(tray, "0000:99:00", 13, cluster::LogStyle::kBare));
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].symptom.component == tray);
}

TEST_CASE("healer.link_state: a link down raises once until it comes back up") {
  DetectorHarness h("link_state");
  const ComponentId nic = Id("r01.tray03.nic1"), gpu = Id("r01.tray03.gpu2");
  h.Feed(Sec(1), LinkStateChange{nic, -1, false});
  h.Feed(Sec(2), LinkStateChange{nic, -1, false});
  h.Feed(Sec(3), LinkStateChange{gpu, 5, false});
  h.Feed(Sec(4), LinkStateChange{gpu, 6, false});
  h.Feed(Sec(5), LinkStateChange{nic, -1, true});
  h.Feed(Sec(6), LinkStateChange{nic, -1, false});
  h.Feed(Sec(7), LinkStateChange{Id("r01.tray04.nic0"), -1, true});  // never down: nothing to clear
  CHECK(h.cleared() == std::vector<ComponentId>{nic});
  REQUIRE(h.raised().size() == 4);
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kLinkDown);
  CHECK(h.raised()[0].symptom.component == nic);
  CHECK(h.raised()[0].symptom.text == "NIC link down");
  CHECK(h.raised()[1].symptom.component == gpu);
  CHECK(h.raised()[1].symptom.text == "NVLink port 5 inactive");
  CHECK(h.raised()[2].symptom.text == "NVLink port 6 inactive");
  CHECK(h.raised()[3].at == Sec(6));
}

TEST_CASE("healer.job_failure: only failed jobs raise, without a component") {
  DetectorHarness h("job_failure");
  h.Feed(Sec(1), JobStatus{3, JobState::kRunning, {Id("r01.tray01")}, ""});
  h.Feed(Sec(2), JobStatus{3, JobState::kHung, {Id("r01.tray01")}, "NCCL stuck"});
  h.Feed(Sec(3), JobStatus{3, JobState::kFailed, {}, "NCCL watchdog timeout"});
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kJobFailed);
  CHECK(h.raised()[0].symptom.component == kNoComponent);
  CHECK(h.raised()[0].symptom.job == 3);
  CHECK(h.raised()[0].symptom.text == "job failed: NCCL watchdog timeout");
}

TEST_CASE("healer.detectors: part_health raises once on a part reported failed and clears when it reports OK") {
  testing::DetectorHarness h("part_health");
  const ComponentId pump = Id("r01.cdu.pump1");
  h.Feed(testing::Sec(10), cluster::TelemetrySample{pump, cluster::Metric::kPartOk, 1});
  CHECK(h.raised().empty());
  h.Feed(testing::Sec(20), cluster::TelemetrySample{pump, cluster::Metric::kPartOk, 0});
  h.Feed(testing::Sec(30), cluster::TelemetrySample{pump, cluster::Metric::kPartOk, 0});
  // A PSU's health is the power detector's, not this one's.
  h.Feed(testing::Sec(30), cluster::TelemetrySample{Id("r01.shelf1.psu1"), cluster::Metric::kPsuOk, 0});
  REQUIRE(h.raised().size() == 1);
  CHECK(h.raised()[0].at == testing::Sec(20));
  CHECK(h.raised()[0].symptom.cls == SymptomClass::kPartFailed);
  CHECK(h.raised()[0].symptom.component == pump);
  h.Feed(testing::Sec(40), cluster::TelemetrySample{pump, cluster::Metric::kPartOk, 1});
  CHECK(h.cleared() == std::vector<ComponentId>{pump});
}

TEST_CASE("healer.detectors: the table lists every detector once, in its documented order") {
  std::vector<std::string> names;
  for (const DetectorInfo& info : DetectorTable()) {
    names.push_back(info.name);
    auto d = info.make();
    REQUIRE(d != nullptr);
    CHECK(d->name() == info.name);
  }
  CHECK(names == std::vector<std::string>{"heartbeat", "xid", "link_state", "thermal", "straggler", "slow_link",
                                          "job_failure", "power", "part_health", "region_probe", "clock"});
}

}  // namespace
}  // namespace rackchaos::healer
