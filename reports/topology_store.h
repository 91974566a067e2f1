// Internal to reports/: a run's components, stored once per database (schema version 8).
//
// Runs of the same cluster share one topology. `topologies` has one row per distinct component list,
// found by a digest of its rows; `topology_components` holds its rows, where a serial that is the
// topology's `serial_prefix` followed by the component's name (every simulated part:
// "SIM-gb200-nvl72-" + name) is stored as NULL; `run_topologies` says which topology each run has.
// The view `components` joins them back into the rows of version 7, so queries that read `components`
// see the same rows as before. Views and queries over many rows must not read it on the right of a
// LEFT JOIN (SQLite then builds it whole): they join these tables by key (reports/schema_views.cpp).
// A sweep of seeds on one cluster stores its 500,000 components once, not once per seed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"

namespace rackchaos::reports {

// A component list by reference. With `derived_prefix`, a row whose serial is empty has that prefix
// followed by its name; without, every serial is as given.
struct ComponentList {
  std::span<const ComponentRef> rows;
  std::optional<std::string_view> derived_prefix;
};

// References to `rows` (which must outlive them), every serial as given.
std::vector<ComponentRef> RefsTo(const std::vector<ComponentRow>& rows);

// Identifies a component list: a 128-bit digest of its ids, names, kinds, parents and serials, in
// order, and its length ("<32 hex digits>-<rows>"). Not cryptographic: reports are not a trust boundary.
// The same rows give the same digest whether their serials are spelled out or derived.
std::string TopologyDigest(const ComponentList& rows);
std::string TopologyDigest(const std::vector<ComponentRow>& rows);

// The id of the topology with exactly these rows; inserts it unless the database already has one
// with the same digest. Runs inside the caller's transaction. A row that breaks a constraint (a
// repeated id) fails with kInternal naming the row: "<what> (<name>)<SQLite's message>".
// The file's first topology is indexed after its rows (its secondary indexes dropped and built again
// in the transaction): no other statement of `db` may be stepping then, or SQLite refuses the drop
// (kUnavailable, "database table is locked") and nothing is stored.
Result<int64_t> StoreTopology(Db& db, const ComponentList& rows, const std::string& what);
Result<int64_t> StoreTopology(Db& db, const std::vector<ComponentRow>& rows, const std::string& what);

// The migration step to version 8: creates the three tables, moves each run's rows of the
// `components` table into them (runs with the same rows share one topology) and replaces the table
// by the view.
Status StoreTopologiesOnce(Db& db);

}  // namespace rackchaos::reports
