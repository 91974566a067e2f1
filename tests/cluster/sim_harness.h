// Test harness for the simulated cluster: one GB200 NVL72 rack (2 spare trays by default), a virtual
// clock, an in-memory event log and a sink that records every observation, plus filters over both.
//
// The closed-form helpers restate the model of cluster/thermal.h from the catalogue's numbers, so
// the tests check the simulator's timings against arithmetic written down here, not against itself.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cluster/catalogue.h"
#include "cluster/observation.h"
#include "cluster/sim_backend.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/rng.h"
#include "core/units.h"

namespace doctest {
template <>
struct StringMaker<rackchaos::Duration> {
  static String convert(const rackchaos::Duration& d) {
    return (rackchaos::FormatDuration(d) + " (" + std::to_string(d.us) + "us)").c_str();
  }
};
}  // namespace doctest

namespace rackchaos::cluster::testing {

constexpr Duration kMinute = Duration::Minutes(1);
constexpr Duration kSecond = Duration::Seconds(1);

// Times are integer microseconds; a threshold crossing is rounded up to the next microsecond and the
// test's own arithmetic may land a microsecond either side, so crossings are compared within `slack`.
inline bool Near(Time actual, Time expected, int64_t slack_us = 2) {
  return std::llabs(actual.us - expected.us) <= slack_us;
}

class Recorder : public ObservationSink {
 public:
  void OnObservation(const Observation& obs) override { all.push_back(obs); }

  // Every observation of type T with its delivery time, in order.
  template <typename T>
  std::vector<std::pair<Time, T>> Of() const {
    std::vector<std::pair<Time, T>> out;
    for (const Observation& o : all)
      if (const T* body = std::get_if<T>(&o.body)) out.emplace_back(o.at, *body);
    return out;
  }

  std::vector<Observation> all;
};

inline Topology BuildTopology(int racks, int spares, bool adaptive = false, const char* name = "gb200-nvl72") {
  auto model = LoadRackModel(name);
  REQUIRE(model.ok());
  model->adaptive_bandwidth = adaptive;
  auto topo = Topology::Build(*model, racks, spares);
  REQUIRE(topo.ok());
  return std::move(topo).value();
}

// A job at nominal numbers: 10 s steps, 10% NVLink, 5% scale-out, checkpoints every 30 min.
inline JobConfig Job(int gpus) {
  JobConfig cfg;
  cfg.name = "train";
  cfg.gpus = gpus;
  return cfg;
}

// Step time of Job() with the slowest GPU at `speed` and the slowest NVLink at `links_up` of 18.
inline double StepTime(const JobConfig& cfg, double speed, int links_up = 18) {
  double nom = cfg.step_time.Seconds();
  double compute = nom * (1 - cfg.nvlink_share - cfg.scaleout_share);
  return compute / speed + nom * cfg.nvlink_share * 18.0 / links_up + nom * cfg.scaleout_share;
}

struct Harness {
  explicit Harness(uint64_t seed = 42, int racks = 1, int spares = 2, bool adaptive = false, SimOptions options = {})
      : Harness(BuildTopology(racks, spares, adaptive), seed, options) {}
  // Any topology, e.g. BuildTopology(4, 0, false, "gb200-nvl36x2").
  Harness(Topology t, uint64_t seed, SimOptions options = {})
      : topo(std::move(t)), sim(topo, clock, Rng(seed), events, options) {
    sim.Subscribe(&seen);
  }

  ComponentId Id(std::string_view name) const {
    auto id = topo.Find(name);
    REQUIRE_MESSAGE(id.has_value(), "no component ", std::string(name));
    return *id;
  }
  const RackModel& model() const { return topo.model(); }

  // Schedules `fn` at `at` on the virtual clock.
  template <typename Fn>
  void At(Time at, Fn fn) {
    clock.CallAt(at, std::move(fn));
  }

  // PhysicsChanged events with this `what`, optionally only on one component.
  std::vector<std::pair<Time, PhysicsChanged>> Physics(std::string_view what,
                                                       ComponentId on = kNoComponent) const {
    std::vector<std::pair<Time, PhysicsChanged>> out;
    for (const Event& e : events.events())
      if (const auto* p = std::get_if<PhysicsChanged>(&e.body))
        if (p->what == what && (on == kNoComponent || p->component == on)) out.emplace_back(e.at, *p);
    return out;
  }

  // The racks of the job's trays, in tray order, each once.
  std::vector<std::string> RacksOf(JobId job) const {
    std::vector<std::string> out;
    for (ComponentId t : sim.JobTrays(job)) {
      const std::string& r = topo.at(topo.RackOf(t)).name;
      if (out.empty() || out.back() != r) out.push_back(r);
    }
    return out;
  }

  std::vector<std::pair<Time, JobChanged>> JobChanges(JobId job) const {
    std::vector<std::pair<Time, JobChanged>> out;
    for (const Event& e : events.events())
      if (const auto* j = std::get_if<JobChanged>(&e.body))
        if (j->job == job) out.emplace_back(e.at, *j);
    return out;
  }

  std::vector<std::pair<Time, Checkpointed>> Checkpoints() const {
    std::vector<std::pair<Time, Checkpointed>> out;
    for (const Event& e : events.events())
      if (const auto* c = std::get_if<Checkpointed>(&e.body)) out.emplace_back(e.at, *c);
    return out;
  }

  // The tray's telemetry poll phase, read off its first coolant-flow sample (every tray is polled
  // once after Start()); link counters are polled on the same phase with a 1 s period.
  Time PollPhase(ComponentId tray) const {
    ComponentId valve = topo.ValveOfTray(tray);
    for (const auto& [at, s] : seen.Of<TelemetrySample>())
      if (s.component == valve && s.metric == Metric::kCoolantFlow) return at;
    FAIL("no telemetry sample for ", topo.at(tray).name);
    return {};
  }

  Topology topo;
  VirtualClock clock;
  EventLog events;
  SimBackend sim;
  Recorder seen;
};

// ---- the first-order thermal model, from the catalogue's numbers (cluster/thermal.h)

inline double Conductance(const RackModel& m, double valve) {
  return m.residual_conductance_w_per_k + m.conductance_w_per_k * valve;
}
inline double Steady(const RackModel& m, double power_w, double valve) {
  return m.inlet_c + power_w / Conductance(m, valve);
}
// Seconds from `from_c` to `to_c` on the trajectory toward Steady(power, valve).
inline double SecondsToReach(const RackModel& m, double power_w, double valve, double from_c, double to_c) {
  double tau = m.gpu_heat_capacity_j_per_k / Conductance(m, valve);
  double ss = Steady(m, power_w, valve);
  return tau * std::log((ss - from_c) / (ss - to_c));
}

}  // namespace rackchaos::cluster::testing
