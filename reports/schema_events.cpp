// Schema version 3: each event stored once. The `events` and `event_log` views and the migration
// step that moves a version 2 `events` table into the typed tables.
#include <string>
#include <string_view>

#include "reports/schema.h"

namespace rackchaos::reports {
namespace {

// fault_reverts is new: before version 3 a revert lived only in `events` (and in the fault row it
// closed). A revert still closes its fault row too.
constexpr const char* kTables = R"sql(
CREATE TABLE fault_reverts(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, fault_id INTEGER,
  detail TEXT NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
-- Details written before version 3 that the events view does not reproduce verbatim; they win over
-- the computed text. Empty in files written since.
CREATE TABLE event_details(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
)sql";

// As in version 1, with the names looked up by scalar subqueries rather than joins: the query then
// stays a plain scan of `events`, so SQLite keeps that view's (run_id, seq) order and
// `SELECT ... FROM event_log LIMIT 40` reads 40 rows, not all of them.
constexpr const char* kEventLog = R"sql(
DROP VIEW event_log;
CREATE VIEW event_log AS
  SELECT e.run_id, e.seq, e.t_us, e.t_us / 1e6 AS t_s, e.type,
         (SELECT c.name FROM components c WHERE c.run_id = e.run_id AND c.id = e.component_id) AS component,
         (SELECT j.name FROM jobs j WHERE j.run_id = e.run_id AND j.id = e.job_id) AS job,
         e.fault_id, e.detail
  FROM events e;
)sql";

// SQL text of a double as "%.6g" prints it (SQLite alone would spell infinities "Inf").
std::string Num(const std::string& col) {
  return "iif(" + col + " = 9e999, 'inf', iif(" + col + " = -9e999, '-inf', printf('%.6g', " + col + ")))";
}

// SQL text of a positive microsecond count as core's FormatDuration prints it (1d2h3m4.005006s, 500ms).
std::string DurationText(const std::string& us) {
  const std::string s = "(" + us + " % 60000000)";  // what is left below a minute
  return "iif(" + us + " >= 86400000000, (" + us + " / 86400000000) || 'd', '') || "
         "iif(" + us + " % 86400000000 >= 3600000000, (" + us + " % 86400000000 / 3600000000) || 'h', '') || "
         "iif(" + us + " % 3600000000 >= 60000000, (" + us + " % 3600000000 / 60000000) || 'm', '') || "
         "CASE WHEN " + s + " = 0 THEN '' "
         "WHEN " + s + " % 1000000 = 0 THEN (" + s + " / 1000000) || 's' "
         "WHEN " + s + " % 1000 = 0 AND " + s + " < 1000000 THEN (" + s + " / 1000) || 'ms' "
         "ELSE (" + s + " / 1000000) || '.' || rtrim(substr('00000' || (" + s + " % 1000000), -6), '0') || 's' END";
}

// ": <col>" unless the column is empty.
std::string Suffix(const std::string& col) { return "iif(" + col + " = '', '', ': ' || " + col + ")"; }

}  // namespace

// Each arm gives the columns of the version 2 `events` table, in order; the detail expressions
// reproduce the text store_events.cpp formatted before version 3. Doubles print with SQLite's printf,
// which rounds some exact halfway values (100000.5) differently from the C library; the migration
// keeps such old details in event_details. A later schema that changes the view must add its own
// text rather than edit this one: the version 3 step uses it.
std::string EventsSelect(std::string_view where) {
  struct Arm {
    const char* table;
    const char* t_us;
    const char* type;
    const char* ids;  // component_id, job_id, fault_id
    std::string detail;
  };
  const Arm arms[] = {
      {"faults", "injected_us", "fault_injected", "target_id, NULL, nullif(fault_id, 0)",
       "kind || ' on ''' || selector || '''' || coalesce(' port ' || port, '') || " + Suffix("detail")},
      {"fault_reverts", "t_us", "fault_reverted", "NULL, NULL, fault_id", "'reverted' || " + Suffix("detail")},
      {"physics", "t_us", "physics", "component_id, NULL, cause_fault_id", "what || ' value=' || " + Num("value")},
      {"detections", "t_us", "detected", "component_id, NULL, NULL",
       "'detection ' || coalesce(detection_id, 0) || ' by ' || detector || ': ' || symptom"},
      {"isolations", "t_us", "isolated", "component_id, NULL, NULL",
       "'isolated ' || domain || ' for detections [' || detection_ids || ']: ' || reason"},
      {"actions", "t_us", "action", "component_id, job_id, NULL",
       "action || iif(ok, ' ok', ' FAILED') || " + Suffix("detail")},
      {"job_events", "t_us", "job", "NULL, job_id, cause_fault_id",
       "state || ' steps=' || " + Num("steps") + " || ' speed=' || " + Num("speed") + " || ' gpus=' || gpus || " +
           "iif(lost_work_us > 0, ' lost_work=' || " + DurationText("lost_work_us") + ", '') || " + Suffix("detail")},
      {"checkpoints", "t_us", "checkpoint", "NULL, job_id, NULL", "'checkpoint at step ' || " + Num("step")},
  };
  std::string sql;
  for (const Arm& a : arms) {
    if (!sql.empty()) sql += "\nUNION ALL\n";
    sql += std::string("SELECT run_id, seq, ") + a.t_us + ", '" + a.type + "', " + a.ids + ",\n  coalesce(" +
           "(SELECT d.detail FROM event_details d WHERE d.run_id = x.run_id AND d.seq = x.seq),\n  " + a.detail +
           ")\nFROM " + a.table + " x";
    if (!where.empty()) sql += " WHERE " + std::string(where);
  }
  return sql;
}

// Every other column of a version 2 `events` row follows from its typed row (or, for a revert, from
// the revert row made from it); when one does not (a file edited by hand), the step fails and the
// file stays at version 2. Details that differ are kept in event_details.
Status StoreEventsOnce(Db& db) {
  const std::string what = "storing each event once (schema version 3)";
  RC_RETURN_IF_ERROR(db.Exec(kTables, what));
  RC_RETURN_IF_ERROR(db.Exec(
      "INSERT INTO fault_reverts SELECT run_id, seq, t_us, fault_id, iif(substr(detail, 1, 10) = "
      "'reverted: ', substr(detail, 11), '') FROM events WHERE type = 'fault_reverted';\n"
      "CREATE TEMP TABLE v3_events(run_id, seq, t_us, type, component_id, job_id, fault_id, detail, "
      "PRIMARY KEY(run_id, seq)) WITHOUT ROWID;\n"
      "INSERT INTO v3_events " + EventsSelect(), what));
  RC_ASSIGN_OR_RETURN(int64_t mismatched, db.QueryInt(
      "SELECT (SELECT count(*) FROM events o LEFT JOIN v3_events n USING (run_id, seq) WHERE "
      "n.seq IS NULL OR n.t_us IS NOT o.t_us OR n.type IS NOT o.type OR n.component_id IS NOT "
      "o.component_id OR n.job_id IS NOT o.job_id OR n.fault_id IS NOT o.fault_id) + (SELECT count(*) "
      "FROM v3_events n WHERE NOT EXISTS (SELECT 1 FROM events o WHERE o.run_id = n.run_id AND "
      "o.seq = n.seq))", what));
  if (mismatched > 0) {
    return Status::Corrupt(what + ": " + std::to_string(mismatched) + " rows of the events table of '" +
                           db.path() + "' disagree with its typed event tables; it was left at schema "
                           "version 2");
  }
  return db.Exec(
      "INSERT INTO event_details SELECT o.run_id, o.seq, o.detail FROM events o JOIN v3_events n "
      "USING (run_id, seq) WHERE n.detail IS NOT o.detail;\n"
      "DROP TABLE temp.v3_events;\nDROP TABLE events;\n"
      "CREATE VIEW events(run_id, seq, t_us, type, component_id, job_id, fault_id, detail) AS\n" +
      EventsSelect() + "\nORDER BY run_id, seq;\n" + kEventLog, what);
}

// Version 7: one row per placement. Existing rows get one placement per distinct (job, tray list) of
// their run, numbered in the order the lists first appear.
Status StorePlacementsOnce(Db& db) {
  return db.Exec(R"sql(
-- A placement is either whole (base_id NULL: `trays` lists the component ids of its trays,
-- comma-separated) or a difference (base_id: the trays of placement base_id of the same run, without
-- `removed`, plus `added`; `trays` is empty). Writers start a whole list again after a bounded chain of
-- differences (reports/store_events.cpp, kMaxDeltaChain: 32 rows until 2026-12, 1,024 since).
CREATE TABLE placements(
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, job_id INTEGER, base_id INTEGER,
  trays TEXT NOT NULL, added TEXT NOT NULL, removed TEXT NOT NULL,
  PRIMARY KEY(run_id, id)) WITHOUT ROWID;
INSERT INTO placements
  SELECT run_id, row_number() OVER (PARTITION BY run_id ORDER BY min(seq)), job_id, NULL, trays, '', ''
  FROM job_events WHERE trays != '' GROUP BY run_id, job_id, trays;
ALTER TABLE job_events ADD COLUMN placement_id INTEGER;
UPDATE job_events SET placement_id = (SELECT p.id FROM placements p WHERE p.run_id = job_events.run_id
  AND p.job_id IS job_events.job_id AND p.trays = job_events.trays) WHERE trays != '';
ALTER TABLE job_events DROP COLUMN trays;
CREATE VIEW job_placements AS
  SELECT e.run_id, e.seq, e.t_us, e.job_id, e.state, e.placement_id, p.base_id, p.trays, p.added, p.removed
  FROM job_events e JOIN placements p ON p.run_id = e.run_id AND p.id = e.placement_id;
)sql", "storing each placement once (schema version 7)");
}

}  // namespace rackchaos::reports
