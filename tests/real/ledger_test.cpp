// The fault ledger: entries survive reopening, close once, and a run's owner lock tells recover
// whether its process is alive.
#include "runner/site/ledger.h"
#include "runner/site/recover.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "core/wall_time.h"
#include "reports/sqlite_db.h"
#include "reports/store.h"

namespace rackchaos::runner {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/rc-ledger-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

LedgerEntry Entry(int64_t run, FaultId fault) {
  LedgerEntry e;
  e.run = run;
  e.fault = fault;
  e.action = "link_down";
  e.target = "r01.tray01.nic0";
  e.host = {"h1", "127.0.0.2", 2222, "rcssh", "/k", false, "/kh"};
  e.apply = "ip link set dev 'eth0' down";
  e.revert = "ip link set dev 'eth0' up";
  e.verify = "test -e x";
  return e;
}

TEST_CASE("ledger: entries are durable, close once, and keep their revert") {
  TempDir dir;
  const std::string path = dir.path + "/r.db.ledger";
  CHECK(DefaultLedgerPath(dir.path + "/r.db") == path);
  int64_t run = 0, first = 0;
  {
    auto ledger = Ledger::Open(path);
    REQUIRE_MESSAGE(ledger.ok(), ledger.status().ToString());
    auto r = ledger->BeginRun(dir.path + "/r.db", 7);
    REQUIRE(r.ok());
    run = *r;
    auto a = ledger->Record(Entry(run, 1));
    auto b = ledger->Record(Entry(run, 2));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    first = *a;
    CHECK(ledger->SetExpiry(*b, "/tmp/tok", 4242).ok());
    CHECK(ledger->Close(*a, "fault #1 reverted").ok());
  }
  auto ledger = Ledger::Open(path);
  REQUIRE(ledger.ok());
  auto open = ledger->OpenEntries();
  REQUIRE(open.ok());
  REQUIRE(open->size() == 1);
  CHECK(open->at(0).fault == 2);
  CHECK(open->at(0).revert == "ip link set dev 'eth0' up");
  CHECK(open->at(0).host.port == 2222);
  CHECK(open->at(0).expiry_token == "/tmp/tok");
  CHECK(open->at(0).expiry_pid == 4242);
  CHECK_FALSE(open->at(0).expect.has_value());
  auto all = ledger->Entries(run);
  REQUIRE(all.ok());
  CHECK(all->at(0).id == first);
  CHECK(all->at(0).state == "closed");
  CHECK(all->at(0).note == "fault #1 reverted");
  // One query's count and oldest stamp say what OpenEntries says.
  auto count = ledger->CountOpen();
  REQUIRE(count.ok());
  CHECK(count->open == 1);
  CHECK(count->oldest_opened_wall == open->at(0).opened_wall);
  CHECK_FALSE(count->oldest_opened_wall.empty());
  auto runs = ledger->UnfinishedRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  CHECK(runs->at(0).report_run == 7);
  CHECK(runs->at(0).pid == ::getpid());
}

TEST_CASE("ledger: a read-only ledger reads what a writer left and writes nothing") {
  TempDir dir;
  const std::string path = dir.path + "/l.db";
  CHECK(Ledger::OpenReadOnly(path).status().code() == StatusCode::kNotFound);
  int64_t entry = 0;
  {
    auto ledger = Ledger::Open(path);
    REQUIRE(ledger.ok());
    auto run = ledger->BeginRun("r.db", 1);
    REQUIRE(run.ok());
    auto recorded = ledger->Record(Entry(*run, 3));
    REQUIRE(recorded.ok());
    entry = *recorded;
  }
  auto reader = Ledger::OpenReadOnly(path);
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  auto open = reader->OpenEntries();
  REQUIRE(open.ok());
  REQUIRE(open->size() == 1);
  CHECK(open->at(0).id == entry);
  CHECK(open->at(0).revert == "ip link set dev 'eth0' up");
  const Status closing = reader->Close(entry, "no");
  CHECK(closing.code() == StatusCode::kIoError);
  CHECK(closing.message().find("fault ledger '" + path + "'") != std::string::npos);
  CHECK(reader->BeginRun("r.db", 2).status().code() == StatusCode::kIoError);
  CHECK(Ledger::Open(path)->OpenEntries()->size() == 1);
}

TEST_CASE("ledger: a run's owner is alive exactly while its Ledger holds the run") {
  TempDir dir;
  const std::string path = dir.path + "/x.ledger";
  auto observer = Ledger::Open(path);
  REQUIRE(observer.ok());
  int64_t run = 0;
  {
    auto owner = Ledger::Open(path);
    REQUIRE(owner.ok());
    run = *owner->BeginRun("x.db", 1);
    CHECK(observer->OwnerAlive(run));
    CHECK(owner->OwnerAlive(run));  // its own runs count as live too
  }
  CHECK_FALSE(observer->OwnerAlive(run));
  auto again = Ledger::Open(path);
  REQUIRE(again.ok());
  int64_t second = *again->BeginRun("x.db", 2);
  CHECK(observer->OwnerAlive(second));
  CHECK(again->FinishRun(second).ok());
  CHECK_FALSE(observer->OwnerAlive(second));
  CHECK(again->UnfinishedRuns()->size() == 1);  // the first run never finished
}

TEST_CASE("recover: one process at a time; the next waits, saying so, and goes on once the holder is killed -9") {
  TempDir dir;
  const std::string path = dir.path + "/w.ledger";
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  // Another process holds the recovery lock, as a `rackchaos recover` in the middle of its replay does.
  const pid_t holder = fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    close(ready[0]);
    auto ledger = Ledger::Open(path);
    if (!ledger.ok() || !ledger->LockRecovery(nullptr).ok() || write(ready[1], "l", 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  const bool locked = read(ready[0], &byte, 1) == 1;
  close(ready[0]);
  if (!locked) {
    kill(holder, SIGKILL);
    waitpid(holder, nullptr, 0);
  }
  REQUIRE(locked);

  auto ledger = Ledger::Open(path);
  REQUIRE(ledger.ok());
  int64_t dead_run = 0;
  {
    auto owner = Ledger::Open(path);  // a run that died and left nothing open: recover finishes it
    REQUIRE(owner.ok());
    dead_run = *owner->BeginRun(dir.path + "/none.db", 1);
  }
  RecoverOptions options;
  std::vector<std::string> waited;
  options.on_wait = [&](const std::string& line) {
    waited.push_back(line);
    CHECK(ledger->UnfinishedRuns()->size() == 1);  // nothing done before the holder is gone
    kill(holder, SIGKILL);  // the kernel drops its lock; the blocked wait then takes it
  };
  auto recovered = Recover(*ledger, options);
  int status = 0;
  waitpid(holder, &status, 0);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  REQUIRE_MESSAGE(recovered.ok(), recovered.status().ToString());
  REQUIRE(waited.size() == 1);
  CHECK(waited[0].find("another process is recovering fault ledger " + path) == 0);
  CHECK(ledger->UnfinishedRuns()->empty());
  CHECK_FALSE(ledger->OwnerAlive(dead_run));

  // Free now: the next recovery takes the lock at once. Another Ledger of this same process holding it
  // keeps it out as another process would (open-file-description locks).
  waited.clear();
  CHECK(Recover(*ledger, options).ok());
  CHECK(waited.empty());
  auto other = Ledger::Open(path);
  REQUIRE(other.ok());
  REQUIRE(other->LockRecovery(nullptr).ok());
  options.on_wait = [&](const std::string& line) {
    waited.push_back(line);
    other->UnlockRecovery();
  };
  CHECK(Recover(*ledger, options).ok());
  CHECK(waited.size() == 1);
  CHECK(Ledger::OpenReadOnly(path)->LockRecovery(nullptr).code() == StatusCode::kIoError);
}

TEST_CASE("recover: --forget closes an unrevertable entry unrun, all or nothing") {
  TempDir dir;
  const std::string path = dir.path + "/f.ledger";
  auto ledger = Ledger::Open(path);
  REQUIRE(ledger.ok());
  int64_t dead_run = 0, entry = 0;
  {
    auto owner = Ledger::Open(path);
    REQUIRE(owner.ok());
    dead_run = *owner->BeginRun(dir.path + "/none.db", 1);
    LedgerEntry e = Entry(dead_run, 1);
    e.host = {"gone", "127.0.0.1", 1, "rcssh", dir.path + "/no-key", false, dir.path + "/kh"};  // nothing listens
    entry = *owner->Record(e);
  }
  auto listed = ListOpen(*ledger);
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].find("entry " + std::to_string(entry) + " (run " + std::to_string(dead_run) + ")") == 0);

  RecoverOptions options;
  options.connect_timeout = Duration::Seconds(2);
  auto tried = Recover(*ledger, options);  // the host is unreachable: the entry stays open
  REQUIRE(tried.ok());
  CHECK(tried->failed == 1);
  CHECK(ledger->OpenEntries()->size() == 1);

  options.forget = {entry, entry + 100};  // one unknown id: nothing is forgotten
  auto refused = Recover(*ledger, options);
  CHECK(refused.status().code() == StatusCode::kNotFound);
  CHECK(ledger->OpenEntries()->size() == 1);

  options.forget = {entry};
  options.forget_reason = "tray RMA'd";
  auto forgot = Recover(*ledger, options);
  REQUIRE_MESSAGE(forgot.ok(), forgot.status().ToString());
  CHECK(forgot->forgotten == 1);
  CHECK(forgot->failed == 0);
  CHECK(ledger->OpenEntries()->empty());
  const auto entries = ledger->Entries(dead_run);
  REQUIRE(entries.ok());
  CHECK(entries->at(0).state == "closed");
  CHECK(entries->at(0).note.find("never reverted: tray RMA'd") != std::string::npos);
  CHECK(ledger->UnfinishedRuns()->empty());  // nothing left open: the run is finished in the ledger

  // Entries of a run whose process is alive cannot be forgotten.
  const int64_t live_run = *ledger->BeginRun(dir.path + "/none.db", 2);
  const int64_t live_entry = *ledger->Record(Entry(live_run, 1));
  options.forget = {live_entry};
  CHECK(Recover(*ledger, options).status().code() == StatusCode::kInvalidArgument);
  CHECK(ledger->OpenEntries()->size() == 1);
}

// A real run registers in the ledger before it writes its report row and numbers it there after
// (SshBackend::PrepareRun, StartRun); one killed in between left a row 'running' that the ledger does
// not name (the rig soak's kill at 0.07 s, RACKCHAOS_SOAK_SEED=20261202, iteration 176). The row names
// the ledger run (RunInfo::ledger, ledger_run), and recover finds it by that: before, it went by the
// times, and found nothing when two such runs died, or took the row of another process's run (a
// simulated one, which has no ledger) for one that died before it wrote a row.
TEST_CASE("recover: a run killed before it numbered its report row is found by the ledger run its row names") {
  TempDir dir;
  const std::string db = dir.path + "/r.db";
  auto store = reports::ReportStore::Open(db);
  REQUIRE(store.ok());
  const std::string ledger_path = DefaultLedgerPath(db);
  auto row = [&](int64_t ledger_run) {
    reports::RunInfo info;
    info.plan_name = "p";
    info.backend = ledger_run ? "ssh" : "sim";
    info.started_wall = WallStampNow();
    if (ledger_run) info.ledger = LedgerIdentity(dir.path + "/./r.db.ledger");  // one file, however named
    info.ledger_run = ledger_run;
    return *store->BeginRun(info);
  };
  auto ledger = Ledger::Open(ledger_path);
  REQUIRE(ledger.ok());
  std::vector<int64_t> killed;
  for (int i = 0; i < 2; ++i) {  // two runs die, each after writing its row, before numbering it
    auto owner = Ledger::Open(ledger_path);
    REQUIRE(owner.ok());
    auto run = owner->BeginRun(db, 0);
    REQUIRE(run.ok());
    killed.push_back(row(*run));
  }
  {  // and one before it wrote its row at all
    auto owner = Ledger::Open(ledger_path);
    REQUIRE(owner.ok());
    REQUIRE(owner->BeginRun(db, 0).ok());
  }
  const int64_t simulated = row(0);  // another process's simulated run, still going: no ledger
  const int64_t live = row(0);       // a real run that is still going, numbered
  REQUIRE(ledger->BeginRun(db, live).ok());
  auto result = Recover(*ledger, {});
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  CHECK(result->runs_aborted == 2);
  CHECK(store->ReadRun(killed[0])->status == "aborted");
  CHECK(store->ReadRun(killed[1])->status == "aborted");
  CHECK(store->ReadRun(simulated)->status == "running");
  CHECK(store->ReadRun(live)->status == "running");
  CHECK(ledger->UnfinishedRuns()->size() == 1);  // the live one
}

// A database written before rows named their ledger run (schema version 16): its rows are found by the
// times, as before: the one row still running, started after the run registered, that no other run claims.
TEST_CASE("recover: in a database from before rows named their ledger run, the row is found by the times") {
  TempDir dir;
  const std::string db = dir.path + "/r.db";
  auto store = reports::ReportStore::Open(db);
  REQUIRE(store.ok());
  auto row = [&](const std::string& started) {
    reports::RunInfo info;
    info.plan_name = "p";
    info.backend = "ssh";
    info.started_wall = started;
    return *store->BeginRun(info);
  };
  const int64_t older = row("2000-01-01T00:00:00Z");  // a crash from before the ledger knew the run: not its
  auto ledger = Ledger::Open(DefaultLedgerPath(db));
  REQUIRE(ledger.ok());
  int64_t killed = 0;
  {
    auto owner = Ledger::Open(DefaultLedgerPath(db));
    REQUIRE(owner.ok());
    REQUIRE(owner->BeginRun(db, 0).ok());
    killed = row(WallStampNow());  // then the process dies: the ledger never learns the row's id
  }
  const int64_t live = row(WallStampNow());  // a run that is still going, numbered
  REQUIRE(ledger->BeginRun(db, live).ok());
  {  // the rows as a rackchaos from before version 16 stored them (and the migration left them): no ledger run
    auto raw = reports::Db::Open(db, reports::kOpenReadWrite);
    REQUIRE(raw.ok());
    REQUIRE(raw->Exec("UPDATE runs SET ledger = NULL, ledger_run = NULL", "as stored before").ok());
  }
  auto result = Recover(*ledger, {});
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  CHECK(result->runs_aborted == 1);
  CHECK(store->ReadRun(killed)->status == "aborted");
  CHECK(store->ReadRun(older)->status == "running");
  CHECK(store->ReadRun(live)->status == "running");
  CHECK(ledger->UnfinishedRuns()->size() == 1);  // the live one
}

// A ledger written before entries had a diagnostic host of their own (LedgerEntry::diagnostic) opens: its
// open entries read back with none, and it takes entries that have one.
TEST_CASE("ledger: a ledger from before drains named their diagnostic's host opens and takes such entries") {
  TempDir dir;
  const std::string path = dir.path + "/old.db.ledger";
  {  // the schema as it first shipped, with a run and an open drain entry
    auto raw = reports::Db::Open(path, reports::kOpenReadWrite | reports::kOpenCreate, reports::DbKind::kFaultLedger);
    REQUIRE(raw.ok());
    REQUIRE(raw->Exec(R"(
CREATE TABLE ledger_runs(
  id INTEGER PRIMARY KEY, report_db TEXT NOT NULL, report_run INTEGER NOT NULL, pid INTEGER NOT NULL,
  started_wall TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ledger(
  id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES ledger_runs(id), fault INTEGER NOT NULL,
  action TEXT NOT NULL, target TEXT NOT NULL,
  host TEXT NOT NULL, address TEXT NOT NULL, port INTEGER NOT NULL, user TEXT NOT NULL,
  identity_file TEXT NOT NULL, use_agent INTEGER NOT NULL, known_hosts TEXT NOT NULL,
  apply TEXT NOT NULL, revert TEXT NOT NULL, verify TEXT NOT NULL, readback TEXT NOT NULL, expect REAL,
  deadline_unix INTEGER NOT NULL, expiry_token TEXT NOT NULL DEFAULT '', expiry_pid INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('open', 'closed')), opened_wall TEXT NOT NULL,
  closed_wall TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE INDEX ledger_open ON ledger(state) WHERE state = 'open';
INSERT INTO ledger_runs(report_db, report_run, pid, started_wall) VALUES ('r.db', 1, 1, '2026-12-01T00:00:00Z');
INSERT INTO ledger(run, fault, action, target, host, address, port, user, identity_file, use_agent, known_hosts,
  apply, revert, verify, readback, deadline_unix, state, opened_wall)
  VALUES (1, 0, 'drain', 'r01.tray02', 'h2', '127.0.0.3', 22, 'rcssh', '/k', 0, '/kh', 'drain', 'resume',
  'diag', '', 0, 'open', '2026-12-01T00:00:01Z');
)", "the first schema").ok());
  }
  for (int i = 0; i < 2; ++i) {  // opened twice: the columns are added once
    auto ledger = Ledger::Open(path);
    REQUIRE_MESSAGE(ledger.ok(), ledger.status().ToString());
    auto open = ledger->OpenEntries();
    REQUIRE(open.ok());
    REQUIRE(open->size() == 1 + i);
    CHECK(open->at(0).drain());
    CHECK(open->at(0).verify == "diag");
    CHECK(open->at(0).diagnostic.empty());
    CHECK(open->at(0).diagnostic_host.name.empty());
    if (i == 0) {
      LedgerEntry e = Entry(1, 0);
      e.action = "drain";
      e.verify.clear();
      e.diagnostic = "dcgmi diag -r 2";
      e.diagnostic_host = {"head", "127.0.0.4", 2200, "ops", "/k2", true, "/kh2"};
      REQUIRE(ledger->Record(e).ok());
    } else {
      const LedgerEntry& e = open->at(1);
      CHECK(e.diagnostic == "dcgmi diag -r 2");
      CHECK(e.diagnostic_host.name == "head");
      CHECK(e.diagnostic_host.address == "127.0.0.4");
      CHECK(e.diagnostic_host.port == 2200);
      CHECK(e.diagnostic_host.user == "ops");
      CHECK(e.diagnostic_host.identity_file == "/k2");
      CHECK(e.diagnostic_host.use_agent);
      CHECK(e.diagnostic_host.known_hosts_file == "/kh2");
    }
  }
}

TEST_CASE("ledger: notes keep the entry's history, each line with its time, a repeated failure once") {
  TempDir dir;
  auto ledger = Ledger::Open(dir.path + "/h.db.ledger");
  REQUIRE(ledger.ok());
  auto run = ledger->BeginRun(dir.path + "/h.db", 1);
  REQUIRE(run.ok());
  auto id = ledger->Record(Entry(*run, 1));
  REQUIRE(id.ok());
  REQUIRE(ledger->SetNote(*id, "host lost, revert failed: connection refused").ok());
  REQUIRE(ledger->SetNote(*id, "host lost, revert failed: connection refused").ok());  // a retry, the same way
  REQUIRE(ledger->Close(*id, "fault #1 reverted late: h1 answered again").ok());
  auto all = ledger->Entries(*run);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  const LedgerEntry& e = all->at(0);
  CHECK(e.state == "closed");
  const std::string& n = e.note;
  // "<stamp> host lost, ...\n<closed stamp> fault #1 reverted late: ..."
  const size_t nl = n.find('\n');
  REQUIRE_MESSAGE(nl != std::string::npos, n);
  CHECK_MESSAGE(n.find('\n', nl + 1) == std::string::npos, n);  // the repeated failure is one line
  const std::string first = n.substr(0, nl), second = n.substr(nl + 1);
  CHECK_MESSAGE(first.find(" host lost, revert failed: connection refused") != std::string::npos, first);
  CHECK_MESSAGE(first.rfind(" host lost") > 0, first);  // after the time
  CHECK_MESSAGE(second == e.closed_wall + " fault #1 reverted late: h1 answered again", second);
  // In order: the failure came before the close.
  CHECK(first.substr(0, first.find(' ')) <= e.closed_wall);
}

// The trays an aborted run's reason names: all of a few, the first eight of many (a healer that drained
// 5,000 trays must not write a reason of 5,000 names), none of none.
TEST_CASE("recover: an aborted run's reason names at most eight trays") {
  CHECK(NameTrays({}).empty());
  CHECK(NameTrays({"r01.tray01"}) == " (r01.tray01)");
  std::vector<std::string> many;
  for (int i = 0; i < 5000; ++i) many.push_back("r" + std::to_string(i / 18) + ".tray" + std::to_string(i % 18));
  const std::string named = NameTrays(many);
  CHECK(named == " (r0.tray0, r0.tray1, r0.tray2, r0.tray3, r0.tray4, r0.tray5, r0.tray6, r0.tray7, and 4,992 more)");
  many.resize(kTraysNamed);
  CHECK(NameTrays(many).find("more") == std::string::npos);
}

}  // namespace
}  // namespace rackchaos::runner
