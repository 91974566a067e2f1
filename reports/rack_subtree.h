// Internal to reports/: the components under a serial, shared by `history` and serve's rack page
// (reports/web_rack.cpp). Defined in reports/history.cpp.
#pragma once

#include <string>

#include "core/status.h"
#include "reports/sqlite_db.h"

namespace rackchaos::reports {

// SQL of (topology_id, id) rows: the components whose serial is parameter ?1, in every topology.
const char* RackRootsSql();
// Fills the connection's TEMP table history_subtree(topology_id, id) with the components with `serial`
// and everything under them. Writes only TEMP: works on a read-only connection.
Status FillRackSubtree(Db& db, const std::string& serial);

}  // namespace rackchaos::reports
