// The report database schema and its forward migrations.
//
// `PRAGMA user_version` holds the schema version; `PRAGMA application_id` marks the file as a rackchaos
// report. Migration step N takes a database from version N-1 to N inside one transaction, so a crash
// mid-migration leaves the previous version intact. Adding version 2 means writing one function and
// appending one row to the table in schema.cpp; old databases are upgraded when opened read-write.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reports/sqlite_db.h"

namespace rackchaos::reports {

// 'RCHR', stored in the SQLite header so other tools (and we) can tell a report from any database.
inline constexpr int64_t kReportApplicationId = 0x52434852;

struct Migration {
  int version;              // the user_version once this step has run
  const char* description;  // recorded in the schema_history table
  Status (*apply)(Db& db);  // runs inside the step's transaction; must not commit
};

// The steps this build knows, in order: element i has version i+1.
std::span<const Migration> SchemaMigrations();
// The version a database has after every step of SchemaMigrations().
int LatestSchemaVersion();

// Reads the version of an open database and checks it can be used with `steps`:
// kCorrupt when the file is not an SQLite database, kInvalidArgument when it is another program's
// database, kNotSupported when its version is newer than the last step (the file is not touched).
Result<int> CheckSchemaVersion(Db& db, std::span<const Migration> steps);

// Version 3 stores each event once, in the typed table of its kind; `events` is a view over them
// (reports/schema_events.cpp). EventsSelect is the SELECT behind it without its ORDER BY: one arm per
// typed table, aliased x, each giving run_id, seq, t_us, type, component_id, job_id, fault_id and the
// computed detail. `where` (e.g. "x.run_id = ?1"), when not empty, filters every arm. Ordered by seq
// (or run_id, seq), SQLite merges the arms in key order instead of sorting them.
std::string EventsSelect(std::string_view where = {});
// The migration step to version 3: moves a version 2 `events` table into the typed tables.
Status StoreEventsOnce(Db& db);
// The migration step to version 7: a job's tray list is stored once per placement, in `placements`,
// and job_events rows refer to it by placement_id instead of carrying the list (25,000 ids for a
// 100k-GPU job, in each of its state changes). A placement row holds the whole list, or the trays
// added to and removed from an earlier placement (base_id) of the job: a restart that replaces one
// drained tray stores two ids. The view job_placements gives each job event with its placement row.
Status StorePlacementsOnce(Db& db);
// The migration step to version 12 (reports/schema_views.cpp): event_log, fault_timeline and
// fault_summary are recreated with the same columns and rows, reaching components through
// run_topologies, topologies and topology_components by key instead of through the `components` view.
// Each row of these views costs a few index lookups: one run's rows of a 1,778-rack file take
// milliseconds, not a build of all 573,421 component rows.
Status ViewsByTopologyKeys(Db& db);

// Applies every step newer than the database's version, one transaction per step. Safe against a
// concurrent opener: the version is re-read after the write lock is taken.
Status Migrate(Db& db, std::span<const Migration> steps);

}  // namespace rackchaos::reports
