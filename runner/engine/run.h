// A run of a validated plan on the simulated cluster: the simulator's composition root. It builds a
// VirtualClock, a batched RecordingSink and a SimBackend from the RunSpec and hands them to the
// engine (runner/engine/engine.h), which does the rest as for any backend. Same plan and seed, same
// report, byte for byte (apart from the run row's wall-clock and host columns).
#pragma once

#include "runner/engine/engine.h"

namespace rackchaos::runner {

RunOutcome ExecuteRun(const Plan& plan, const RunSpec& spec, const RunOptions& options);

}  // namespace rackchaos::runner
