// Shared helpers for the healer tests: a built topology, names to ids, the shipped policies, and a
// harness that drives one detector through its DetectorContext on a virtual clock.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/catalogue.h"
#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "healer/detector.h"
#include "healer/policy.h"

namespace rackchaos::healer::testing {

inline cluster::Topology BuildTopology(int racks, int spare_trays) {
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, racks, spare_trays);
  REQUIRE(topo.ok());
  return std::move(topo).value();
}

// Two GB200 NVL72 racks with two spare trays each: 36 trays, 144 GPUs.
inline const cluster::Topology& Topo() {
  static const cluster::Topology kTopo = BuildTopology(2, 2);
  return kTopo;
}

// "r01.tray03.gpu2" -> its id in `topo`; fails the test for an unknown name.
inline ComponentId Id(std::string_view name, const cluster::Topology& topo = Topo()) {
  auto id = topo.Find(name);
  INFO("component: ", std::string(name));
  REQUIRE(id.has_value());
  return *id;
}

// A fault's metrics in a run by its id; fails the test when the run has none.
inline const FaultMetrics& Fault(const RunMetrics& m, FaultId id) {
  for (const FaultMetrics& f : m.faults)
    if (f.fault == id) return f;
  FAIL("no metrics for fault ", id);
  return m.faults.front();
}

inline Policy Shipped(const std::string& name) {
  auto p = LoadPolicy(name);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return *p;
}

inline std::unique_ptr<Detector> MakeDetector(std::string_view name) {
  for (const DetectorInfo& info : DetectorTable())
    if (info.name == name) return info.make();
  FAIL("no detector named ", std::string(name));
  return nullptr;
}

struct Raised {
  Time at;
  Symptom symptom;
};

// One detector, its context, the symptoms it raised with the virtual time they were raised at, and
// the components whose symptoms it declared cleared.
// Feed() advances the clock to the observation's time first, so timers due before it run in order.
class DetectorHarness {
 public:
  explicit DetectorHarness(std::string_view detector, Policy policy = Shipped("default"),
                           const cluster::Topology& topo = Topo())
      : policy_(std::move(policy)),
        ctx_{topo, clock_, policy_, [this](Symptom s) { raised_.push_back({clock_.Now(), std::move(s)}); },
             [this](SymptomClass, ComponentId c) { cleared_.push_back(c); }},
        detector_(MakeDetector(detector)) {}

  void Feed(Time at, cluster::ObservationBody body) {
    REQUIRE(at >= clock_.Now());
    clock_.RunUntil(at);
    detector_->OnObservation({at, std::move(body)}, ctx_);
  }
  void RunUntil(Time t) { clock_.RunUntil(t); }

  VirtualClock& clock() { return clock_; }
  const std::vector<Raised>& raised() const { return raised_; }
  const std::vector<ComponentId>& cleared() const { return cleared_; }

 private:
  VirtualClock clock_;
  Policy policy_;
  std::vector<Raised> raised_;
  std::vector<ComponentId> cleared_;
  DetectorContext ctx_;
  std::unique_ptr<Detector> detector_;
};

inline Time Sec(int64_t s) { return Duration::Seconds(s); }
inline Time Min(int64_t m) { return Duration::Minutes(m); }

}  // namespace rackchaos::healer::testing
