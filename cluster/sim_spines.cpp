// Spine switches of the simulated scale-out fabric (two-tier fat tree, topology.h). Every leaf spreads
// its up ports over every spine, so traffic between leaf groups is spread over all of them (ECMP). A
// lost spine (failed, or taken out by the healer) takes its share: a job whose trays span leaf groups
// keeps (S - lost) / S of its scale-out bandwidth while its traffic re-routes over the others, and
// hangs when none is left. Jobs inside one leaf group never cross a spine. The fabric manager reports
// the spine's health at its next poll. With three tiers (topology.h) a spine carries its own pod's traffic and
// the super-spines carry the traffic between pods, with the same rule one tier up.
//
// Cost: a spine change refreshes the jobs that span leaf groups, checking each job's trays once (a
// grouped job: the pods its spanning groups touch, noted at placement).
#include <algorithm>

#include "cluster/sim_fabric.h"
#include "cluster/sim_scheduler.h"

namespace rackchaos::cluster {

Status Fabric::SetSpineFailed(ComponentId spine, bool failed, FaultId cause) {
  return SetSpine(spine, failed, spine_out_[SpineIndex(spine)], cause);
}

Status Fabric::TakeSpineOut(ComponentId spine, bool out) {
  return SetSpine(spine, spine_failed_[SpineIndex(spine)], out, kNoFault);
}

Status Fabric::SetSpine(ComponentId spine, bool failed, bool taken_out, FaultId cause) {
  const size_t k = SpineIndex(spine);
  const bool was_failed = spine_failed_[k], was_out = spine_out_[k], was_lost = was_failed || was_out;
  spine_failed_[k] = failed;
  spine_out_[k] = taken_out;
  if (failed != was_failed) {
    ctx_.Physics(spine, failed ? "failed" : "repaired", 0, cause);
    ctx_.PartHealth(spine, !failed);
    if (failed) spine_causes_[k] = cause;
  }
  if (taken_out != was_out) ctx_.Physics(spine, taken_out ? "taken_out" : "returned", 0, kNoFault);
  const bool lost = failed || taken_out;
  if (!lost) spine_causes_.erase(k);  // back in service: its fault no longer slows anyone
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
void Fabric::DiagnoseSpine(ComponentId spine) {
  clock_.CallAfter(topo_.model().diagnostic_time, [this, spine] {
    ctx_.SettleOwed();
    const bool failed = spine_failed_[SpineIndex(spine)];
    ctx_.Emit(DiagnosticResult{spine, !failed, failed ? topo_.at(spine).name + " not responding" : "all checks passed"},
              clock_.Now());
  });
}

// A job spanning leaf groups crosses the spines of every pod it touches; spanning pods, the super-spines.
// A grouped job: only its DP and PP groups that span leaf groups do (CrossingOf, KindSpineShare).
double Fabric::SpineShare(const SimJob& j, FaultId& cause) const {
  if ((spines_lost_ == 0 && super_spines_lost_ == 0) || j.at.trays.ids().empty()) return 1;
  const SpineCrossing c = CrossingOf(topo_, j.cfg, j.at);
  FaultId dp_cause = kNoFault, pp_cause = kNoFault;
  const double dp = GroupsShare(c.dp, dp_cause), pp = GroupsShare(c.pp, pp_cause);
  if (std::min(dp, pp) < 1) cause = dp <= pp ? dp_cause : pp_cause;
  return std::min(dp, pp);
}

// The share of scale-out bandwidth left to a kind of group (DP or PP) of a job: its groups that span
// leaf groups cross the spines of the pods their ranks sit in, and the super-spines when one spans pods.
// Groups inside one leaf group, or one domain, cross no spine.
double Fabric::KindSpineShare(const SimJob& j, int kind, FaultId& cause) const {
  if (spines_lost_ == 0 && super_spines_lost_ == 0) return 1;
  const SpineCrossing c = CrossingOf(topo_, j.cfg, j.at);
  return GroupsShare(kind == kDp ? c.dp : c.pp, cause);
}

double Fabric::GroupsShare(const SpineCrossing::Groups& g, FaultId& cause) const {
  return g.pods.empty() ? 1 : PodsShare(g.pods, g.spans_pods, cause);
}

template <typename Pods>
double Fabric::PodsShare(const Pods& pods, bool spans_pods, FaultId& cause) const {
  double share = 1;
  for (int p : pods) {
    const double in_pod = topo_.SpinesInPod(p);
    share = std::min(share, (in_pod - static_cast<double>(pod_spines_lost_[static_cast<size_t>(p)])) / in_pod);
  }
  if (spans_pods && super_spines_lost_ > 0) {
    const double total = static_cast<double>(topo_.super_spines().size());
    share = std::min(share, (total - static_cast<double>(super_spines_lost_)) / total);
  }
  if (share < 1) cause = LostSpineCause(pods, spans_pods);
  return share;
}

// The fault behind a lost spine the traffic crosses (of `pods`, or a super-spine when it spans pods):
// a failed one first, else one the healer still keeps out after its repair; the lowest-numbered of
// those. None when only spines taken out without a fault (a false isolation) are lost.
template <typename Pods>
FaultId Fabric::LostSpineCause(const Pods& pods, bool spans_pods) const {
  const size_t spines = topo_.spines().size();
  for (bool failed_only : {true, false})
    for (const auto& [k, fault] : spine_causes_) {
      const bool crossed = k >= spines
                               ? spans_pods
                               : std::find(pods.begin(), pods.end(), topo_.PodOfSpine(topo_.spines()[k])) != pods.end();
      if (crossed && fault != kNoFault && (spine_failed_[k] || !failed_only)) return fault;
    }
  return kNoFault;
}

void Fabric::RefreshCrossLeafJobs() {
  for (const SimJob& j : job_list_) {
    if (j.state != JobState::kRunning && j.state != JobState::kHung) continue;
    const auto& trays = j.at.trays.ids();
    if (trays.empty()) continue;
    const int group = topo_.LeafGroupOfRack(topo_.at(trays.front()).rack);
    if (topo_.LeafGroupOfRack(topo_.at(trays.back()).rack) != group) jobs_.RefreshJob(j.id);
  }
}

}  // namespace rackchaos::cluster
