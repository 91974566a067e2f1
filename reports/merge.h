// `rackchaos report merge`: copies runs from report databases (shards of one campaign) into one.
//
// Every run is copied with all its rows in every per-run table, under a new run id in the
// destination; rows are copied as stored (nothing recomputed). Duplicates are skipped, not
// refused: a run whose key (plan_hash, seed, started_wall) is already in the destination is left
// out, so merging the same shard twice (or a shard into a file that already holds it) changes
// nothing. The key is what makes two runs the same run: the same plan text, the same seed, started
// at the same wall-clock second. A run still 'running' in the source is left out and counted: it has
// no verdict yet, and a frozen copy would keep its finished self out of a later merge.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct MergeCounts {
  int runs_copied = 0;
  int runs_skipped = 0;  // already present in the destination (same run key)
  int runs_running = 0;  // status 'running' in the source (in progress, or its process died): not copied
  int64_t rows_copied = 0;  // over all tables, runs included; a run counts its components even when
                            // the destination already had its topology (reports/topology_store.h)
};

// Copies every run of the report at `source_path` into `dest`, in source id order, in one
// transaction (all of the source or nothing). Fails with kNotFound when the source is absent,
// kInvalidArgument when it is not a rackchaos report or is the destination itself, kNotSupported
// when its schema is newer than this build. An older source is never modified: a copy of it in the
// system temp directory is migrated to the current schema and merged instead, so its rows arrive
// in the tables that hold them now.
Result<MergeCounts> MergeInto(ReportStore& dest, const std::string& source_path);

}  // namespace rackchaos::reports
