// A tray a run's healer drained is in the fault ledger until the run returns it to service (issue 25 item
// 2: the rig's soak found trays that killed runs left drained for good). `Recover` returns such a tray
// once its diagnostic passes, as the healer would have, and leaves one whose diagnostic fails drained,
// saying why and how to resume it; either way its entry closes. Within the run the resume closes it.
// On the loopback lab (tests/real/lab.h), whose healer actions keep the drain in a state file; label ssh.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/wall_time.h"
#include "reports/store.h"
#include "runner/site/recover.h"
#include "runner/site/ssh_backend.h"
#include "tests/real/gb200.h"
#include "tests/real/lab.h"
#include "tests/real/lab_site.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;

// The healer's drain and resume on the tray's host, and a diagnostic that fails where a "broken" file is.
constexpr const char* kHealer = R"(healer:
  drain: {apply: 'echo {reason} > "$RCLAB_STATE/drained"'}
  resume: {apply: 'rm -f "$RCLAB_STATE/drained"'}
  diagnostic: {apply: 'if [ -e "$RCLAB_STATE/broken" ]; then echo "GPU 2: memory test failed"; exit 1; fi; echo passed'}
)";

bool HasLine(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  for (const std::string& l : lines)
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

TEST_CASE("recover: a tray a dead run drained is returned once its diagnostic passes, else left drained") {
  auto lab = testing::Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  const std::string path = (*lab)->WriteInventory("drain.yaml");
  std::ofstream(path, std::ios::app) << kHealer;
  const cluster::Topology topo = testing::Gb200();
  const ComponentId tray1 = *topo.Find("r01.tray01"), tray2 = *topo.Find("r01.tray02");
  const fs::path state = fs::path((*lab)->dir()) / "state";
  std::ofstream(state / "host01" / "broken");  // tray02 (host01) fails its diagnostic

  const std::string ledger_path = (*lab)->dir() + "/drain.ledger";
  auto ledger = Ledger::Open(ledger_path);
  REQUIRE(ledger.ok());
  // The run's report: its row is still 'running' when the run dies.
  const std::string db = (*lab)->dir() + "/drain.db";
  auto store = reports::ReportStore::Open(db);
  REQUIRE(store.ok());
  reports::RunInfo info;
  info.plan_name = "drain";
  info.backend = "ssh";
  info.started_wall = WallStampNow();
  const int64_t report_run = *store->BeginRun(info);
  int64_t run = 0;
  {
    auto owner = Ledger::Open(ledger_path);
    REQUIRE(owner.ok());
    testing::LabSite site(path);
    SshBackendOptions options;
    options.ledger = &*owner;
    options.ledger_run = run = *owner->BeginRun(db, report_run);
    SshBackend ssh(site.inv, topo, site.pool, site.clock, site.events, options);
    REQUIRE(ssh.Drain(tray1, "rackchaos: test").ok());
    REQUIRE(ssh.Drain(tray2, "rackchaos: test").ok());
    CHECK(fs::exists(state / "host00" / "drained"));
    CHECK(ledger->OpenEntries()->size() == 2);
    // The run's own resume closes the entry; draining the tray again opens a new one.
    REQUIRE(ssh.Resume(tray1).ok());
    CHECK_FALSE(fs::exists(state / "host00" / "drained"));
    CHECK(ledger->OpenEntries()->size() == 1);
    REQUIRE(ssh.Drain(tray1, "rackchaos: again").ok());
    CHECK(ledger->OpenEntries()->size() == 2);
    CHECK(ledger->CountOpen()->open == 0);  // serve's gauge of faults left applied: drains are not faults
    CHECK(ssh.Shutdown().ok());
    CHECK(ledger->UnfinishedRuns()->size() == 1);  // not finished while it holds trays drained
    // The run is gone with both trays drained.
  }

  auto result = Recover(*ledger, {});
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  CHECK(result->returned == 1);
  CHECK(result->left_drained == 1);
  CHECK(result->failed == 0);
  CHECK(result->reverted == 0);
  CHECK_FALSE(fs::exists(state / "host00" / "drained"));  // tray01 passed its diagnostic: back in service
  CHECK(fs::exists(state / "host01" / "drained"));        // tray02 failed it: still drained
  CHECK(HasLine(result->lines, "r01.tray01", "returned to service"));
  CHECK(HasLine(result->lines, "r01.tray02", "LEFT DRAINED: its diagnostic failed (exit 1): GPU 2: memory"));
  CHECK(ledger->OpenEntries()->empty());
  CHECK(ledger->UnfinishedRuns()->empty());
  const auto entries = ledger->Entries(run);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  CHECK(entries->at(0).note.find("returned to service by the run") != std::string::npos);
  CHECK(entries->at(1).note.find("left drained by rackchaos recover") != std::string::npos);
  CHECK(entries->at(2).note.find("returned to service by rackchaos recover") != std::string::npos);
  // The run's report says so too: it ended aborted, and its reason names the trays (before, only the
  // faults recover reverted: "reverted 0 fault(s)").
  const auto row = store->ReadRun(report_run);
  REQUIRE(row.ok());
  CHECK(row->status == "aborted");
  CHECK_MESSAGE(row->failed_reason.find("reverted 0 fault(s), returned 1 drained tray(s) to service (r01.tray01), "
                                        "left 1 drained (r01.tray02)") != std::string::npos,
                row->failed_reason);

  // Again: nothing left to do.
  auto again = Recover(*ledger, {});
  REQUIRE(again.ok());
  CHECK(again->returned + again->left_drained + again->reverted + again->failed == 0);
}

// A drain whose command failed (Slurm refused it, say) never took the tray out of service. Before, its
// ledger entry stayed open, so the run's end or `rackchaos recover` "returned to service" a tray that had
// never left it (or, when the resume then failed, reported it LEFT DRAINED). Its entry now closes when
// the drain fails, saying so, and recover has nothing to return.
// A diagnostic that runs on another host than resume (run_on: a head node, or resume and drain through the
// scheduler's head while the diagnostic runs on the node, as sites/k8s-example.yaml does) is in the entry
// with its own host. Before, an entry had one host and the diagnostic was left out: recover then said
// there was none, and left the tray drained for good.
TEST_CASE("recover: a drained tray whose diagnostic runs on another host is diagnosed there and returned") {
  auto lab = testing::Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  const std::string path = (*lab)->WriteInventory("headdiag.yaml");
  std::ofstream(path, std::ios::app) << R"(healer:
  drain: {apply: 'echo {reason} > "$RCLAB_STATE/drained"'}
  resume: {apply: 'rm -f "$RCLAB_STATE/drained"'}
  diagnostic:
    run_on: host00
    apply: 'echo {host} >> "$RCLAB_STATE/diagnosed"; if [ -e "$RCLAB_STATE/broken-{host}" ]; then echo "GPU 1: ECC errors"; exit 1; fi; echo passed'
)";
  const cluster::Topology topo = testing::Gb200();
  const ComponentId tray2 = *topo.Find("r01.tray02");
  const fs::path state = fs::path((*lab)->dir()) / "state";

  const std::string ledger_path = (*lab)->dir() + "/headdiag.ledger";
  auto ledger = Ledger::Open(ledger_path);
  REQUIRE(ledger.ok());
  {
    auto owner = Ledger::Open(ledger_path);
    REQUIRE(owner.ok());
    testing::LabSite site(path);
    SshBackendOptions options;
    options.ledger = &*owner;
    options.ledger_run = *owner->BeginRun((*lab)->dir() + "/none.db", 1);
    SshBackend ssh(site.inv, topo, site.pool, site.clock, site.events, options);
    REQUIRE(ssh.Drain(tray2, "rackchaos: test").ok());  // on host01; its diagnostic runs on host00
    CHECK(fs::exists(state / "host01" / "drained"));
    auto open = ledger->OpenEntries();
    REQUIRE(open.ok());
    REQUIRE(open->size() == 1);
    CHECK(open->at(0).host.name == "host01");
    CHECK(open->at(0).verify.empty());  // not on resume's host
    CHECK(open->at(0).diagnostic_host.name == "host00");
    CHECK(open->at(0).diagnostic.find("diagnosed") != std::string::npos);
    // The run is gone with the tray drained.
  }
  auto result = Recover(*ledger, {});
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  CHECK(result->returned == 1);
  CHECK(result->left_drained == 0);
  CHECK(result->failed == 0);
  CHECK(HasLine(result->lines, "r01.tray02", "returned to service"));
  CHECK_FALSE(fs::exists(state / "host01" / "drained"));
  CHECK(testing::ReadText((state / "host00" / "diagnosed").string()) == "host01\n");  // run on host00, for host01
  CHECK(ledger->OpenEntries()->empty());
}

TEST_CASE("recover: a drain that failed is closed as never drained, and nothing returns it") {
  auto lab = testing::Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  const std::string path = (*lab)->WriteInventory("faildrain.yaml");
  std::ofstream(path, std::ios::app) << R"(healer:
  drain: {apply: 'if [ -e "$RCLAB_STATE/refuse" ]; then echo "scontrol: Invalid node state" >&2; exit 1; fi; echo {reason} > "$RCLAB_STATE/drained"'}
  resume: {apply: 'rm -f "$RCLAB_STATE/drained"; echo resumed >> "$RCLAB_STATE/resumes"'}
  diagnostic: {apply: 'echo passed'}
)";
  const cluster::Topology topo = testing::Gb200();
  const ComponentId tray2 = *topo.Find("r01.tray02");
  const fs::path state = fs::path((*lab)->dir()) / "state";
  std::ofstream(state / "host01" / "refuse");  // tray02's host refuses the drain

  const std::string ledger_path = (*lab)->dir() + "/faildrain.ledger";
  auto ledger = Ledger::Open(ledger_path);
  REQUIRE(ledger.ok());
  int64_t run = 0;
  {
    auto owner = Ledger::Open(ledger_path);
    REQUIRE(owner.ok());
    testing::LabSite site(path);
    SshBackendOptions options;
    options.ledger = &*owner;
    options.ledger_run = run = *owner->BeginRun((*lab)->dir() + "/none.db", 1);
    SshBackend ssh(site.inv, topo, site.pool, site.clock, site.events, options);
    const Status drained = ssh.Drain(tray2, "rackchaos: test");
    CHECK_FALSE(drained.ok());
    CHECK(drained.message().find("drain exited 1: scontrol: Invalid node state") != std::string::npos);
    CHECK_FALSE(fs::exists(state / "host01" / "drained"));
    CHECK(ledger->OpenEntries()->empty());  // nothing for the run's end or recover to return
    CHECK(ssh.Shutdown().ok());
  }
  const auto entries = ledger->Entries(run);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK(entries->at(0).state == "closed");
  CHECK_MESSAGE(entries->at(0).note.find("never drained, nothing to return") != std::string::npos, entries->at(0).note);

  auto result = Recover(*ledger, {});
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  CHECK(result->returned == 0);
  CHECK(result->left_drained == 0);
  CHECK(result->lines.empty());
  CHECK_FALSE(fs::exists(state / "host01" / "resumes"));  // no resume ran: there was nothing to return
  CHECK(ledger->UnfinishedRuns()->empty());  // nothing of the run is left open
}

}  // namespace
}  // namespace rackchaos::runner
