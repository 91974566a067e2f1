// An imported incident (`rackchaos replay`, runner/incident/) kept with the replay run it became: the
// files read, the import counts, every event (schema version 13: incident_events) and every pattern of
// the lines not understood (incident_patterns). Plain rows: reports/ knows nothing of the importers.
//
// Tables (per run, so `report merge` copies them; times are seconds on the event's axis: Unix seconds
// UTC for 'wall', seconds on the incident's own axis for 'relative' (dmesg uptimes), NULL for 'none'):
//   incident_imports(run_id, files, lines, bytes, understood, not_understood, dropped_events, overlong_lines)
//   incident_files(run_id, file, path)
//   incident_events(run_id, seq, file, line, axis, time_s, kind, host, address, iface, code, link,
//                   recovery_action, rank, device, severity, action, job, caused_by, detail)
//   incident_patterns(run_id, ord, pattern, count, file, first_line)     most frequent first
// caused_by is the seq of the event an Xid follows from (NULL: none).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct IncidentEventRow {
  int file = 0;
  int64_t line = 0;
  std::string axis;  // "none", "wall", "relative"
  std::optional<double> time_s;
  std::string kind, host, address, iface;
  std::optional<int64_t> code, link, recovery_action, rank, device;
  std::string severity, action, job;
  std::optional<int64_t> caused_by;
  std::string detail;
};

struct IncidentPatternRow {
  std::string pattern;
  int64_t count = 0;
  int file = 0;
  int64_t first_line = 0;
};

struct IncidentRecord {
  std::vector<std::string> files;
  int64_t lines = 0, bytes = 0, understood = 0, not_understood = 0, dropped_events = 0, overlong_lines = 0;
  std::vector<IncidentEventRow> events;       // seq = index
  std::vector<IncidentPatternRow> patterns;   // ord = index
};

// Stores `incident` for `run` in one transaction, replacing what the run had. kNotFound for an
// unknown run; SQLite errors as the store reports them.
Status StoreIncident(ReportStore& store, int64_t run, const IncidentRecord& incident);
// The incident stored with `run`; empty (no files) when the run has none.
Result<IncidentRecord> ReadIncident(const ReportStore& store, int64_t run);

// The migration step to version 13 (reports/schema.cpp): creates the four tables.
Status AddIncidentTablesV13(Db& db);

}  // namespace rackchaos::reports
