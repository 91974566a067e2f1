// The fault ledger: entries survive reopening, close once, and a run's owner lock tells recover
// whether its process is alive.
#include "runner/ledger.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

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
  auto runs = ledger->UnfinishedRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  CHECK(runs->at(0).report_run == 7);
  CHECK(runs->at(0).pid == ::getpid());
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

}  // namespace
}  // namespace rackchaos::runner
