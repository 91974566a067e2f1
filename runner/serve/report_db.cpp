#include "runner/serve/report_db.h"

#include <filesystem>

namespace rackchaos::serve {
namespace {

// At most this many idle connections per database: one per server thread is enough.
constexpr size_t kMaxIdle = 8;
// A page waits at most this long for a writer's lock (a rollback-journal writer; WAL writers never
// lock readers out): then it says the database is busy.
constexpr int kBusyTimeoutMs = 1000;

}  // namespace

ReportDb::Lease::~Lease() {
  if (db_ && store_) db_->Return(std::move(store_));
}

Result<ReportDb::Lease> ReportDb::Borrow() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto store = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(store));
    }
  }
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return Status::NotFound("report database '" + path_ + "' does not exist");
  auto store = reports::ReportStore::OpenReadOnly(path_, {kBusyTimeoutMs});
  if (!store.ok()) return store.status();
  return Lease(*this, std::make_unique<reports::ReportStore>(std::move(*store)));
}

void ReportDb::Return(std::unique_ptr<reports::ReportStore> store) {
  std::error_code ec;
  if (!std::filesystem::exists(path_ + "-shm", ec)) return;  // maybe opened immutable: not kept
  std::lock_guard lock(mu_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(store));
}

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound: return 404;
    case StatusCode::kUnavailable:
    case StatusCode::kInvalidArgument: return 503;
    default: return 500;
  }
}

}  // namespace rackchaos::serve
