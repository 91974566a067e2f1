#include "runner/engine/recording_sink.h"

namespace rackchaos::runner {

void RecordingSink::Attach(reports::ReportStore& store, int64_t run) {
  store_ = &store;
  run_ = run;
  if (mode_ == Mode::kWriteThrough) (void)Flush();
}

void RecordingSink::Record(const Event& e) {
  log_.Record(e);
  if (tee_) tee_->Record(e);
  if (!store_) return;
  if (mode_ == Mode::kWriteThrough || log_.events().size() - flushed_ >= kBatch) (void)Flush();
}

Status RecordingSink::Flush() {
  if (!store_ || flushed_ == log_.events().size() || !status_.ok()) return status_;
  // A fresh 20,000-event vector per flush faulted in new pages each time: the buffer is reused.
  batch_.assign(log_.events().begin() + static_cast<long>(flushed_), log_.events().end());
  status_ = store_->AppendEvents(run_, batch_);
  if (status_.ok()) flushed_ = log_.events().size();
  return status_;
}

}  // namespace rackchaos::runner
