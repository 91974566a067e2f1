#include "reports/incident_store.h"

#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

constexpr const char* kIncidentTables = R"sql(
CREATE TABLE IF NOT EXISTS incident_imports(
  run_id INTEGER PRIMARY KEY, files INTEGER NOT NULL, lines INTEGER NOT NULL, bytes INTEGER NOT NULL,
  understood INTEGER NOT NULL, not_understood INTEGER NOT NULL, dropped_events INTEGER NOT NULL,
  overlong_lines INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS incident_files(
  run_id INTEGER NOT NULL, file INTEGER NOT NULL, path TEXT NOT NULL, PRIMARY KEY(run_id, file));
CREATE TABLE IF NOT EXISTS incident_events(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL,
  axis TEXT NOT NULL CHECK(axis IN ('none', 'wall', 'relative')), time_s REAL,
  kind TEXT NOT NULL, host TEXT NOT NULL, address TEXT NOT NULL, iface TEXT NOT NULL,
  code INTEGER, link INTEGER, recovery_action INTEGER, rank INTEGER, device INTEGER,
  severity TEXT NOT NULL CHECK(severity IN ('unknown', 'fatal', 'non_fatal')), action TEXT NOT NULL,
  job TEXT NOT NULL, caused_by INTEGER, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS incident_patterns(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, pattern TEXT NOT NULL, count INTEGER NOT NULL,
  file INTEGER NOT NULL, first_line INTEGER NOT NULL, PRIMARY KEY(run_id, ord));
)sql";

std::string Where(const char* table, int64_t run) {
  return std::string("DELETE FROM ") + table + " WHERE run_id = " + std::to_string(run) + ";";
}

void BindOpt(Stmt& s, int index, const std::optional<double>& v) {
  if (v) s.Bind(index, *v);
  else s.BindNull(index);
}

Status StoreEvents(Db& db, int64_t run, const std::vector<IncidentEventRow>& events, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "INSERT INTO incident_events(run_id, seq, file, line, axis, time_s, kind, host, address, iface, code, link,"
      " recovery_action, rank, device, severity, action, job, caused_by, detail)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < events.size(); ++i) {
    const IncidentEventRow& e = events[i];
    s.Bind(1, run);
    s.Bind(2, static_cast<int64_t>(i));
    s.Bind(3, static_cast<int64_t>(e.file));
    s.Bind(4, e.line);
    s.Bind(5, std::string_view(e.axis));
    BindOpt(s, 6, e.time_s);
    s.Bind(7, std::string_view(e.kind));
    s.Bind(8, std::string_view(e.host));
    s.Bind(9, std::string_view(e.address));
    s.Bind(10, std::string_view(e.iface));
    s.Bind(11, e.code);
    s.Bind(12, e.link);
    s.Bind(13, e.recovery_action);
    s.Bind(14, e.rank);
    s.Bind(15, e.device);
    s.Bind(16, std::string_view(e.severity));
    s.Bind(17, std::string_view(e.action));
    s.Bind(18, std::string_view(e.job));
    s.Bind(19, e.caused_by);
    s.Bind(20, std::string_view(e.detail));
    RC_RETURN_IF_ERROR(s.Run(what));
  }
  return Status::Ok();
}

Status StorePatterns(Db& db, int64_t run, const std::vector<IncidentPatternRow>& patterns, const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "INSERT INTO incident_patterns(run_id, ord, pattern, count, file, first_line) VALUES (?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < patterns.size(); ++i) {
    s.Bind(1, run);
    s.Bind(2, static_cast<int64_t>(i));
    s.Bind(3, std::string_view(patterns[i].pattern));
    s.Bind(4, patterns[i].count);
    s.Bind(5, static_cast<int64_t>(patterns[i].file));
    s.Bind(6, patterns[i].first_line);
    RC_RETURN_IF_ERROR(s.Run(what));
  }
  return Status::Ok();
}

}  // namespace

// IF NOT EXISTS: a file taken back to an older version by hand (tests do) keeps its incident tables.
Status AddIncidentTablesV13(Db& db) { return db.Exec(kIncidentTables, "creating the incident tables"); }

Status StoreIncident(ReportStore& store, int64_t run, const IncidentRecord& incident) {
  const std::string what = "storing the imported incident of run " + std::to_string(run);
  Db& db = StoreAccess::DbOf(store);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, what));
  RC_ASSIGN_OR_RETURN(int64_t known, db.QueryInt("SELECT count(*) FROM runs WHERE id = " + std::to_string(run), what));
  if (known == 0) return Status::NotFound(what + ": no such run");
  // Replacing keeps a second store of the same run idempotent.
  RC_RETURN_IF_ERROR(db.Exec(Where("incident_imports", run) + Where("incident_files", run) +
                                 Where("incident_events", run) + Where("incident_patterns", run),
                             what));
  RC_ASSIGN_OR_RETURN(Stmt imports, db.Prepare("INSERT INTO incident_imports VALUES (?, ?, ?, ?, ?, ?, ?, ?)", what));
  imports.Bind(1, run);
  imports.Bind(2, static_cast<int64_t>(incident.files.size()));
  imports.Bind(3, incident.lines);
  imports.Bind(4, incident.bytes);
  imports.Bind(5, incident.understood);
  imports.Bind(6, incident.not_understood);
  imports.Bind(7, incident.dropped_events);
  imports.Bind(8, incident.overlong_lines);
  RC_RETURN_IF_ERROR(imports.Run(what));
  RC_ASSIGN_OR_RETURN(Stmt files, db.Prepare("INSERT INTO incident_files(run_id, file, path) VALUES (?, ?, ?)", what));
  for (size_t i = 0; i < incident.files.size(); ++i) {
    files.Bind(1, run);
    files.Bind(2, static_cast<int64_t>(i));
    files.Bind(3, std::string_view(incident.files[i]));
    RC_RETURN_IF_ERROR(files.Run(what));
  }
  RC_RETURN_IF_ERROR(StoreEvents(db, run, incident.events, what));
  RC_RETURN_IF_ERROR(StorePatterns(db, run, incident.patterns, what));
  return txn.Commit(what);
}

Result<IncidentRecord> ReadIncident(const ReportStore& store, int64_t run) {
  const std::string what = "reading the imported incident of run " + std::to_string(run);
  const std::string r = std::to_string(run);
  Db& db = StoreAccess::DbOf(store);
  IncidentRecord out;
  {
    RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT lines, bytes, understood, not_understood, dropped_events,"
                                           " overlong_lines FROM incident_imports WHERE run_id = " + r, what));
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.lines = s.Int(0);
    out.bytes = s.Int(1);
    out.understood = s.Int(2);
    out.not_understood = s.Int(3);
    out.dropped_events = s.Int(4);
    out.overlong_lines = s.Int(5);
  }
  RC_ASSIGN_OR_RETURN(Stmt f, db.Prepare("SELECT path FROM incident_files WHERE run_id = " + r + " ORDER BY file", what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, f.Step(what));
    if (!row) break;
    out.files.push_back(f.Text(0));
  }
  RC_ASSIGN_OR_RETURN(Stmt e, db.Prepare(
      "SELECT file, line, axis, time_s, kind, host, address, iface, code, link, recovery_action, rank, device,"
      " severity, action, job, caused_by, detail FROM incident_events WHERE run_id = " + r + " ORDER BY seq", what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, e.Step(what));
    if (!row) break;
    IncidentEventRow x;
    x.file = static_cast<int>(e.Int(0));
    x.line = e.Int(1);
    x.axis = e.Text(2);
    if (!e.IsNull(3)) x.time_s = e.Double(3);
    x.kind = e.Text(4);
    x.host = e.Text(5);
    x.address = e.Text(6);
    x.iface = e.Text(7);
    x.code = e.OptInt(8);
    x.link = e.OptInt(9);
    x.recovery_action = e.OptInt(10);
    x.rank = e.OptInt(11);
    x.device = e.OptInt(12);
    x.severity = e.Text(13);
    x.action = e.Text(14);
    x.job = e.Text(15);
    x.caused_by = e.OptInt(16);
    x.detail = e.Text(17);
    out.events.push_back(std::move(x));
  }
  RC_ASSIGN_OR_RETURN(Stmt p, db.Prepare(
      "SELECT pattern, count, file, first_line FROM incident_patterns WHERE run_id = " + r + " ORDER BY ord", what));
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, p.Step(what));
    if (!row) break;
    out.patterns.push_back({p.Text(0), p.Int(1), static_cast<int>(p.Int(2)), p.Int(3)});
  }
  return out;
}

}  // namespace rackchaos::reports
