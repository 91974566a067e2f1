// One report database serve reads: read-only connections (reports::ReportStore::OpenReadOnly), pooled
// between requests so a page does not pay for opening and checking the schema each time.
//
// Read-only throughout: nothing here opens a file for writing, migrates it or rolls a journal back; a
// report that needs either is answered with a page that says so. WAL readers never block a run that is
// writing the file, and see what it committed as of their query. A connection is pooled only while the
// file's -shm exists (a WAL file some writer has open, or had): without it OpenReadOnly may have opened
// the file as immutable, which is safe for one request but not for a pooled connection that a later
// writer would make stale.
//
// Threading: Borrow is thread-safe; a Lease belongs to one thread until destroyed.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::serve {

class ReportDb {
 public:
  ReportDb(int index, std::string path) : index_(index), path_(std::move(path)) {}

  // A connection for one request; returned to the pool when the lease ends.
  class Lease {
   public:
    Lease(ReportDb& db, std::unique_ptr<reports::ReportStore> store) : db_(&db), store_(std::move(store)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease();
    const reports::ReportStore& store() const { return *store_; }

   private:
    ReportDb* db_;
    std::unique_ptr<reports::ReportStore> store_;
  };

  // kNotFound (no such file), kCorrupt (not a database), kUnavailable (locked past the busy timeout) or
  // kInvalidArgument (an older schema, or a killed writer's journal: it needs a read-write open).
  Result<Lease> Borrow();

  int index() const { return index_; }
  const std::string& path() const { return path_; }

 private:
  void Return(std::unique_ptr<reports::ReportStore> store);

  int index_;
  std::string path_;
  std::mutex mu_;
  std::vector<std::unique_ptr<reports::ReportStore>> idle_;
};

// The HTTP status that says why a database could not be read: 404, 500 (not a report), 503 (locked,
// needs a migration).
int HttpStatusFor(const Status& status);

}  // namespace rackchaos::serve
