// RecordingSink: where a run's events go. It keeps every event (the metrics and the live gates read
// them) and stores them in the report: in batches on the simulator, where a month of a large fleet is
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
  const std::vector<Event>& events() const { return log_.events(); }

 private:
  static constexpr size_t kBatch = 20000;

  Mode mode_;
  reports::ReportStore* store_ = nullptr;
  int64_t run_ = 0;
  EventSink* tee_ = nullptr;
  EventLog log_;
  std::vector<Event> batch_;  // the events being stored: one buffer for the whole run
  size_t flushed_ = 0;
  Status status_;
};

}  // namespace rackchaos::runner
