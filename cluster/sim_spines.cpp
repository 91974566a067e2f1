// Spine switches of the simulated scale-out fabric (two-tier fat tree, topology.h). Every leaf spreads
// its up ports over every spine, so traffic between leaf groups is spread over all of them (ECMP). A
// lost spine (failed, or taken out by the healer) takes its share: a job whose trays span leaf groups
// keeps (S - lost) / S of its scale-out bandwidth while its traffic re-routes over the others, and
// hangs when none is left. Jobs inside one leaf group never cross a spine. The fabric manager reports
// the spine's health at its next poll. With three tiers (topology.h) a spine carries its own pod's traffic and
// the super-spines carry the traffic between pods, with the same rule one tier up.
//
// Cost: a spine change refreshes the jobs that span leaf groups, checking each job's trays once.
#include <algorithm>
#include <set>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

Status SimBackend::SetSpine(ComponentId spine, bool failed, bool taken_out, FaultId cause) {
  const size_t k = SpineIndex(spine);
  const bool was_failed = spine_failed_[k], was_out = spine_out_[k], was_lost = was_failed || was_out;
  spine_failed_[k] = failed;
  spine_out_[k] = taken_out;
  if (failed != was_failed) {
    Physics(spine, failed ? "failed" : "repaired", 0, cause);
    PartHealth(spine, !failed);
    if (failed) spine_cause_ = cause;
  }
  if (taken_out != was_out) Physics(spine, taken_out ? "taken_out" : "returned", 0, kNoFault);
  const bool lost = failed || taken_out;
  if (lost == was_lost) return Status::Ok();
  size_t& count = topo_.at(spine).kind == Kind::kSuperSpine ? super_spines_lost_ : spines_lost_;
  count = lost ? count + 1 : count - 1;
  if (topo_.at(spine).kind == Kind::kSpine) {
    size_t& pod = pod_spines_lost_[static_cast<size_t>(topo_.PodOfSpine(spine))];
    pod = lost ? pod + 1 : pod - 1;
  }
  RefreshCrossLeafJobs();
  return Status::Ok();
}

// The spine's self-test (the fabric manager's health check): passes when the switch itself works.
Status SimBackend::DiagnoseSpine(ComponentId spine) {
  clock_.CallAfter(topo_.model().diagnostic_time, [this, spine] {
    const bool failed = spine_failed_[SpineIndex(spine)];
    Emit(DiagnosticResult{spine, !failed, failed ? topo_.at(spine).name + " not responding" : "all checks passed"},
         clock_.Now());
  });
  return Status::Ok();
}

// A job spanning leaf groups crosses the spines of every pod it touches; spanning pods, the super-spines.
double SimBackend::SpineShare(const Job& j, FaultId& cause) const {
  const auto& trays = j.trays.ids();
  if ((spines_lost_ == 0 && super_spines_lost_ == 0) || trays.empty()) return 1;
  const int group = topo_.LeafGroupOfRack(topo_.at(trays.front()).rack);
  bool spans = false;
  std::set<int> pods;
  for (ComponentId t : trays) {
    spans = spans || topo_.LeafGroupOfRack(topo_.at(t).rack) != group;
    pods.insert(topo_.PodOfRack(topo_.at(t).rack));
  }
  if (!spans) return 1;
  double share = 1;
  for (int p : pods) {
    const double in_pod = topo_.SpinesInPod(p);
    share = std::min(share, (in_pod - static_cast<double>(pod_spines_lost_[static_cast<size_t>(p)])) / in_pod);
  }
  if (pods.size() > 1 && super_spines_lost_ > 0) {
    const double total = static_cast<double>(topo_.super_spines().size());
    share = std::min(share, (total - static_cast<double>(super_spines_lost_)) / total);
  }
  if (share < 1) cause = spine_cause_;
  return share;
}

void SimBackend::RefreshCrossLeafJobs() {
  for (Job& j : jobs_) {
    if (j.state != JobState::kRunning && j.state != JobState::kHung) continue;
    const auto& trays = j.trays.ids();
    if (trays.empty()) continue;
    const int group = topo_.LeafGroupOfRack(topo_.at(trays.front()).rack);
    if (topo_.LeafGroupOfRack(topo_.at(trays.back()).rack) != group) RefreshJob(j.id);
  }
}

}  // namespace rackchaos::cluster
