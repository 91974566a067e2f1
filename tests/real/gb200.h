// One GB200 NVL72 rack's topology, for the real-mode tests that map a site onto it.
#pragma once

#include <doctest/doctest.h>

#include <utility>

#include "cluster/catalogue.h"
#include "cluster/topology.h"

namespace rackchaos::runner::testing {

inline cluster::Topology Gb200() {
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, 1, 0);
  REQUIRE(topo.ok());
  return std::move(*topo);
}

}  // namespace rackchaos::runner::testing
