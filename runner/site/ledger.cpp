#include "runner/site/ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "reports/sqlite_db.h"
#include <utility>

#include "core/user_file.h"
#include "core/wall_time.h"

namespace rackchaos::runner {
namespace {

using reports::Db;
using reports::Stmt;

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

// Columns added to `ledger` since it first shipped, each with the default its older rows read: a ledger
// created before gets them when it is opened (LedgerEntry::diagnostic, diagnostic_host).
constexpr const char* kAddedColumns[][2] = {
    {"diagnostic", "TEXT NOT NULL DEFAULT ''"},          {"diagnostic_host", "TEXT NOT NULL DEFAULT ''"},
    {"diagnostic_address", "TEXT NOT NULL DEFAULT ''"},  {"diagnostic_port", "INTEGER NOT NULL DEFAULT 0"},
    {"diagnostic_user", "TEXT NOT NULL DEFAULT ''"},     {"diagnostic_identity_file", "TEXT NOT NULL DEFAULT ''"},
    {"diagnostic_use_agent", "INTEGER NOT NULL DEFAULT 0"}, {"diagnostic_known_hosts", "TEXT NOT NULL DEFAULT ''"},
};

constexpr const char* kEntryColumns =
    "id, run, fault, action, target, host, address, port, user, identity_file, use_agent, known_hosts, apply, "
    "revert, verify, readback, expect, deadline_unix, expiry_token, expiry_pid, state, opened_wall, closed_wall, note, "
    "diagnostic, diagnostic_host, diagnostic_address, diagnostic_port, diagnostic_user, diagnostic_identity_file, "
    "diagnostic_use_agent, diagnostic_known_hosts";

// The byte of "<ledger>.owners" whose lock is the recovery lock: run ids (the other bytes) start at 1.
constexpr int64_t kRecoveryByte = 0;

// How long a ledger write waits for another run's (they are short: one row each).
constexpr int kBusyTimeoutMs = 10000;

// Sets a new connection up; run again while another opener holds the file (reports::RetryWhileBusy).
Status SetUp(Db& db) {
  // FULL: a ledger row must survive a power cut of the runner's machine, not just a crash.
  // A WAL checkpointed every 256 pages (1 MiB) and cut back to 1 MiB after: a run of many hours adds
  // rows all along, and the file should not keep the largest size it ever had.
  RC_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=256; "
                             "PRAGMA journal_size_limit=1048576;",
                             "setting up"));
  RC_RETURN_IF_ERROR(db.Exec(kSchema, "creating the schema"));
  const std::string what = "adding the columns of newer rackchaos versions";
  auto has = [&](const char* column) {
    return db.QueryInt(std::string("SELECT count(*) FROM pragma_table_info('ledger') WHERE name = '") + column + "'",
                       what);
  };
  RC_ASSIGN_OR_RETURN(int64_t has_last, has(kAddedColumns[std::size(kAddedColumns) - 1][0]));
  if (has_last) return Status::Ok();  // added in order, in one transaction: the last one means all
  // Under the write lock, so that two processes opening an older ledger at once add each column once.
  RC_ASSIGN_OR_RETURN(reports::Transaction txn, reports::Transaction::Begin(db, what));
  for (const auto& [name, type] : kAddedColumns) {
    RC_ASSIGN_OR_RETURN(int64_t present, has(name));
    if (!present) RC_RETURN_IF_ERROR(db.Exec(std::string("ALTER TABLE ledger ADD COLUMN ") + name + " " + type, what));
  }
  return txn.Commit(what);
}

}  // namespace

struct Ledger::State {
  Db db;
  int owners_fd = -1;  // "<path>.owners", holding this process's run locks

  ~State() {
    if (owners_fd >= 0) ::close(owners_fd);
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

std::string LedgerIdentity(const std::string& path) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
  if (ec) resolved = std::filesystem::absolute(path, ec).lexically_normal();
  return ec ? path : resolved.string();
}

Ledger::Ledger(std::unique_ptr<State> state) : state_(std::move(state)) {}
Ledger::Ledger(Ledger&&) noexcept = default;
Ledger& Ledger::operator=(Ledger&&) noexcept = default;
Ledger::~Ledger() = default;

const std::string& Ledger::path() const { return state_->db.path(); }

Result<Ledger> Ledger::Open(const std::string& path) {
  // SQLite would block on a FIFO and read a device as a database; the lock file is opened read-write.
  // Either is the user's path, so bad input (kInvalidArgument).
  for (const auto& [file, what] : {std::pair{path, "fault ledger"}, std::pair{path + ".owners", "ledger lock file"}})
    if (Status s = CheckNotSpecialFile(file, {what, 0}); !s.ok()) return Status::Invalid(s.message());
  auto state = std::make_unique<State>();
  RC_ASSIGN_OR_RETURN(state->db, Db::Open(path, reports::kOpenReadWrite | reports::kOpenCreate,
                                          reports::DbKind::kFaultLedger));
  state->db.SetBusyTimeout(kBusyTimeoutMs);
  RC_RETURN_IF_ERROR(reports::RetryWhileBusy(kBusyTimeoutMs, [&] { return SetUp(state->db); }));
  const std::string owners = path + ".owners";
  state->owners_fd = ::open(owners.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (state->owners_fd < 0) return Status::IoError("cannot open ledger lock file '" + owners + "'");
  return Ledger(std::move(state));
}

Result<Ledger> Ledger::OpenReadOnly(const std::string& path) {
  auto state = std::make_unique<State>();
  RC_ASSIGN_OR_RETURN(state->db, Db::Open(path, reports::kOpenReadOnly, reports::DbKind::kFaultLedger));
  state->db.SetBusyTimeout(kBusyTimeoutMs);
  // The first read is where SQLite notices a file that is not a database; say so now, not at first use.
  RC_RETURN_IF_ERROR(state->db.QueryInt("SELECT count(*) FROM ledger_runs", "reading").status());
  return Ledger(std::move(state));  // no owners file: BeginRun fails before it could lock anything
}

Status Ledger::SetReportRun(int64_t run, int64_t report_run) {
  const std::string what = "recording a run's report run";
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare("UPDATE ledger_runs SET report_run = ? WHERE id = ?", what));
  s.Bind(1, report_run);
  s.Bind(2, run);
  return s.Run(what);
}

Result<int64_t> Ledger::BeginRun(const std::string& report_db, int64_t report_run) {
  const std::string what = "registering a run";
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare(
      "INSERT INTO ledger_runs(report_db, report_run, pid, started_wall) VALUES (?, ?, ?, ?) RETURNING id", what));
  s.Bind(1, std::string_view(report_db));
  s.Bind(2, report_run);
  s.Bind(3, static_cast<int64_t>(::getpid()));
  s.Bind(4, std::string_view(WallStampNow()));
  RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
  if (!row) return Status::Internal(what + " in fault ledger '" + path() + "': no id returned");
  const int64_t id = s.Int(0);
  RC_RETURN_IF_ERROR(s.Run(what));  // steps to the end: the row is committed
  if (!state_->Lock(state_->owners_fd, id, F_OFD_SETLK, F_WRLCK))
    return Status::IoError("cannot lock run " + std::to_string(id) + " in '" + path() + ".owners'");
  return id;
}

Status Ledger::FinishRun(int64_t run) {
  const std::string what = "finishing run " + std::to_string(run);
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare("UPDATE ledger_runs SET finished = 1 WHERE id = ?", what));
  s.Bind(1, run);
  RC_RETURN_IF_ERROR(s.Run(what));
  state_->Lock(state_->owners_fd, run, F_OFD_SETLK, F_UNLCK);
  return Status::Ok();
}

namespace {

// A host's seven columns (name, address, port, user, identity file, agent, known hosts) from `first` on:
// the entry's own host and its diagnostic's are stored alike.
void BindHost(Stmt& s, int first, const ssh::HostSpec& h) {
  s.Bind(first, std::string_view(h.name));
  s.Bind(first + 1, std::string_view(h.address));
  s.Bind(first + 2, static_cast<int64_t>(h.port));
  s.Bind(first + 3, std::string_view(h.user));
  s.Bind(first + 4, std::string_view(h.identity_file));
  s.Bind(first + 5, static_cast<int64_t>(h.use_agent ? 1 : 0));
  s.Bind(first + 6, std::string_view(h.known_hosts_file));
}
ssh::HostSpec ReadHost(const Stmt& s, int first) {
  ssh::HostSpec h;
  h.name = s.Text(first);
  h.address = s.Text(first + 1);
  h.port = static_cast<int>(s.Int(first + 2));
  h.user = s.Text(first + 3);
  h.identity_file = s.Text(first + 4);
  h.use_agent = s.Int(first + 5) != 0;
  h.known_hosts_file = s.Text(first + 6);
  return h;
}

}  // namespace

Result<int64_t> Ledger::Record(const LedgerEntry& e) {
  const std::string what = "recording fault " + std::to_string(e.fault) + " on " + e.target;
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare(
      "INSERT INTO ledger(run, fault, action, target, host, address, port, user, identity_file, use_agent, "
      "known_hosts, apply, revert, verify, readback, expect, deadline_unix, state, opened_wall, diagnostic, "
      "diagnostic_host, diagnostic_address, diagnostic_port, diagnostic_user, diagnostic_identity_file, "
      "diagnostic_use_agent, diagnostic_known_hosts) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      what));
  s.Bind(1, e.run);
  s.Bind(2, static_cast<int64_t>(e.fault));
  s.Bind(3, std::string_view(e.action));
  s.Bind(4, std::string_view(e.target));
  BindHost(s, 5, e.host);
  s.Bind(12, std::string_view(e.apply));
  s.Bind(13, std::string_view(e.revert));
  s.Bind(14, std::string_view(e.verify));
  s.Bind(15, std::string_view(e.readback));
  if (e.expect) s.Bind(16, *e.expect);
  else s.BindNull(16);
  s.Bind(17, e.deadline_unix);
  s.Bind(18, std::string_view(WallStampNow()));
  s.Bind(19, std::string_view(e.diagnostic));
  BindHost(s, 20, e.diagnostic_host);
  RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
  if (!row) return Status::Internal(what + " in fault ledger '" + path() + "': no id returned");
  const int64_t id = s.Int(0);
  RC_RETURN_IF_ERROR(s.Run(what));  // steps to the end: the row is committed (durably: synchronous=FULL)
  return id;
}

Status Ledger::SetExpiry(int64_t entry, const std::string& token, int64_t pid) {
  const std::string what = "recording the host-side expiry of entry " + std::to_string(entry);
  RC_ASSIGN_OR_RETURN(Stmt s,
                      state_->db.Prepare("UPDATE ledger SET expiry_token = ?, expiry_pid = ? WHERE id = ?", what));
  s.Bind(1, std::string_view(token));
  s.Bind(2, pid);
  s.Bind(3, entry);
  return s.Run(what);
}

Status Ledger::Close(int64_t entry, const std::string& note) {
  const std::string what = "closing entry " + std::to_string(entry);
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare(
      "UPDATE ledger SET state = 'closed', closed_wall = ?1, "
      "note = CASE WHEN note = '' THEN ?2 ELSE note || char(10) || ?1 || ' ' || ?2 END WHERE id = ?3", what));
  s.Bind(1, std::string_view(WallStampNow()));
  s.Bind(2, std::string_view(note));
  s.Bind(3, entry);
  return s.Run(what);
}

Status Ledger::SetNote(int64_t entry, const std::string& note) {
  const std::string what = "noting entry " + std::to_string(entry);
  // Appended, each line with its time: the entry's history (a revert that failed while the host was
  // lost, then the one that worked) stays readable after it closes. A note repeating the last line's
  // text (a retry failing the same way) is not added again.
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare(
      "UPDATE ledger SET note = CASE WHEN note = '' THEN ?1 || ' ' || ?2 "
      "WHEN substr(note, -length(?2)) = ?2 THEN note "
      "ELSE note || char(10) || ?1 || ' ' || ?2 END WHERE id = ?3", what));
  s.Bind(1, std::string_view(WallStampNow()));
  s.Bind(2, std::string_view(note));
  s.Bind(3, entry);
  return s.Run(what);
}

namespace {

// `where` filters on parameter 1 when it names one ("run = ?1"); `param` is bound to it.
Result<std::vector<LedgerEntry>> ReadEntries(Db& db, const std::string& where, std::optional<int64_t> param) {
  const std::string what = "reading entries";
  RC_ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kEntryColumns + " FROM ledger WHERE " + where +
                                             " ORDER BY id", what));
  if (param) s.Bind(1, *param);
  std::vector<LedgerEntry> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    LedgerEntry e;
    e.id = s.Int(0);
    e.run = s.Int(1);
    e.fault = static_cast<FaultId>(s.Int(2));
    e.action = s.Text(3);
    e.target = s.Text(4);
    e.host = ReadHost(s, 5);
    e.apply = s.Text(12);
    e.revert = s.Text(13);
    e.verify = s.Text(14);
    e.readback = s.Text(15);
    if (!s.IsNull(16)) e.expect = s.Double(16);
    e.deadline_unix = s.Int(17);
    e.expiry_token = s.Text(18);
    e.expiry_pid = s.Int(19);
    e.state = s.Text(20);
    e.opened_wall = s.Text(21);
    e.closed_wall = s.Text(22);
    e.note = s.Text(23);
    e.diagnostic = s.Text(24);
    e.diagnostic_host = ReadHost(s, 25);
    out.push_back(std::move(e));
  }
}

}  // namespace

Result<std::vector<LedgerEntry>> Ledger::OpenEntries() const {
  return ReadEntries(state_->db, "state = 'open'", std::nullopt);
}

// Not a tray the healer drained (LedgerEntry::drain()).
const std::string kFaultEntry = "NOT (fault = 0 AND action = 'drain')";

Result<Ledger::OpenCount> Ledger::CountOpen() const {
  const std::string what = "counting open entries";
  const std::string open = "state = 'open' AND " + kFaultEntry;
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare("SELECT COUNT(*), (SELECT opened_wall FROM ledger WHERE " + open +
                                                     " ORDER BY id LIMIT 1) FROM ledger WHERE " + open,
                                                 what));
  RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
  if (!row) return OpenCount{};
  return OpenCount{s.Int(0), s.Text(1)};
}

Result<std::vector<LedgerEntry>> Ledger::Entries(int64_t run) const { return ReadEntries(state_->db, "run = ?1", run); }

Result<std::vector<LedgerRun>> Ledger::UnfinishedRuns() const {
  const std::string what = "reading runs";
  RC_ASSIGN_OR_RETURN(Stmt s, state_->db.Prepare(
      "SELECT id, report_db, report_run, pid, started_wall FROM ledger_runs WHERE finished = 0 ORDER BY id", what));
  std::vector<LedgerRun> out;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, s.Step(what));
    if (!row) return out;
    out.push_back({s.Int(0), s.Text(1), s.Int(2), s.Int(3), s.Text(4), false});
  }
}

Status Ledger::LockRecovery(const std::function<void()>& on_wait) {
  const std::string lock = path() + ".owners";
  if (state_->owners_fd < 0) return Status::IoError("fault ledger '" + path() + "' is open read-only: cannot recover");
  if (state_->Lock(state_->owners_fd, kRecoveryByte, F_OFD_SETLK, F_WRLCK)) return Status::Ok();
  if (errno != EAGAIN && errno != EACCES) return Status::IoError("cannot lock '" + lock + "' for recovery");
  if (on_wait) on_wait();
  if (state_->Lock(state_->owners_fd, kRecoveryByte, F_OFD_SETLKW, F_WRLCK)) return Status::Ok();
  if (errno == EINTR) return Status::Unavailable("interrupted while waiting for another recovery of '" + path() + "'");
  return Status::IoError("cannot lock '" + lock + "' for recovery");
}

void Ledger::UnlockRecovery() {
  if (state_->owners_fd >= 0) state_->Lock(state_->owners_fd, kRecoveryByte, F_OFD_SETLK, F_UNLCK);
}

bool Ledger::OwnerAlive(int64_t run) const {
  // A fresh descriptor is a different open file description, so it sees this process's locks too.
  const int fd = ::open((path() + ".owners").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  short found = F_UNLCK;
  const bool ok = state_->Lock(fd, run, F_OFD_GETLK, F_WRLCK, &found);
  ::close(fd);
  return ok && found != F_UNLCK;
}

}  // namespace rackchaos::runner
