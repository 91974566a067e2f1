#include "runner/engine/run.h"

#include <algorithm>

#include "cluster/sim_backend.h"
#include "core/rng.h"

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
  // What the run's readers of GPU temperature act on: the healer's thermal alert (reached as `>=`) and a
  // live abort limit (`>`); telemetry that stays below both needs no polls (SimOptions).
  sim_options.telemetry_interest_c = spec.policy.thermal_temperature_c;
  if (spec.abort.gpu_temperature)
    sim_options.telemetry_interest_c = std::min(sim_options.telemetry_interest_c, static_cast<double>(*spec.abort.gpu_temperature));
  cluster::SimBackend sim(spec.topology, clock, rng.Fork("sim"), events, sim_options);
  return RunPlan(plan, spec, {sim, clock, events, std::nullopt, kGateCheckPeriod, /*serials_derived=*/true}, options);
}

}  // namespace rackchaos::runner
