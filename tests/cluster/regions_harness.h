// Test harness for regions: two GB200 NVL72 regions, east (r01-r02) and west (r03-r04), no hot spare
// trays, with the filters the region tests share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster::testing {

constexpr FaultId kRegionFault = 31;

inline Topology TwoRegions(int east = 2, int west = 2) {
  auto model = LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = Topology::Build(*model, east + west, 0, {{"east", east}, {"west", west}});
  REQUIRE(topo.ok());
  return std::move(topo).value();
}

struct Regions {
  explicit Regions(SimOptions options = {}, uint64_t seed = 42)
      : topo(TwoRegions()), sim(topo, clock, Rng(seed), events, options) {
    sim.Subscribe(&seen);
  }
  ComponentId Id(std::string_view name) const {
    auto id = topo.Find(name);
    REQUIRE_MESSAGE(id.has_value(), "no component ", std::string(name));
    return *id;
  }
  template <typename Fn>
  void At(Time at, Fn fn) {
    clock.CallAt(at, std::move(fn));
  }
  std::vector<std::string> RacksOf(JobId job) const {
    std::vector<std::string> out;
    for (ComponentId t : sim.JobTrays(job)) {
      const std::string& r = topo.at(topo.RackOf(t)).name;
      if (out.empty() || out.back() != r) out.push_back(r);
    }
    return out;
  }
  size_t PhysicsCount(std::string_view what) const {
    size_t n = 0;
    for (const Event& e : events.events())
      if (const auto* p = std::get_if<PhysicsChanged>(&e.body)) n += p->what == what;
    return n;
  }
  // The last power_lost or power_up of `rack`: whether it has power now (true if it never changed).
  bool Powered(std::string_view rack) const {
    bool powered = true;
    for (const Event& e : events.events())
      if (const auto* p = std::get_if<PhysicsChanged>(&e.body); p && p->component == Id(rack))
        powered = p->what == "power_lost" ? false : p->what == "power_up" ? true : powered;
    return powered;
  }
  // Every JobChanged of `job`, in order.
  std::vector<JobChanged> Changes(JobId job) const {
    std::vector<JobChanged> out;
    for (const Event& e : events.events())
      if (const auto* c = std::get_if<JobChanged>(&e.body); c && c->job == job) out.push_back(*c);
    return out;
  }
  Topology topo;
  VirtualClock clock;
  EventLog events;
  SimBackend sim;
  Recorder seen;
};

}  // namespace rackchaos::cluster::testing
