// `rackchaos blast COMPONENT --plan P` and `rackchaos spof --plan P [--threshold N]`: the static
// dependency analysis of cluster/dependency.h applied to a plan's cluster and the placement its jobs
// get when the run starts (cluster/placement.h: the simulator's own rule, without a simulator, so the
// same trays a run would use).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cluster/placement.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

struct BlastArgs {
  std::string plan;
  std::string component;  // blast only: a component or NVLink port name
  size_t threshold = 72;  // spof only: more GPUs than this (or a whole NVLink domain) qualifies
};

// Per job of `spec`, the trays it is placed on when the run starts (empty if it stays queued) and the
// spines its groups cross there (cluster::PlaceAtStart and cluster::CrossingOf).
struct Placed {
  std::vector<ComponentId> trays;
  cluster::SpineCrossing spines;
};
std::vector<Placed> InitialPlacement(const RunSpec& spec);

// The report texts; `target` must resolve in spec.topology (NotFound with examples otherwise).
Result<std::string> RenderBlast(const RunSpec& spec, const std::string& target);
std::string RenderSpof(const RunSpec& spec, size_t threshold);

// The subcommands: 0 with the report on stdout, 2 for bad input (plan, component) on stderr.
int CmdBlast(const BlastArgs& args);
int CmdSpof(const BlastArgs& args);

}  // namespace rackchaos::runner
