// ReportStore::ReadRunEvents: a run's events rebuilt from the typed tables AppendEvents wrote them into,
// the inverse of store_events.cpp. What scoring a stored run again reads.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// "3,4,17" (JoinIds in store_events.cpp) back into ids.
std::vector<uint32_t> SplitIds(std::string_view text) {
  std::vector<uint32_t> ids;
  while (!text.empty()) {
    uint32_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec == std::errc()) ids.push_back(id);
    const size_t comma = text.find(',', static_cast<size_t>(end - text.data()));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ids;
}

JobState ParseJobState(const std::string& name) {
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kHung, JobState::kRestarting,
                     JobState::kFailed, JobState::kFinished})
    if (name == JobStateName(s)) return s;
  return JobState::kQueued;
}

// Every placement of the run by id, whole: a difference row is its base's trays without `removed`,
// plus `added` (bases come first: a difference refers to an earlier placement of the run).
Result<std::map<int64_t, TrayList>> ReadPlacements(Db& db, int64_t run, const std::string& what) {
  std::map<int64_t, TrayList> out;
  const char* sql = "SELECT id, base_id, trays, added, removed FROM placements WHERE run_id = ? ORDER BY id";
  RC_RETURN_IF_ERROR(ForEachRow(db, sql, run, what, [&](const Stmt& s) {
    if (s.IsNull(1)) {
      out[s.Int(0)] = TrayList(SplitIds(s.Text(2)));
      return;
    }
    auto base = out.find(s.Int(1));
    std::vector<ComponentId> trays = base == out.end() ? std::vector<ComponentId>{} : base->second.ids();
    std::vector<ComponentId> removed = SplitIds(s.Text(4));
    std::sort(removed.begin(), removed.end());
    std::erase_if(trays, [&](ComponentId t) { return std::binary_search(removed.begin(), removed.end(), t); });
    for (ComponentId t : SplitIds(s.Text(3))) trays.push_back(t);
    std::sort(trays.begin(), trays.end());
    out[s.Int(0)] = TrayList::Ascending(std::move(trays));
  }));
  return out;
}

using Sequenced = std::vector<std::pair<int64_t, Event>>;  // (seq, event)

// Reads one typed table: `sql` selects seq, t_us and the columns `make` turns into the event body.
template <typename MakeFn>
Status ReadTable(Db& db, const char* sql, int64_t run, const std::string& what, Sequenced& out, MakeFn make) {
  return ForEachRow(db, sql, run, what, [&](const Stmt& s) {
    out.push_back({s.Int(0), Event{Duration::Micros(s.Int(1)), make(s)}});
  });
}

}  // namespace

Result<std::vector<Event>> ReportStore::ReadRunEvents(int64_t run) const {
  const std::string what = ForRun("reading the typed events of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  Db& db = state_->db;
  RC_ASSIGN_OR_RETURN(auto placements, ReadPlacements(db, run, what));
  Sequenced rows;
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, injected_us, fault_id, kind, target_id, port, selector, detail "
                                   "FROM faults WHERE run_id = ?", run, what, rows, [](const Stmt& s) {
    return EventBody{FaultInjected{static_cast<FaultId>(s.Int(2)), s.Text(3), IdOr(s, 4, kNoComponent),
                                   s.IsNull(5) ? -1 : static_cast<int>(s.Int(5)), s.Text(6), s.Text(7)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, fault_id, detail FROM fault_reverts WHERE run_id = ?", run,
                               what, rows, [](const Stmt& s) {
    return EventBody{FaultReverted{IdOr(s, 2, kNoFault), s.Text(3)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, component_id, what, value, cause_fault_id FROM physics "
                                   "WHERE run_id = ?", run, what, rows, [](const Stmt& s) {
    return EventBody{PhysicsChanged{IdOr(s, 2, kNoComponent), s.Text(3), s.Double(4), IdOr(s, 5, kNoFault)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, detection_id, detector, component_id, symptom FROM detections "
                                   "WHERE run_id = ?", run, what, rows, [](const Stmt& s) {
    return EventBody{Detected{IdOr(s, 2, kNoDetection), s.Text(3), IdOr(s, 4, kNoComponent), s.Text(5)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, component_id, domain, detection_ids, reason FROM isolations "
                                   "WHERE run_id = ?", run, what, rows, [](const Stmt& s) {
    return EventBody{Isolated{IdOr(s, 2, kNoComponent), s.Text(3), SplitIds(s.Text(4)), s.Text(5)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, action, component_id, job_id, ok, detail FROM actions "
                                   "WHERE run_id = ?", run, what, rows, [](const Stmt& s) {
    return EventBody{ActionTaken{s.Text(2), IdOr(s, 3, kNoComponent), IdOr(s, 4, kNoJob), s.Int(5) != 0, s.Text(6)}};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, job_id, state, steps, step_time_s, speed, gpus, lost_work_us, "
                                   "cause_fault_id, detail, placement_id, store_lost_work_us, store_cause_fault_id "
                                   "FROM job_events WHERE run_id = ?", run, what, rows, [&](const Stmt& s) {
    JobChanged c{IdOr(s, 2, kNoJob), ParseJobState(s.Text(3)), s.Double(4), s.Double(5), s.Double(6),
                 static_cast<int>(s.Int(7)), Duration::Micros(s.Int(8)), IdOr(s, 9, kNoFault), s.Text(10), {}};
    const auto p = s.IsNull(11) ? placements.end() : placements.find(s.Int(11));
    if (p != placements.end()) c.trays = p->second;
    c.store_lost_work = Duration::Micros(s.Int(12));
    c.store_cause = IdOr(s, 13, kNoFault);
    return EventBody{std::move(c)};
  }));
  RC_RETURN_IF_ERROR(ReadTable(db, "SELECT seq, t_us, job_id, step FROM checkpoints WHERE run_id = ?", run, what, rows,
                               [](const Stmt& s) { return EventBody{Checkpointed{IdOr(s, 2, kNoJob), s.Double(3)}}; }));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Event> events;
  events.reserve(rows.size());
  for (auto& [seq, event] : rows) events.push_back(std::move(event));
  return events;
}

}  // namespace rackchaos::reports
