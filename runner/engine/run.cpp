#include "runner/engine/run.h"

#include <algorithm>

#include "cluster/sim_backend.h"
#include "core/rng.h"
#include "healer/healer.h"
#include "runner/engine/watch.h"

namespace rackchaos::runner {

RunOutcome ExecuteRun(const Plan& plan, const RunSpec& spec, const RunOptions& options) {
  VirtualClock clock;
  RecordingSink events(RecordingSink::Mode::kBatched);
  Rng rng(spec.seed);
  cluster::SimOptions sim_options;
  sim_options.shrink_elastic = spec.policy.shrink;  // the scheduler side of remediation.shrink
  sim_options.spare_racks = spec.spare_racks;
  sim_options.region_spare_racks = spec.region_spare_racks;
  sim_options.region_link_gbytes_per_s = spec.region_link_gbytes_per_s;
  sim_options.region_link_background = spec.region_link_background;
  sim_options.object_store_gbytes_per_s = spec.object_store_gbytes_per_s;
  // The run's readers of GPU polls, the healer's detectors and the abort limits, say from which
  // temperature they act; polls that stay below every line are not made (SimOptions).
  sim_options.telemetry_interest_c =
      std::min(healer::Healer::GpuTemperatureLineC(spec.policy), Watch::GpuTemperatureLineC(spec));
  cluster::SimBackend sim(spec.topology, clock, rng.Fork("sim"), events, sim_options);
  return RunPlan(plan, spec, {sim, clock, events, std::nullopt, kGateCheckPeriod, /*serials_derived=*/true}, options);
}

}  // namespace rackchaos::runner
