// Spare racks (SimOptions::spare_racks): whole racks kept free for jobs whose NVLink domain is lost. A job
// that comes back to the queue while a rack it ran on is UNHEALTHY (a switch tray lost in full-bandwidth
// mode, or power beyond the shelves' redundancy) or short of coolant flow (its CDU or pumps) may be placed
// on a spare rack's trays, after the regular trays and the hot spares; any other job waits. The scheduler
// records each move as a `spare_rack` action naming the spare rack. With regions each region keeps its
// own last N racks (SimOptions::region_spare_racks), and a job tries its own region first.
//
// Cost: only plans with spare racks pay anything (one pass over the requeued job's trays).
#include <set>

#include "cluster/sim_backend.h"
#include "cluster/spare_racks.h"

namespace rackchaos::cluster {

void SimBackend::MarkSpareRacks() {
  const auto& racks = topo_.racks();
  for (RackRange range : SpareRackRanges(topo_, opt_.spare_racks, opt_.region_spare_racks))
    for (int k = range.first; k < range.end; ++k)
      for (ComponentId tray : topo_.ChildrenOf(racks[static_cast<size_t>(k)]))
        if (topo_.at(tray).kind == Kind::kComputeTray) {
          spare_[slot(tray)] = TrayUse::kSpareRack;
          free_spare_rack_ += free_[slot(tray)];
        }
}

bool SimBackend::DomainLost(const Job& j) const {
  int last = -1;
  for (ComponentId tray : j.trays) {
    const int r = topo_.at(tray).rack;
    if (r == last) continue;
    last = r;
    const ComponentId rack = topo_.racks()[static_cast<size_t>(r)];
    if (DomainHealthOf(rack) == DomainHealth::kUnhealthy || rack_[static_cast<size_t>(r)].cdu_flow < 1) return true;
  }
  return false;
}

void SimBackend::NoteSpareRackUse(const Job& j) {
  std::set<ComponentId> racks;
  for (ComponentId tray : j.trays)
    if (spare_[slot(tray)] == TrayUse::kSpareRack) racks.insert(topo_.RackOf(tray));
  for (ComponentId rack : racks)
    Record(ActionTaken{
        "spare_rack", rack, j.id, true,
        "job '" + j.cfg.name + "' moved to spare rack " + topo_.at(rack).name + ": its NVLink domain was lost"});
}

std::string SimBackend::RecountFreeTrays() const {
  size_t free = 0, free_spare_rack = 0;
  std::string out;
  for (size_t k = 0; k < tray_.size(); ++k) {
    const Tray& t = tray_[k];
    const bool is_free = t.present && !t.booting && !t.drained && seat_[k].job == kNoJob;
    if (is_free != (free_[k] != 0)) out += "tray slot " + std::to_string(k) + " free_ is stale; ";
    free += is_free;
    free_spare_rack += is_free && opt_.spare_racks > 0 && spare_[k] == TrayUse::kSpareRack;
  }
  if (free != free_count_)
    out += "free_count_ " + std::to_string(free_count_) + ", recounted " + std::to_string(free) + "; ";
  if (free_spare_rack != free_spare_rack_)
    out += "free_spare_rack_ " + std::to_string(free_spare_rack_) + ", recounted " + std::to_string(free_spare_rack) + "; ";
  return out;
}

}  // namespace rackchaos::cluster
