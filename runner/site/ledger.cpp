#include "runner/site/ledger.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>

namespace rackchaos::runner {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS ledger_runs(
  id INTEGER PRIMARY KEY, report_db TEXT NOT NULL, report_run INTEGER NOT NULL, pid INTEGER NOT NULL,
  started_wall TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ledger(
  id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES ledger_runs(id), fault INTEGER NOT NULL,
  action TEXT NOT NULL, target TEXT NOT NULL,
  host TEXT NOT NULL, address TEXT NOT NULL, port INTEGER NOT NULL, user TEXT NOT NULL,
  identity_file TEXT NOT NULL, use_agent INTEGER NOT NULL, known_hosts TEXT NOT NULL,
  apply TEXT NOT NULL, revert TEXT NOT NULL, verify TEXT NOT NULL, readback TEXT NOT NULL, expect REAL,
  deadline_unix INTEGER NOT NULL, expiry_token TEXT NOT NULL DEFAULT '', expiry_pid INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('open', 'closed')), opened_wall TEXT NOT NULL,
  closed_wall TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS ledger_open ON ledger(state) WHERE state = 'open';
)";

constexpr const char* kEntryColumns =
    "id, run, fault, action, target, host, address, port, user, identity_file, use_agent, known_hosts, apply, "
    "revert, verify, readback, expect, deadline_unix, expiry_token, expiry_pid, state, opened_wall, closed_wall, note";

struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtCloser>;

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

struct Ledger::State {
  sqlite3* db = nullptr;
  std::string path;
  int owners_fd = -1;  // "<path>.owners", holding this process's run locks

  ~State() {
    if (owners_fd >= 0) ::close(owners_fd);
    if (db) sqlite3_close_v2(db);
  }
  Status Error(const std::string& what) const {
    return Status(sqlite3_errcode(db) == SQLITE_BUSY ? StatusCode::kUnavailable : StatusCode::kIoError,
                  what + " in fault ledger '" + path + "': " + sqlite3_errmsg(db));
  }
  Result<StmtPtr> Prepare(const std::string& sql, const std::string& what) const {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return Error(what);
    return StmtPtr(raw);
  }
  Status Exec(const std::string& sql, const std::string& what) const {
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return Error(what);
    return Status::Ok();
  }
  Status Done(sqlite3_stmt* s, const std::string& what) const {
    return sqlite3_step(s) == SQLITE_DONE ? Status::Ok() : Error(what);
  }
  // Write (or test) lock on byte `run` of the owners file. OFD locks belong to the open file
  // description, so they conflict within one process too and survive closing other descriptors.
  bool Lock(int fd, int64_t run, int cmd, short type, short* found = nullptr) const {
    struct flock fl {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = run;
    fl.l_len = 1;
    if (::fcntl(fd, cmd, &fl) != 0) return false;
    if (found) *found = fl.l_type;
    return true;
  }
};

std::string DefaultLedgerPath(const std::string& report_db) { return report_db + ".ledger"; }

std::string LedgerWallNow() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int64_t LedgerUnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Ledger::Ledger(std::unique_ptr<State> state) : state_(std::move(state)) {}
Ledger::Ledger(Ledger&&) noexcept = default;
Ledger& Ledger::operator=(Ledger&&) noexcept = default;
Ledger::~Ledger() = default;

const std::string& Ledger::path() const { return state_->path; }

Result<Ledger> Ledger::Open(const std::string& path) {
  auto state = std::make_unique<State>();
  state->path = path;
  int rc = sqlite3_open_v2(path.c_str(), &state->db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return state->Error("opening");
  sqlite3_busy_timeout(state->db, 10000);
  // FULL: a ledger row must survive a power cut of the runner's machine, not just a crash.
  RC_RETURN_IF_ERROR(state->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", "setting up"));
  RC_RETURN_IF_ERROR(state->Exec(kSchema, "creating the schema"));
  const std::string owners = path + ".owners";
  state->owners_fd = ::open(owners.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (state->owners_fd < 0) return Status::IoError("cannot open ledger lock file '" + owners + "'");
  return Ledger(std::move(state));
}

Result<int64_t> Ledger::BeginRun(const std::string& report_db, int64_t report_run) {
  const std::string what = "registering a run";
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare(
      "INSERT INTO ledger_runs(report_db, report_run, pid, started_wall) VALUES (?, ?, ?, ?)", what));
  sqlite3_bind_text(s.get(), 1, report_db.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.get(), 2, report_run);
  sqlite3_bind_int64(s.get(), 3, ::getpid());
  const std::string now = LedgerWallNow();
  sqlite3_bind_text(s.get(), 4, now.c_str(), -1, SQLITE_TRANSIENT);
  RC_RETURN_IF_ERROR(state_->Done(s.get(), what));
  const int64_t id = sqlite3_last_insert_rowid(state_->db);
  if (!state_->Lock(state_->owners_fd, id, F_OFD_SETLK, F_WRLCK))
    return Status::IoError("cannot lock run " + std::to_string(id) + " in '" + state_->path + ".owners'");
  return id;
}

Status Ledger::FinishRun(int64_t run) {
  RC_RETURN_IF_ERROR(state_->Exec("UPDATE ledger_runs SET finished = 1 WHERE id = " + std::to_string(run),
                                  "finishing run " + std::to_string(run)));
  state_->Lock(state_->owners_fd, run, F_OFD_SETLK, F_UNLCK);
  return Status::Ok();
}

Result<int64_t> Ledger::Record(const LedgerEntry& e) {
  const std::string what = "recording fault " + std::to_string(e.fault) + " on " + e.target;
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare(
      "INSERT INTO ledger(run, fault, action, target, host, address, port, user, identity_file, use_agent, "
      "known_hosts, apply, revert, verify, readback, expect, deadline_unix, state, opened_wall) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)", what));
  sqlite3_stmt* st = s.get();
  auto text = [&](int i, const std::string& v) { sqlite3_bind_text(st, i, v.c_str(), -1, SQLITE_TRANSIENT); };
  sqlite3_bind_int64(st, 1, e.run);
  sqlite3_bind_int64(st, 2, e.fault);
  text(3, e.action);
  text(4, e.target);
  text(5, e.host.name);
  text(6, e.host.address);
  sqlite3_bind_int64(st, 7, e.host.port);
  text(8, e.host.user);
  text(9, e.host.identity_file);
  sqlite3_bind_int64(st, 10, e.host.use_agent ? 1 : 0);
  text(11, e.host.known_hosts_file);
  text(12, e.apply);
  text(13, e.revert);
  text(14, e.verify);
  text(15, e.readback);
  if (e.expect) sqlite3_bind_double(st, 16, *e.expect);
  else sqlite3_bind_null(st, 16);
  sqlite3_bind_int64(st, 17, e.deadline_unix);
  text(18, LedgerWallNow());
  RC_RETURN_IF_ERROR(state_->Done(st, what));
  return sqlite3_last_insert_rowid(state_->db);
}

Status Ledger::SetExpiry(int64_t entry, const std::string& token, int64_t pid) {
  const std::string what = "recording the host-side expiry of entry " + std::to_string(entry);
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare("UPDATE ledger SET expiry_token = ?, expiry_pid = ? WHERE id = ?", what));
  sqlite3_bind_text(s.get(), 1, token.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.get(), 2, pid);
  sqlite3_bind_int64(s.get(), 3, entry);
  return state_->Done(s.get(), what);
}

Status Ledger::Close(int64_t entry, const std::string& note) {
  const std::string what = "closing entry " + std::to_string(entry);
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare(
      "UPDATE ledger SET state = 'closed', closed_wall = ?, note = ? WHERE id = ?", what));
  const std::string now = LedgerWallNow();
  sqlite3_bind_text(s.get(), 1, now.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, note.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.get(), 3, entry);
  return state_->Done(s.get(), what);
}

Status Ledger::SetNote(int64_t entry, const std::string& note) {
  const std::string what = "noting entry " + std::to_string(entry);
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare("UPDATE ledger SET note = ? WHERE id = ?", what));
  sqlite3_bind_text(s.get(), 1, note.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.get(), 2, entry);
  return state_->Done(s.get(), what);
}

namespace {

Result<std::vector<LedgerEntry>> ReadEntries(const Ledger::State& st, const std::string& where) {
  const std::string what = "reading entries";
  RC_ASSIGN_OR_RETURN(StmtPtr s, st.Prepare(std::string("SELECT ") + kEntryColumns + " FROM ledger WHERE " + where +
                                                " ORDER BY id", what));
  std::vector<LedgerEntry> out;
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    sqlite3_stmt* r = s.get();
    LedgerEntry e;
    e.id = sqlite3_column_int64(r, 0);
    e.run = sqlite3_column_int64(r, 1);
    e.fault = static_cast<FaultId>(sqlite3_column_int64(r, 2));
    e.action = Text(r, 3);
    e.target = Text(r, 4);
    e.host.name = Text(r, 5);
    e.host.address = Text(r, 6);
    e.host.port = sqlite3_column_int(r, 7);
    e.host.user = Text(r, 8);
    e.host.identity_file = Text(r, 9);
    e.host.use_agent = sqlite3_column_int(r, 10) != 0;
    e.host.known_hosts_file = Text(r, 11);
    e.apply = Text(r, 12);
    e.revert = Text(r, 13);
    e.verify = Text(r, 14);
    e.readback = Text(r, 15);
    if (sqlite3_column_type(r, 16) != SQLITE_NULL) e.expect = sqlite3_column_double(r, 16);
    e.deadline_unix = sqlite3_column_int64(r, 17);
    e.expiry_token = Text(r, 18);
    e.expiry_pid = sqlite3_column_int64(r, 19);
    e.state = Text(r, 20);
    e.opened_wall = Text(r, 21);
    e.closed_wall = Text(r, 22);
    e.note = Text(r, 23);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return st.Error(what);
  return out;
}

}  // namespace

Result<std::vector<LedgerEntry>> Ledger::OpenEntries() const { return ReadEntries(*state_, "state = 'open'"); }

Result<std::vector<LedgerEntry>> Ledger::Entries(int64_t run) const {
  return ReadEntries(*state_, "run = " + std::to_string(run));
}

Result<std::vector<LedgerRun>> Ledger::UnfinishedRuns() const {
  const std::string what = "reading runs";
  RC_ASSIGN_OR_RETURN(StmtPtr s, state_->Prepare(
      "SELECT id, report_db, report_run, pid, started_wall FROM ledger_runs WHERE finished = 0 ORDER BY id", what));
  std::vector<LedgerRun> out;
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    out.push_back({sqlite3_column_int64(s.get(), 0), Text(s.get(), 1), sqlite3_column_int64(s.get(), 2),
                   sqlite3_column_int64(s.get(), 3), Text(s.get(), 4), false});
  }
  if (rc != SQLITE_DONE) return state_->Error(what);
  return out;
}

bool Ledger::OwnerAlive(int64_t run) const {
  // A fresh descriptor is a different open file description, so it sees this process's locks too.
  const int fd = ::open((state_->path + ".owners").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  short found = F_UNLCK;
  const bool ok = state_->Lock(fd, run, F_OFD_GETLK, F_WRLCK, &found);
  ::close(fd);
  return ok && found != F_UNLCK;
}

}  // namespace rackchaos::runner
