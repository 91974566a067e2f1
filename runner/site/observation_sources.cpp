#include "runner/site/observation_sources.h"

#include "runner/site/prometheus_source.h"
#include "runner/site/ssh_sources.h"

namespace rackchaos::runner {
namespace {

SourceList PrometheusSources(const SourceContext& ctx) {
  SourceList out;
  if (auto s = MakePrometheusSource(ctx.inv, ctx.topo)) out.push_back(std::move(s));
  return out;
}

}  // namespace

SourceList MakeObservationSources(const SourceContext& ctx) {
  // One line per kind of source; each returns nothing when the inventory does not configure it.
  static const SourceFactory kFactories[] = {
      MakeSshSources,
      PrometheusSources,
  };
  SourceList out;
  for (SourceFactory make : kFactories)
    for (auto& s : make(ctx)) out.push_back(std::move(s));
  return out;
}

}  // namespace rackchaos::runner
