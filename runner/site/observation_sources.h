// The observation sources of a real run, made from the inventory: one list of factories, so that a
// new kind of source (the SSH commands here, Prometheus, ...) is one line in MakeObservationSources.
//
// Threading: the run's thread. The context may be a temporary; the references it holds (inventory,
// topology, pool, clock, host maps) must outlive the sources.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/topology.h"
#include "core/clock.h"
#include "core/status.h"
#include "runner/site/inventory.h"
#include "runner/site/observation_source.h"
#include "runner/site/observe/host_map.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::runner {

// Renders a command template for a host, its env exported first (SshBackend::Render).
using CommandRenderer = std::function<Result<std::string>(const std::string& tmpl, const std::string& host,
                                                          const std::map<std::string, std::string>& values)>;

struct SourceContext {
  const Inventory& inv;
  const cluster::Topology& topo;
  ssh::SshPool& pool;
  Clock& clock;
  CommandRenderer render;
  const std::vector<observe::HostMap>& hosts;  // BuildHostMaps(inv, topo)
};

using SourceList = std::vector<std::unique_ptr<ObservationSource>>;
using SourceFactory = SourceList (*)(const SourceContext& ctx);

// Every source the inventory configures, in the order of the factory list.
SourceList MakeObservationSources(const SourceContext& ctx);

}  // namespace rackchaos::runner
