#include "runner/site/observation_sources.h"

#include "runner/site/ssh_sources.h"

namespace rackchaos::runner {

SourceList MakeObservationSources(const SourceContext& ctx) {
  // One line per kind of source; each returns nothing when the inventory does not configure it.
  static const SourceFactory kFactories[] = {
      MakeSshSources,
  };
  SourceList out;
  for (SourceFactory make : kFactories)
    for (auto& s : make(ctx)) out.push_back(std::move(s));
  return out;
}

}  // namespace rackchaos::runner
