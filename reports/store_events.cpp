// ReportStore::AppendEvents, ReadEvents and CountEvents. Since schema version 3 every event is one row
// in the typed table of its kind; the `events` view unions them and computes the detail text, so the
// write path formats nothing.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "reports/schema.h"
#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// The typed tables in EventBody order: one row per event, keyed by (run_id, seq), the first three
// columns run_id, seq and the event time. The `events` view (schema.cpp) is their union.
struct EventTable {
  const char* name;
  const char* columns;
};
constexpr EventTable kEventTables[] = {
    {"faults", "run_id, seq, injected_us, fault_id, kind, target_id, port, selector, detail"},
    {"fault_reverts", "run_id, seq, t_us, fault_id, detail"},
    {"physics", "run_id, seq, t_us, component_id, what, value, cause_fault_id"},
    {"detections", "run_id, seq, t_us, detection_id, detector, component_id, symptom"},
    {"isolations", "run_id, seq, t_us, component_id, domain, detection_ids, reason"},
    {"actions", "run_id, seq, t_us, action, component_id, job_id, ok, detail"},
    {"job_events", "run_id, seq, t_us, job_id, state, steps, step_time_s, speed, gpus, lost_work_us, "
                   "cause_fault_id, detail, placement_id, store_lost_work_us, store_cause_fault_id"},
    {"checkpoints", "run_id, seq, t_us, job_id, step"},
};
// What `now` has that `was` lacks (added) and the reverse (removed), both lists sorted and without
// repeats: the same as two std::set_difference calls. A restart's new placement is its last one with a
// few trays changed, so equal stretches are skipped a block of ids at a time.
void SortedDiff(const std::vector<ComponentId>& was, const std::vector<ComponentId>& now,
                std::vector<ComponentId>& added, std::vector<ComponentId>& removed) {
  constexpr size_t kBlock = 16;
  size_t i = 0, j = 0;
  while (i < was.size() && j < now.size()) {
    while (i + kBlock <= was.size() && j + kBlock <= now.size() &&
           std::memcmp(&was[i], &now[j], kBlock * sizeof(ComponentId)) == 0) {
      i += kBlock;
      j += kBlock;
    }
    if (i == was.size() || j == now.size()) break;
    if (was[i] == now[j]) ++i, ++j;
    else if (was[i] < now[j]) removed.push_back(was[i++]);
    else added.push_back(now[j++]);
  }
  removed.insert(removed.end(), was.begin() + static_cast<std::ptrdiff_t>(i), was.end());
  added.insert(added.end(), now.begin() + static_cast<std::ptrdiff_t>(j), now.end());
}

constexpr size_t kTypes = std::size(kEventTables);
static_assert(kTypes == std::variant_size_v<EventBody>, "one typed table per event type");
constexpr size_t kFaultInjected = 0, kFaultReverted = 1;

// Rows per multi-row INSERT: one statement step per 64 events instead of per event.
constexpr int kRowsPerInsert = 64;
// Placements stored as a difference from the one before, at most this many in a row, and while the
// differences since the last whole list hold fewer ids than a quarter of the list: a reader rebuilds
// any list from one whole row and at most this many small ones, never reading more than 1.25 lists'
// worth of ids. (A bound of 32 rows stored the big job's 21,000-id list whole ~50 times a month: 7 MB of
// each seed's ~15 MB of writes at 1,778 racks.)
constexpr int kMaxDeltaChain = 1024;

int ColumnCount(const EventTable& t) {
  return 1 + static_cast<int>(std::count(t.columns, t.columns + std::strlen(t.columns), ','));
}

// The SQL this file runs, built once per process (thread-safe static init). Statement caches are keyed
// by the address of their text, so the text must live as long as the process.
struct EventSql {
  std::string insert_one[kTypes];
  std::string insert_many[kTypes];  // kRowsPerInsert rows
  std::string last_seq;             // the highest seq of run ?1 over every event table
  std::string count;                // the number of events of run ?1
};

const EventSql& Sql() {
  static const EventSql sql = [] {
    EventSql out;
    std::string max_seq, count;
    for (size_t i = 0; i < kTypes; ++i) {
      const EventTable& t = kEventTables[i];
      std::string row = "(?";
      for (int c = 1; c < ColumnCount(t); ++c) row += ", ?";
      row += ")";
      out.insert_one[i] = std::string("INSERT INTO ") + t.name + "(" + t.columns + ") VALUES " + row;
      out.insert_many[i] = out.insert_one[i];
      for (int r = 1; r < kRowsPerInsert; ++r) out.insert_many[i] += ", " + row;
      max_seq += std::string(i ? ", " : "") + "(SELECT coalesce(max(seq), 0) FROM " + t.name + " WHERE run_id = ?1)";
      count += std::string(i ? " + " : "") + "(SELECT count(*) FROM " + t.name + " WHERE run_id = ?1)";
    }
    out.last_seq = "SELECT max(" + max_seq + ")";
    out.count = "SELECT " + count;
    return out;
  }();
  return sql;
}

// What a row binds besides its event: joined ids (bound without copying, so they live until the
// statement has run) and the placement a job row refers to (0: none).
struct RowScratch {
  std::string ids;
  int64_t placement = 0;
};

// Detection and component ids share one integer type: "3,4". Written in place into room for the longest
// ids (10 digits and a comma each), then cut to length: a new placement is 25,000 ids, and appending them
// one at a time was 5% of the instructions of a 1,778-rack month.
void JoinIds(const std::vector<uint32_t>& ids, std::string& out) {
  out.resize(ids.size() * 11);
  char* p = out.data();
  char* const end = p + out.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) *p++ = ',';
    p = std::to_chars(p, end, ids[i]).ptr;
  }
  out.resize(static_cast<size_t>(p - out.data()));
}

// Binds the typed columns of one event from parameter `p` on (after run_id, seq and time). Text is
// bound without copying: the event, and `row` for joined ids, outlive the statement's step.
// One overload per event type, so a new type fails to compile until it is stored here (and shown
// by the events view in schema.cpp).
void BindTyped(Stmt& s, int p, const FaultInjected& e, RowScratch&) {
  s.Bind(p, static_cast<int64_t>(e.fault));
  s.BindStatic(p + 1, e.kind);
  BindId(s, p + 2, e.target, kNoComponent);
  if (e.port >= 0) s.Bind(p + 3, static_cast<int64_t>(e.port));
  else s.BindNull(p + 3);
  s.BindStatic(p + 4, e.selector);
  s.BindStatic(p + 5, e.detail);
}
void BindTyped(Stmt& s, int p, const FaultReverted& e, RowScratch&) {
  BindId(s, p, e.fault, kNoFault);
  s.BindStatic(p + 1, e.detail);
}
void BindTyped(Stmt& s, int p, const PhysicsChanged& e, RowScratch&) {
  BindId(s, p, e.component, kNoComponent);
  s.BindStatic(p + 1, e.what);
  s.Bind(p + 2, e.value);
  BindId(s, p + 3, e.cause, kNoFault);
}
void BindTyped(Stmt& s, int p, const Detected& e, RowScratch&) {
  BindId(s, p, e.detection, kNoDetection);
  s.BindStatic(p + 1, e.detector);
  BindId(s, p + 2, e.component, kNoComponent);
  s.BindStatic(p + 3, e.symptom);
}
void BindTyped(Stmt& s, int p, const Isolated& e, RowScratch& row) {
  JoinIds(e.because, row.ids);
  BindId(s, p, e.component, kNoComponent);
  s.BindStatic(p + 1, e.domain);
  s.BindStatic(p + 2, row.ids);
  s.BindStatic(p + 3, e.reason);
}
void BindTyped(Stmt& s, int p, const ActionTaken& e, RowScratch&) {
  s.BindStatic(p, e.action);
  BindId(s, p + 1, e.component, kNoComponent);
  BindId(s, p + 2, e.job, kNoJob);
  s.Bind(p + 3, static_cast<int64_t>(e.ok ? 1 : 0));
  s.BindStatic(p + 4, e.detail);
}
void BindTyped(Stmt& s, int p, const JobChanged& e, RowScratch& row) {
  BindId(s, p, e.job, kNoJob);
  s.BindStatic(p + 1, JobStateName(e.state));
  s.Bind(p + 2, e.steps);
  s.Bind(p + 3, e.step_time_s);
  s.Bind(p + 4, e.speed);
  s.Bind(p + 5, static_cast<int64_t>(e.gpus));
  s.Bind(p + 6, e.lost_work.us);
  BindId(s, p + 7, e.cause, kNoFault);
  s.BindStatic(p + 8, e.detail);
  if (row.placement > 0) s.Bind(p + 9, row.placement);
  else s.BindNull(p + 9);
  s.Bind(p + 10, e.store_lost_work.us);
  BindId(s, p + 11, e.store_cause, kNoFault);
}
void BindTyped(Stmt& s, int p, const Checkpointed& e, RowScratch&) {
  BindId(s, p, e.job, kNoJob);
  s.Bind(p + 1, e.step);
}

// Writes a batch's events into their typed tables. Events of the busy types are queued per table and
// inserted kRowsPerInsert at a time; faults and reverts go in at once and in order, because a revert
// closes the fault row its injection wrote. Queued events are borrowed: the batch must outlive Finish().
class EventWriter {
 public:
  EventWriter(ReportStore::State& state, int64_t run, const std::string& what)
      : state_(state), run_(run), what_(what) {
    for (auto& q : queued_) q.reserve(kRowsPerInsert);
  }

  Status Add(int64_t seq, const Event& event) {
    size_t type = event.body.index();
    if (type == kFaultInjected || type == kFaultReverted) return WriteNow(type, seq, event);
    int64_t placement = 0;
    if (const auto* job = std::get_if<JobChanged>(&event.body)) {
      RC_ASSIGN_OR_RETURN(placement, PlacementOf(*job));
    }
    queued_[type].push_back({seq, &event, placement});
    if (queued_[type].size() == kRowsPerInsert) return Flush(type);
    return Status::Ok();
  }

  // Inserts what is still queued.
  Status Finish() {
    for (size_t type = 0; type < kTypes; ++type) RC_RETURN_IF_ERROR(Flush(type));
    return Status::Ok();
  }

 private:
  struct Queued {
    int64_t seq;
    const Event* event;
    int64_t placement;  // of a job row: its placements row, 0 for none
  };

  // The placements row a job event refers to: the job's last one while the tray list is the same
  // (O(1) when it is the same shared list), else a new row. 0 for a job on no trays. A new placement
  // that differs from the job's last one in a few trays (a restart that replaced a drained tray) is
  // stored as that difference, within kMaxDeltaChain's bounds; then the whole list again.
  Result<int64_t> PlacementOf(const JobChanged& e) {
    if (e.trays.empty()) return int64_t{0};
    if (state_.placements_run != run_) {
      state_.placements_run = run_;
      state_.last_placement.clear();
    }
    auto& last = state_.last_placement[e.job];
    if (last.id > 0 && last.trays == e.trays) return last.id;
    if (next_placement_ == 0) {  // another writer may have added placements to this run since
      RC_ASSIGN_OR_RETURN(Stmt* max, state_.Cached("SELECT coalesce(max(id), 0) FROM placements WHERE run_id = ?", what_));
      max->Bind(1, run_);
      Result<bool> row = max->Step(what_);
      next_placement_ = (row.ok() && *row ? max->Int(0) : 0) + 1;
      max->Reset();
      if (!row.ok()) return row.status();
    }
    added_.clear();
    removed_.clear();
    bool delta = last.id > 0 && last.depth < kMaxDeltaChain && last.trays.sorted() && e.trays.sorted();
    if (delta) {
      const auto &was = last.trays.ids(), &now = e.trays.ids();
      SortedDiff(was, now, added_, removed_);
      delta = 4 * (last.chain + added_.size() + removed_.size()) < now.size();
    }
    RC_ASSIGN_OR_RETURN(Stmt* insert, state_.Cached(
        "INSERT INTO placements(run_id, id, job_id, base_id, trays, added, removed) VALUES (?, ?, ?, ?, ?, ?, ?)", what_));
    insert->Bind(1, run_);
    insert->Bind(2, next_placement_);
    BindId(*insert, 3, e.job, kNoJob);
    if (delta) insert->Bind(4, last.id);
    else insert->BindNull(4);
    if (delta) trays_text_.clear();
    else JoinIds(e.trays.ids(), trays_text_);
    JoinIds(added_, added_text_);
    JoinIds(removed_, removed_text_);
    insert->BindStatic(5, trays_text_);
    insert->BindStatic(6, added_text_);
    insert->BindStatic(7, removed_text_);
    RC_RETURN_IF_ERROR(insert->Run(what_));
    if (delta) last = {e.trays, next_placement_, last.depth + 1, last.chain + added_.size() + removed_.size()};
    else last = {e.trays, next_placement_, 0, 0};
    return next_placement_++;
  }

  // Binds one row from parameter `p` on; `row` must live until the statement has run.
  void BindRow(Stmt& s, int p, const Queued& q, RowScratch& row) {
    row.placement = q.placement;
    s.Bind(p, run_);
    s.Bind(p + 1, q.seq);
    s.Bind(p + 2, q.event->at.us);
    std::visit([&](const auto& body) { BindTyped(s, p + 3, body, row); }, q.event->body);
  }

  Status WriteNow(size_t type, int64_t seq, const Event& event) {
    RC_ASSIGN_OR_RETURN(Stmt* s, state_.Cached(Sql().insert_one[type].c_str(), what_));
    BindRow(*s, 1, {seq, &event, 0}, scratch_[0]);
    RC_RETURN_IF_ERROR(s->Run(what_));
    if (type != kFaultReverted) return Status::Ok();
    // Closes the most recent still-open injection of this fault; a revert without an injection
    // changes nothing here but stays visible in `events`.
    const auto& revert = std::get<FaultReverted>(event.body);
    RC_ASSIGN_OR_RETURN(Stmt* close, state_.Cached(
        "UPDATE faults SET reverted_us = ?, revert_detail = ? WHERE run_id = ? AND seq = "
        "(SELECT max(seq) FROM faults INDEXED BY faults_by_id WHERE run_id = ? AND fault_id = ? AND reverted_us IS NULL)",
        what_));
    close->Bind(1, event.at.us);
    close->BindStatic(2, revert.detail);
    close->Bind(3, run_);
    close->Bind(4, run_);
    close->Bind(5, static_cast<int64_t>(revert.fault));
    return close->Run(what_);
  }

  // Full groups go in with the many-row statement, the rest one row at a time.
  Status Flush(size_t type) {
    std::vector<Queued>& queue = queued_[type];
    const int columns = ColumnCount(kEventTables[type]);
    size_t done = 0;
    while (done < queue.size()) {
      bool many = queue.size() - done >= kRowsPerInsert;
      const std::string& sql = many ? Sql().insert_many[type] : Sql().insert_one[type];
      RC_ASSIGN_OR_RETURN(Stmt* s, state_.Cached(sql.c_str(), what_));
      int rows = many ? kRowsPerInsert : 1;
      for (int r = 0; r < rows; ++r, ++done) {
        BindRow(*s, 1 + r * columns, queue[done], scratch_[r]);
      }
      RC_RETURN_IF_ERROR(s->Run(what_));
    }
    queue.clear();
    return Status::Ok();
  }

  ReportStore::State& state_;
  int64_t run_;
  const std::string& what_;
  std::vector<Queued> queued_[kTypes];
  RowScratch scratch_[kRowsPerInsert];  // of the rows being bound
  std::vector<ComponentId> added_, removed_;               // of the placement being inserted
  std::string trays_text_, added_text_, removed_text_;  // and as text
  int64_t next_placement_ = 0;          // the next placements id of the run; 0 until read
};

}  // namespace

Status ReportStore::AppendEvents(int64_t run, std::span<const Event> events) {
  const std::string what = ForRun("appending events to", run);
  // One transaction per batch: a million inserts then cost one fsync, and a failed batch leaves
  // nothing half-written.
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* last, state_->Cached(Sql().last_seq.c_str(), what));
  last->Bind(1, run);
  Result<bool> row = last->Step(what);
  int64_t seq = row.ok() && *row ? last->Int(0) : 0;
  last->Reset();
  if (!row.ok()) return row.status();

  EventWriter writer(*state_, run, what);
  Status s = Status::Ok();
  for (size_t i = 0; i < events.size() && s.ok(); ++i) s = writer.Add(++seq, events[i]);
  if (s.ok()) s = writer.Finish();
  if (s.ok()) s = txn.Commit(what);
  // A batch that did not commit took its placements rows with it: forget them.
  if (!s.ok()) state_->placements_run = 0;
  return s;
}

Result<std::vector<EventRow>> ReportStore::ReadEvents(int64_t run, int64_t limit) const {
  const std::string what = ForRun("reading events of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  // The events view's SELECT filtered in every arm, so that SQLite merges the typed tables in seq
  // order rather than sorting a million rows. Columns as in `events`: run_id first.
  static const std::string sql = EventsSelect("x.run_id = ?1") + "\nORDER BY 2 LIMIT ?2";
  RC_ASSIGN_OR_RETURN(Stmt stmt, state_->db.Prepare(sql, what));
  stmt.Bind(1, run);
  stmt.Bind(2, limit);
  std::vector<EventRow> rows;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, stmt.Step(what));
    if (!row) break;
    rows.push_back({stmt.Int(1), Duration::Micros(stmt.Int(2)), stmt.Text(3),
                    IdOr(stmt, 4, kNoComponent), IdOr(stmt, 5, kNoJob), IdOr(stmt, 6, kNoFault),
                    stmt.Text(7)});
  }
  return rows;
}

Result<int64_t> ReportStore::CountEvents(int64_t run) const {
  const std::string what = ForRun("counting events of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RC_ASSIGN_OR_RETURN(Stmt* count, state_->Cached(Sql().count.c_str(), what));
  count->Bind(1, run);
  Result<bool> row = count->Step(what);
  int64_t n = row.ok() && *row ? count->Int(0) : 0;
  count->Reset();
  if (!row.ok()) return row.status();
  return n;
}

}  // namespace rackchaos::reports
