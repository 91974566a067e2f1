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

// A 72-GPU job checkpointing every 20 minutes (30 s writes) with a 48 TB checkpoint: 16 minutes alone
// on a 50 GB/s region link.
inline JobConfig Copying() {
  JobConfig cfg = Job(72);
  cfg.checkpoint_interval = Duration::Minutes(20);
  cfg.checkpoint_write = Duration::Seconds(30);
  cfg.checkpoint_size_gb = 48000;
  cfg.checkpoint_copy = Duration::Seconds(960);
  return cfg;
}

// A Harness on TwoRegions(), with the event filters the region tests share.
struct Regions : Harness {
  explicit Regions(SimOptions options = {}, uint64_t seed = 42) : Harness(TwoRegions(), seed, options) {}
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
};

}  // namespace rackchaos::cluster::testing
