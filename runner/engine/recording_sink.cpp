#include "runner/engine/recording_sink.h"

#include <span>

namespace rackchaos::runner {

void RecordingSink::Attach(reports::ReportStore& store, int64_t run) {
  store_ = &store;
  run_ = run;
  if (mode_ == Mode::kWriteThrough) (void)Flush();
}

void RecordingSink::Record(const Event& e) {
  events_.push_back(e);
  if (tee_) tee_->Record(e);
  if (!store_) return;
  if (mode_ == Mode::kWriteThrough || events_.size() - flushed_ >= kBatch) (void)Flush();
}

void RecordingSink::DropStored() {
  if (mode_ != Mode::kWriteThrough) return;
  drop_stored_ = true;
  if (store_) (void)Flush();
}

Status RecordingSink::Flush() {
  if (!store_ || flushed_ == events_.size() || !status_.ok()) return status_;
  // The events not stored yet, in place: no copy of each event's strings per flush.
  status_ = store_->AppendEvents(run_, std::span<const Event>(events_).subspan(flushed_));
  if (!status_.ok()) return status_;
  flushed_ = events_.size();
  if (drop_stored_) {
    events_.clear();
    flushed_ = 0;
  }
  return status_;
}

}  // namespace rackchaos::runner
