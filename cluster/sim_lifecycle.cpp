// SimBackend's side of a run's lifecycle (cluster/backend.h). The simulator has nothing to bring up or
// shut down, and its fault verbs act the instant they are called, so its group lead is zero and the
// defaults serve for everything else: a simulated run's cluster ends with it.
#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

// Every serial is "SIM-<model>-" + the part's name; the report derives them from the prefix.
std::string SimBackend::SerialPrefix() const { return "SIM-" + ctx_.topo().model().name + "-"; }

Status SimBackend::StartJobs(const std::vector<JobConfig>& jobs) {
  for (const JobConfig& j : jobs) RC_RETURN_IF_ERROR(AddJob(j).status());
  return Status::Ok();
}

// Jobs are placed and heartbeats start when the simulation starts.
void SimBackend::StartObserving() { Start(); }

int SimBackend::JobsRunning() const {
  int up = 0;
  for (size_t j = 0; j < scheduler_.jobs().size(); ++j) up += JobStateOf(static_cast<JobId>(j)) == JobState::kRunning;
  return up;
}

}  // namespace rackchaos::cluster
