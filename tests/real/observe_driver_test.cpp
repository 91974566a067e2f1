// The observation driver (runner/site/observation_driver.h) with a scripted source on a virtual clock:
// which sources are asked when, what is published to the healer for what a tool said, and how
// observation errors reach the report. No SSH: the sources' SSH side is tests/real/observe_real_test.cpp.
#include <doctest/doctest.h>

#include <deque>

#include "cluster/catalogue.h"
#include "healer/xid.h"
#include "runner/site/host_maps.h"
#include "runner/site/observation_driver.h"
#include "tests/real/gb200.h"

namespace rackchaos::runner {
namespace {

using testing::Gb200;

// Answers each Ask with the next scripted Observed (none when the script is empty).
class ScriptedSource : public ObservationSource {
 public:
  ScriptedSource(Duration period, std::deque<observe::Observed>* script, std::vector<Time>* asks)
      : period_(period), script_(script), asks_(asks) {}
  std::string Name() const override { return "scripted"; }
  Duration Period() const override { return period_; }
  void Ask(Time now) override {
    asks_->push_back(now);
    if (script_->empty()) return;
    ready_.push_back(std::move(script_->front()));
    script_->pop_front();
  }
  std::vector<observe::Observed> Take() override { return std::exchange(ready_, {}); }
  void Stop() override { stopped_ = true; }
  bool stopped_ = false;

 private:
  Duration period_;
  std::deque<observe::Observed>* script_;
  std::vector<Time>* asks_;
  std::vector<observe::Observed> ready_;
};

struct Events : EventSink {
  void Record(const Event& e) override { events.push_back(e); }
  std::vector<ActionTaken> Actions() const {
    std::vector<ActionTaken> out;
    for (const Event& e : events)
      if (const auto* a = std::get_if<ActionTaken>(&e.body)) out.push_back(*a);
    return out;
  }
  std::vector<Event> events;
};

struct Rig {
  cluster::Topology topo = Gb200();
  VirtualClock clock;
  Events events;
  std::vector<cluster::Observation> published;
  ObservationDriver driver{topo, clock, events, [this](cluster::Observation o) { published.push_back(std::move(o)); }};
  std::deque<observe::Observed> script;
  std::vector<Time> asks;
  ComponentId tray = *topo.Find("r01.tray01");
  ComponentId gpu1 = *topo.Find("r01.tray01.gpu1");

  Rig() {
    observe::HostMap m;
    m.host = "h1";
    m.node = tray;
    m.gpus.push_back({*topo.Find("r01.tray01.gpu0"), 0, "0000:3b:00", "", 0});
    m.gpus.push_back({gpu1, 1, "0000:3c:00", "", 0});
    driver.hosts().push_back(m);
    SourceList sources;
    sources.push_back(std::make_unique<ScriptedSource>(Duration::Seconds(2), &script, &asks));
    driver.Add(std::move(sources));
  }
  template <typename T>
  std::vector<T> Published() const {
    std::vector<T> out;
    for (const auto& o : published)
      if (const auto* b = std::get_if<T>(&o.body)) out.push_back(*b);
    return out;
  }
};

observe::Observed Telemetry(ComponentId gpu, double temp) {
  observe::Observed o;
  o.Add(cluster::TelemetrySample{gpu, cluster::Metric::kGpuTemperature, temp});
  return o;
}

TEST_CASE("observe driver: each source is asked on its period; its answers are published when they arrive") {
  Rig r;
  r.script.push_back(Telemetry(r.gpu1, 60));
  r.script.push_back(Telemetry(r.gpu1, 91));
  r.driver.Start();
  CHECK(r.published.empty());  // asked at 0: the answer is taken on the source's next tick
  r.clock.RunUntil(Time{} + Duration::Seconds(5));
  CHECK(r.asks == std::vector<Time>{Time{}, Time{} + Duration::Seconds(2), Time{} + Duration::Seconds(4)});
  auto samples = r.Published<cluster::TelemetrySample>();
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].value == 60);
  CHECK(samples[1].value == 91);
  CHECK(r.published[1].at == Time{} + Duration::Seconds(4));
  r.driver.Stop();
  r.clock.RunUntil(Time{} + Duration::Seconds(20));
  CHECK(r.asks.size() == 3);  // no ask after Stop
}

TEST_CASE("observe driver: a GPU the tool reports lost is the simulator's Xid 79 line, once per loss") {
  Rig r;
  observe::Observed lost;
  lost.devices.push_back({"h1", observe::Source::kNvidiaSmi, r.gpu1, observe::DeviceState::kGpuLost,
                          "Unable to determine the device handle for GPU 0000:3c:00.0: GPU is lost."});
  r.driver.Handle(lost);
  r.driver.Handle(lost);  // still lost on the next poll: no second line
  auto lines = r.Published<cluster::KernelLogLine>();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].node == r.tray);
  auto xid = healer::ParseXidLine(lines[0].line);
  REQUIRE(xid);
  CHECK(xid->code == 79);
  CHECK(r.topo.GpuByPci(r.tray, xid->pci) == r.gpu1);  // the model's address: the detector names the GPU
  r.driver.Handle(Telemetry(r.gpu1, 40));              // back (after a reboot)
  r.driver.Handle(lost);
  CHECK(r.Published<cluster::KernelLogLine>().size() == 2);
}

TEST_CASE("observe driver: journal lines get the model's address; NVLink ports are published when they change") {
  Rig r;
  observe::Observed o;
  o.Add(cluster::KernelLogLine{r.tray, "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."});
  o.Add(cluster::LinkStateChange{r.gpu1, 3, true});
  o.Add(cluster::LinkStateChange{r.gpu1, 4, false});
  r.driver.Handle(o);
  observe::Observed again;
  again.Add(cluster::LinkStateChange{r.gpu1, 4, false});
  again.Add(cluster::LinkStateChange{r.gpu1, 3, false});
  r.driver.Handle(again);
  auto lines = r.Published<cluster::KernelLogLine>();
  REQUIRE(lines.size() == 1);
  CHECK(r.topo.GpuByPci(r.tray, healer::ParseXidLine(lines[0].line)->pci) == *r.topo.Find("r01.tray01.gpu0"));
  auto links = r.Published<cluster::LinkStateChange>();
  REQUIRE(links.size() == 2);  // port 3 up = as it started; port 4 down once; port 3 down
  CHECK((links[0].port == 4 && !links[0].up));
  CHECK((links[1].port == 3 && !links[1].up));
}

TEST_CASE("observe driver: an Xid gauge's change is a kernel line; a driver down is an error, not an observation") {
  Rig r;
  observe::Observed g;
  g.xid_gauges.push_back({"h1", observe::Source::kDcgmi, r.gpu1, r.tray, "0000:3c:00", 0});
  r.driver.Handle(g);  // the baseline
  g.xid_gauges[0].code = 48;
  r.driver.Handle(g);
  auto lines = r.Published<cluster::KernelLogLine>();
  REQUIRE(lines.size() == 1);
  CHECK(healer::ParseXidLine(lines[0].line)->code == 48);
  observe::Observed down;
  down.devices.push_back({"h1", observe::Source::kNvidiaSmi, r.tray, observe::DeviceState::kDriverDown,
                          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."});
  r.driver.Handle(down);
  CHECK(r.published.size() == 1);
  auto actions = r.events.Actions();
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].action == "observe");
  CHECK_FALSE(actions[0].ok);
  CHECK(actions[0].component == r.tray);
  CHECK(actions[0].detail.find("h1: nvidia-smi: unavailable: driver_down: NVIDIA-SMI has failed") == 0);
}

TEST_CASE("observe driver: observation errors are on the record once a minute per host, source, problem, part") {
  Rig r;
  observe::Observed bad;
  bad.Error("h1", observe::Source::kNvidiaSmi, observe::Problem::kUnreadable, kNoComponent, "line 1: 3 cells, expected 8");
  bad.Error("h1", observe::Source::kNvidiaSmi, observe::Problem::kMissing, r.gpu1, "GPU 1 power.draw: [N/A]");
  r.script = {bad, bad, bad};
  r.driver.Start();
  r.clock.RunUntil(Time{} + Duration::Seconds(5));  // two answers handled, at 2s and 4s
  CHECK(r.published.empty());                      // missing data is not published as anything
  auto actions = r.events.Actions();
  REQUIRE(actions.size() == 2);
  CHECK(actions[0].detail == "h1: nvidia-smi: unreadable: line 1: 3 cells, expected 8");
  CHECK(actions[1].component == r.gpu1);
  r.script.assign(40, bad);
  r.clock.RunUntil(Time{} + Duration::Seconds(70));  // past a minute: on the record again
  CHECK(r.events.Actions().size() == 4);
}

}  // namespace
}  // namespace rackchaos::runner
