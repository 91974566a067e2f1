// RecordingSink: where a run's events go. It keeps every event (the metrics and the live gates read
// them; a real run that needs neither while it runs may drop them once stored) and stores them in the report: in batches on the simulator, where a month of a large fleet is
// millions of events and a crash loses little, or each as it happens on real hosts, where events are
// few and a crash must lose none.
//
// The composition root builds it before the backend (which records into it) and the engine attaches
// it to the report once the run row exists; events recorded before that are stored then. Not
// thread-safe: the run's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/event.h"
#include "reports/store.h"

namespace rackchaos::runner {

class RecordingSink : public EventSink {
 public:
  enum class Mode { kBatched, kWriteThrough };
  explicit RecordingSink(Mode mode) : mode_(mode) {}

  // Stores from now on into `run` of `store` (which must outlive the sink's use).
  void Attach(reports::ReportStore& store, int64_t run);
  // Every event recorded from now on also goes to `tee` (live metrics; null: none). It must outlive
  // its use or be replaced by null first.
  void Tee(EventSink* tee) { tee_ = tee; }
  void Record(const Event& e) override;
  // Stores what is not stored yet. The first failure, also of an earlier store, sticks.
  Status Flush();
  const Status& status() const { return status_; }
  // Every event recorded, unless DropStored(): then only those not stored yet.
  const std::vector<Event>& events() const { return events_; }
  // Write-through only (no-op otherwise): from now on an event leaves memory once it is stored, so
  // that a long real run's memory does not grow with its events. For runs where nothing reads
  // events() while they run (no continuous gate, no live metrics); the run's events are then read
  // back from the store to score it (ReportStore::ReadRunEvents). Dropped events are not reported to
  // be stored again.
  void DropStored();
  bool keeps_all() const { return !drop_stored_; }
  bool write_through() const { return mode_ == Mode::kWriteThrough; }

 private:
  static constexpr size_t kBatch = 20000;

  Mode mode_;
  reports::ReportStore* store_ = nullptr;
  int64_t run_ = 0;
  EventSink* tee_ = nullptr;
  std::vector<Event> events_;  // see events()
  size_t flushed_ = 0;         // how many of events_ are stored
  bool drop_stored_ = false;
  Status status_;
};

}  // namespace rackchaos::runner
