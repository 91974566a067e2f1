// Real mode end to end: the built rackchaos binary against the loopback lab (tests/real/lab.h), with
// the state checked on the "hosts" themselves: veth links in the lab's namespace, fake GPU limits.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "reports/store.h"
#include "core/wall_time.h"
#include "runner/site/inventory.h"
#include "runner/site/ledger.h"
#include "runner/site/recover.h"
#include "runner/site/ssh_backend.h"
#include "runner/ssh/command_template.h"
#include "runner/ssh/ssh_pool.h"
#include "tests/real/lab.h"
#include "tests/real/lab_checks.h"

namespace rackchaos::runner {
namespace {

using testing::Lab;
using testing::ReadText;
using testing::SpawnRackchaos;
using testing::WaitExit;
using testing::WaitFor;

using testing::StartLab;
// Open ledger entries right now (0 when the ledger does not exist yet); `armed` counts only those
// with a host-side expiry.
size_t OpenEntries(const std::string& ledger_path, bool armed = false) {
  if (!std::filesystem::exists(ledger_path)) return 0;
  auto ledger = Ledger::Open(ledger_path);
  if (!ledger.ok()) return 0;
  auto open = ledger->OpenEntries();
  if (!open.ok()) return 0;
  size_t n = 0;
  for (const LedgerEntry& e : *open) n += !armed || !e.expiry_token.empty();
  return n;
}

using testing::OnlyRun;
std::vector<reports::EventRow> OnlyRunEvents(const std::string& db) {
  auto store = reports::ReportStore::Open(db);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  auto events = store->ReadEvents(OnlyRun(db).id);
  REQUIRE(events.ok());
  return *events;
}

int Recover(Lab& lab, const std::string& db, std::string* output = nullptr) {
  const std::string log = lab.dir() + "/recover.log";
  const int code = WaitExit(SpawnRackchaos({"recover", "--db", db}, log), 60);
  if (output) *output = ReadText(log);
  return code;
}

TEST_CASE("real: a plan applies link_down and gpu_throttle on the hosts and restores both") {
  auto lab = StartLab();
  const std::string a0 = lab->Iface('a', 0), a1 = lab->Iface('a', 1);
  const std::string inv = lab->WriteInventory("lab.yaml");
  const std::string plan = lab->WritePlan("both", inv,
                                          "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 3s}\n"
                                          "  - {at: 0s, kind: gpu_throttle, target: r01.tray02.gpu1, for: 3s, "
                                          "params: {power_cap: 600W}}\n");
  const std::string db = lab->dir() + "/b.db", log = lab->dir() + "/b.log";
  REQUIRE(lab->LinkUp(a0));
  REQUIRE(lab->PowerLimit(1, 1) == "1200.00");
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  // At apply: the link is down and the cap is set, on the hosts themselves.
  CHECK_MESSAGE(WaitFor([&] { return !lab->LinkUp(a0) && lab->PowerLimit(1, 1) == "600.00"; }, 10), ReadText(log));
  CHECK(lab->LinkUp(a1));
  CHECK(lab->PowerLimit(1, 0) == "1200.00");
  // At revert: both back to their baselines.
  CHECK_MESSAGE(WaitExit(pid, 30) == 0, ReadText(log));
  CHECK(lab->LinkUp(a0));
  CHECK(lab->PowerLimit(1, 1) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 0);

  auto store = reports::ReportStore::Open(db);
  REQUIRE(store.ok());
  reports::RunRow run = OnlyRun(db);
  CHECK(run.info.backend == "ssh");
  CHECK(run.status == "passed");
  auto faults = store->ReadFaults(run.id);
  REQUIRE(faults.ok());
  REQUIRE(faults->size() == 2);
  for (const auto& f : *faults) CHECK(f.reverted.has_value());
  CHECK(faults->at(0).detail.find("state=down") != std::string::npos);
  auto events = store->ReadEvents(run.id);
  REQUIRE(events.ok());
  int applies = 0, reverts = 0;
  for (const auto& e : *events) {
    applies += e.type == "action" && e.detail.find("link set dev") != std::string::npos &&
               e.detail.find("' down -> exit 0") != std::string::npos;
    reverts += e.type == "fault_reverted";
  }
  CHECK_MESSAGE(applies == 1, events->size());
  CHECK(reverts == 2);
}

TEST_CASE("real: a hostile interface name in the inventory never runs as a command") {
  auto lab = StartLab();
  // 15 characters, a valid Linux interface name, and a command if it were ever spliced into a shell.
  const std::string inv = lab->WriteInventory("hostile.yaml", "30s", "", {{"nics: [rc@TAG@a0,", "nics: [\"rc;touch${IFS}p\","}});
  const std::string plan = lab->WritePlan("hostile", inv, "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 1s}\n");
  const std::string db = lab->dir() + "/h.db", log = lab->dir() + "/h.log";
  const std::string home = "/var/lib/" + std::string(ssh::testing::SshdFixture::kUser);
  std::filesystem::remove(home + "/p");
  // The name reaches the host as one word, which the lab's ip wrapper refuses: apply fails (exit 3).
  CHECK_MESSAGE(WaitExit(SpawnRackchaos({"run", plan, "--db", db}, log), 30) == 3, ReadText(log));
  CHECK_FALSE(std::filesystem::exists(home + "/p"));
  CHECK(ReadText(log).find("rclab-ip: refused") != std::string::npos);
  CHECK(OnlyRun(db).status == "error");
  // Its revert was refused as well, so the ledger keeps the entry: rackchaos cannot prove the link is up.
  CHECK(OpenEntries(db + ".ledger") == 1);
}

// Two gpu_throttle faults hold one GPU (SshBackend's holds): each has its ledger entry, and recover
// restores the baseline from them.
TEST_CASE("real: kill -9 of the runner, then recover restores the hosts and marks the run aborted") {
  auto lab = StartLab();
  const std::string b1 = lab->Iface('b', 1);
  const std::string inv = lab->WriteInventory("lab.yaml");
  const std::string plan = lab->WritePlan("long", inv,
                                          "  - {at: 0s, kind: link_down, target: r01.tray02.nic1, for: 10m}\n"
                                          "  - {at: 0s, kind: gpu_throttle, target: r01.tray01.gpu2, for: 10m, "
                                          "params: {power_cap: 500W}}\n"
                                          "  - {at: 1s, kind: gpu_throttle, target: r01.tray01.gpu2, for: 10m, "
                                          "params: {power_cap: 700W}}\n");
  const std::string db = lab->dir() + "/k.db", log = lab->dir() + "/k.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  // Once the faults are on the hosts and their expiries armed, kill the runner where it stands.
  REQUIRE_MESSAGE(WaitFor([&] { return OpenEntries(db + ".ledger", true) == 3 && !lab->LinkUp(b1) &&
                                       lab->PowerLimit(0, 2) == "500.00"; }, 15),
                  ReadText(log));
  ::kill(pid, SIGKILL);
  CHECK(WaitExit(pid, 10) == 128 + SIGKILL);
  CHECK_FALSE(lab->LinkUp(b1));  // the fault outlives its runner...
  CHECK(OnlyRun(db).status == "running");
  // Its row names its ledger run (recover finds the row by that when the ledger never learned the row's id).
  CHECK(OnlyRun(db).info.ledger == LedgerIdentity(db + ".ledger"));
  CHECK(OnlyRun(db).info.ledger_run == 1);

  std::string out;
  CHECK_MESSAGE(Recover(*lab, db, &out) == 0, out);  // ...until recover replays the ledger
  CHECK(out.find("3 reverted, 0 still open") != std::string::npos);
  CHECK(out.find("marked aborted") != std::string::npos);
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 0);
  reports::RunRow run = OnlyRun(db);  // the database opens
  CHECK(run.status == "aborted");
  auto store = reports::ReportStore::Open(db);
  auto faults = store->ReadFaults(run.id);
  REQUIRE(faults.ok());
  REQUIRE(faults->size() == 3);
  for (const auto& f : *faults) CHECK(f.reverted.has_value());
  // Idempotent: a second recover finds nothing to do and changes nothing.
  CHECK_MESSAGE(Recover(*lab, db, &out) == 0, out);
  CHECK(out.find("0 reverted, 0 still open") != std::string::npos);
  CHECK(lab->LinkUp(b1));
}

TEST_CASE("real: recover finds an expiry timer the run armed but never heard back from, removes it and says so") {
  auto lab = StartLab();
  auto inv = LoadInventory(lab->WriteInventory("lab.yaml"));
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  const ssh::HostSpec host = inv->hosts.at("host00").spec;
  const std::string path = lab->dir() + "/stray.db.ledger";
  // A run that recorded a fault with a duration, armed its expiry and died before the arming's answer
  // came back: the ledger has the entry with a deadline and no token.
  int64_t run = 0, entry = 0;
  {
    auto owner = Ledger::Open(path);
    REQUIRE(owner.ok());
    run = *owner->BeginRun(lab->dir() + "/none.db", 1);
    LedgerEntry e;
    e.run = run;
    e.fault = 1;
    e.action = "link_down";
    e.target = "r01.tray01.nic0";
    e.host = host;
    e.apply = "true";
    e.revert = "true";
    e.verify = "exit 1";  // not in effect: recover runs no revert, only looks for the timer
    e.deadline_unix = UnixSecondsNow() + 600;
    entry = *owner->Record(e);
  }  // the owner is gone (its lock with it); its pid is this process's, as ledger_runs says
  // The timer on the host, armed over SSH as the run would have (the host's user, the host's TMPDIR).
  boost::asio::io_context io;
  ssh::SshPool pool(io);
  REQUIRE(pool.ConnectAll({host}).ok());
  const std::string stray = lab->dir() + "/state/stray-reverted";
  ssh::CommandResult armed =
      pool.RunAll({host.name}, ExpiryCommand(Duration::Seconds(600), "touch " + stray, ExpiryTag(::getpid(), run, entry)))
          .at(0);
  REQUIRE_MESSAGE(armed.status.ok(), armed.status.ToString());
  std::istringstream out(armed.out);
  std::string token;
  int64_t pid = 0;
  REQUIRE((out >> token >> pid));
  REQUIRE(std::filesystem::exists(token));

  auto ledger = Ledger::Open(path);
  REQUIRE(ledger.ok());
  auto recovered = runner::Recover(*ledger, RecoverOptions{});
  REQUIRE_MESSAGE(recovered.ok(), recovered.status().ToString());
  std::string lines;
  for (const std::string& l : recovered->lines) lines += l + "\n";
  CHECK_MESSAGE(recovered->expiries_swept == 1, lines);
  CHECK(recovered->reverted == 1);
  CHECK(lines.find("removed 1 host-side expiry timer(s) whose arming the run never heard back from (" + token + ")") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(token));
  // Gone, or a zombie waiting for this machine's init.
  CHECK(WaitFor([&] { return ReadText("/proc/" + std::to_string(pid) + "/stat").find(") Z ") != std::string::npos ||
                             !std::filesystem::exists("/proc/" + std::to_string(pid)); }, 5));
  const auto entries = ledger->Entries(run);
  REQUIRE(entries.ok());
  CHECK(entries->at(0).state == "closed");
  CHECK(entries->at(0).note.find("removed 1 host-side expiry timer(s)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(stray));
}

// Gated applies waiting on this lab's hosts now (their bash runs as `bash -c <gate> rackchaos-armed`, the
// apply in <gate> starting with the host's env, which names the lab's directory): not another rig's.
int ArmedOnHosts(const Lab& lab) {
  std::string out;
  ssh::testing::RunShell("pgrep -c -f -- " + ssh::ShellQuote(lab.dir() + "/.*[r]ackchaos-armed"), &out);
  return std::atoi(out.c_str());
}

// Two faults at 3.5 s on both lab hosts (link_down on r01.tray02.nic1, gpu_throttle on r01.tray01.gpu2).
std::string ArmedPlan(Lab& lab, const std::string& name) {
  return lab.WritePlan(name, lab.WriteInventory("lab.yaml"),
                       "  - {at: 3500ms, kind: link_down, target: r01.tray02.nic1, for: 10m}\n"
                       "  - {at: 3500ms, kind: gpu_throttle, target: r01.tray01.gpu2, for: 10m, "
                       "params: {power_cap: 500W}}\n");
}

TEST_CASE("real: faults that share an at are in the ledger and armed before they land, then land together") {
  auto lab = StartLab();
  const std::string b1 = lab->Iface('b', 1);
  // Armed 1.5 s ahead (the default 3 s would arm them at 0.5 s), told the instant 100 ms ahead.
  const std::string inventory = lab->WriteInventory(
      "lab.yaml", "30s", "", {{"command_timeout: 20s", "command_timeout: 20s\n  arm_lead: 1500ms\n  fire_lead: 100ms"}});
  const std::string plan = lab->WritePlan("together", inventory,
                                          "  - {at: 3500ms, kind: link_down, target: r01.tray02.nic1, for: 2s}\n"
                                          "  - {at: 3500ms, kind: gpu_throttle, target: r01.tray01.gpu2, for: 2s, "
                                          "params: {power_cap: 500W}}\n");
  const std::string db = lab->dir() + "/t.db", log = lab->dir() + "/t.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  // Armed: both entries written and both applies waiting on their hosts, and nothing applied yet.
  REQUIRE_MESSAGE(WaitFor([&] { return OpenEntries(db + ".ledger") == 2 && ArmedOnHosts(*lab) == 2; }, 10), ReadText(log));
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK_MESSAGE(WaitFor([&] { return !lab->LinkUp(b1) && lab->PowerLimit(0, 2) == "500.00"; }, 10), ReadText(log));
  CHECK_MESSAGE(WaitExit(pid, 30) == 0, ReadText(log));
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 0);
  int armed = 0, applied = 0, clocks = 0, landed = 0;
  for (const auto& e : OnlyRunEvents(db)) {
    landed += e.detail.find("ssh.land ok: 2 of 2 apply command(s) started within") == 0 &&
              e.detail.find("; they ended within") != std::string::npos;
    // The fault hosts' clocks were probed at connect (loopback: the same clock, within the round trip).
    clocks += e.type == "action" && e.detail.find("ssh.clock ok") == 0 &&
              e.detail.find("2 fault host clock(s), largest offset host0") != std::string::npos;
    const bool arm = e.type == "action" && e.detail.find("-> armed") != std::string::npos;
    armed += arm;
    CHECK_MESSAGE((!arm || e.at >= Duration::Millis(2000)), e.detail);  // at - ssh.arm_lead, not earlier
    if (e.type == "fault_injected") CHECK(e.at >= Duration::Millis(3500));  // at the instant or (late) after
    applied += e.type == "action" && e.detail.find("-> exit 0") != std::string::npos &&
               (e.detail.find("' down") != std::string::npos || e.detail.find("-pl '500'") != std::string::npos);
  }
  CHECK(armed == 2);
  CHECK(applied == 2);
  CHECK(clocks == 1);
  CHECK(landed == 1);
  CHECK(ReadText(log).find("its faults land that far") == std::string::npos);
}

TEST_CASE("real: kill -9 while faults are armed leaves nothing applied, and recover closes their entries") {
  auto lab = StartLab();
  const std::string b1 = lab->Iface('b', 1);
  const std::string db = lab->dir() + "/ka.db", log = lab->dir() + "/ka.log";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = SpawnRackchaos({"run", ArmedPlan(*lab, "killarmed"), "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return OpenEntries(db + ".ledger") == 2 && ArmedOnHosts(*lab) == 2; }, 10), ReadText(log));
  ::kill(pid, SIGKILL);
  CHECK(WaitExit(pid, 10) == 128 + SIGKILL);
  // The gates saw their input close: past the faults' time, nothing landed and nothing waits.
  std::this_thread::sleep_until(start + std::chrono::milliseconds(4500));
  CHECK(WaitFor([&] { return ArmedOnHosts(*lab) == 0; }, 5));
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 2);  // the ledger cannot know that: recover replays the reverts
  std::string out;
  CHECK_MESSAGE(Recover(*lab, db, &out) == 0, out);
  CHECK(out.find("2 reverted, 0 still open") != std::string::npos);
  CHECK_MESSAGE(out.find("2 of the reverted found not in effect (nothing run)") != std::string::npos, out);  // never landed
  CHECK(OpenEntries(db + ".ledger") == 0);
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK(OnlyRun(db).status == "aborted");
}

TEST_CASE("real: SIGINT while faults are armed disarms them: they never run and their entries close") {
  auto lab = StartLab();
  const std::string b1 = lab->Iface('b', 1);
  const std::string db = lab->dir() + "/ia.db", log = lab->dir() + "/ia.log";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = SpawnRackchaos({"run", ArmedPlan(*lab, "intarmed"), "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return ArmedOnHosts(*lab) == 2; }, 10), ReadText(log));
  ::kill(pid, SIGINT);
  CHECK_MESSAGE(WaitExit(pid, 30) == 4, ReadText(log));
  CHECK(ArmedOnHosts(*lab) == 0);
  std::this_thread::sleep_until(start + std::chrono::milliseconds(4500));
  CHECK(lab->LinkUp(b1));
  CHECK(lab->PowerLimit(0, 2) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 0);
  // The entries were written (with their reverts and the faults' planned end) and closed unapplied.
  auto ledger = Ledger::Open(db + ".ledger");
  REQUIRE(ledger.ok());
  auto entries = ledger->Entries(1);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 2);
  for (const LedgerEntry& e : *entries) {
    CHECK(e.state == "closed");
    CHECK_MESSAGE(e.note.find("never applied: disarmed") == 0, e.note);
    CHECK(e.revert.find(e.action == "link_down" ? "' up" : "-pl '1200'") != std::string::npos);
    CHECK(e.deadline_unix > UnixSecondsNow() + 500);  // 3.5 s + 10 min from the start
  }
  CHECK(OnlyRun(db).status == "interrupted");
  int disarmed = 0, injected = 0;
  for (const auto& e : OnlyRunEvents(db)) {
    disarmed += e.type == "action" && e.detail.find("-> exit 125") != std::string::npos;
    injected += e.type == "fault_injected";
  }
  CHECK(disarmed == 2);
  CHECK(injected == 0);
}

TEST_CASE("real: the host-side expiry ends a fault when the runner is dead") {
  auto lab = StartLab();
  const std::string b0 = lab->Iface('b', 0);
  const std::string inv = lab->WriteInventory("lab.yaml", "1s");
  const std::string plan = lab->WritePlan("short", inv, "  - {at: 0s, kind: link_down, target: r01.tray02.nic0, for: 2s}\n");
  const std::string db = lab->dir() + "/e.db", log = lab->dir() + "/e.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  // Kill it as soon as the expiry is armed (the runner's own revert would come at 2 s).
  REQUIRE_MESSAGE(WaitFor([&] { return OpenEntries(db + ".ledger", true) == 1; }, 10), ReadText(log));
  ::kill(pid, SIGKILL);
  WaitExit(pid, 10);
  CHECK_FALSE(lab->LinkUp(b0));
  // No recover: the timer on the host brings the link back at 2 s + 1 s grace.
  CHECK(WaitFor([&] { return lab->LinkUp(b0); }, 10));
  // Replaying the ledger afterwards is harmless.
  std::string out;
  CHECK_MESSAGE(Recover(*lab, db, &out) == 0, out);
  CHECK_MESSAGE(out.find("already reverted on the host: its host-side expiry fired") != std::string::npos, out);
  CHECK(lab->LinkUp(b0));
}

TEST_CASE("real: safety.abort and a continuous gate stop a real run, revert everything and mark it aborted") {
  auto lab = StartLab();
  const std::string b1 = lab->Iface('b', 1);
  const std::string inv = lab->WriteInventory("lab.yaml");
  struct Case {
    const char* name;
    std::string extra, reason;
  };
  for (const Case& c : {Case{"at-once", "safety: {abort: {faults_at_once: 1}}\n", "2 faults applied at once"},
                        Case{"gate", "expect:\n  - {gate: \"ttd.max < 2s\", continuous: true}\n",
                             "continuous gate ttd.max < 2s"}}) {
    CAPTURE(c.name);
    const std::string plan = lab->WritePlan(c.name, inv,
                                            "  - {at: 0s, kind: link_down, target: r01.tray02.nic1, for: 60s}\n"
                                            "  - {at: 1s, kind: gpu_throttle, target: r01.tray01.gpu2, for: 60s, "
                                            "params: {power_cap: 500W}}\n" + c.extra);
    const std::string db = lab->dir() + "/" + c.name + ".db", log = lab->dir() + "/" + c.name + ".log";
    const auto start = std::chrono::steady_clock::now();
    const int code = WaitExit(SpawnRackchaos({"run", plan, "--db", db}, log), 60);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK_MESSAGE(code == 1, ReadText(log));
    CHECK(seconds < 30);  // long before the faults' 60 s
    reports::RunRow run = OnlyRun(db);
    CHECK(run.status == "aborted");
    CHECK_MESSAGE(run.failed_reason.find(c.reason) != std::string::npos, run.failed_reason);
    CHECK(lab->LinkUp(b1));  // reverted on the hosts
    CHECK(lab->PowerLimit(0, 2) == "1200.00");
    CHECK(OpenEntries(db + ".ledger") == 0);
  }
}

TEST_CASE("real: SIGINT reverts everything, marks the run interrupted and exits 4") {
  auto lab = StartLab();
  const std::string a1 = lab->Iface('a', 1);
  const std::string inv = lab->WriteInventory("lab.yaml");
  const std::string plan = lab->WritePlan("stop", inv,
                                          "  - {at: 0s, kind: link_down, target: r01.tray01.nic1, for: 10m}\n"
                                          "  - {at: 0s, kind: gpu_throttle, target: r01.tray02.gpu3, "
                                          "params: {power_cap: 700W}}\n"
                                          "duration: 20m\n");
  const std::string db = lab->dir() + "/i.db", log = lab->dir() + "/i.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return !lab->LinkUp(a1) && lab->PowerLimit(1, 3) == "700.00" &&
                                       OpenEntries(db + ".ledger") == 2; }, 15),
                  ReadText(log));
  ::kill(pid, SIGINT);
  CHECK_MESSAGE(WaitExit(pid, 30) == 4, ReadText(log));
  CHECK(lab->LinkUp(a1));
  CHECK(lab->PowerLimit(1, 3) == "1200.00");
  CHECK(OpenEntries(db + ".ledger") == 0);
  CHECK(OnlyRun(db).status == "interrupted");
}

TEST_CASE("real: unknown and changed host keys are refused before any fault") {
  auto lab = StartLab();
  const std::string a0 = lab->Iface('a', 0);
  const std::string empty = lab->dir() + "/empty_known_hosts";
  { std::ofstream touch(empty); }
  const std::string inv = lab->WriteInventory("strict.yaml", "30s", empty);
  const std::string plan = lab->WritePlan("strict", inv, "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 1s}\n");
  const std::string db = lab->dir() + "/s.db", log = lab->dir() + "/s.log";
  CHECK(WaitExit(SpawnRackchaos({"run", plan, "--db", db}, log), 30) == 3);
  std::string out = ReadText(log);
  CHECK_MESSAGE(out.find("host00") != std::string::npos, out);
  CHECK_MESSAGE(out.find(lab->sshd().host_fingerprint()) != std::string::npos, out);
  CHECK_MESSAGE(out.find("--accept-new-host-keys") != std::string::npos, out);
  CHECK(out.find("nothing was applied") != std::string::npos);
  CHECK(lab->LinkUp(a0));
  CHECK(OnlyRun(db).status == "error");

  // A changed key is refused even with --accept-new-host-keys.
  auto other = lab->sshd().NewKey("other");
  REQUIRE(other.ok());
  const std::string wrong = lab->dir() + "/wrong_known_hosts";
  REQUIRE(lab->sshd().WriteKnownHosts(wrong, *other).ok());
  const std::string plan2 = lab->WritePlan("changed", lab->WriteInventory("changed.yaml", "30s", wrong),
                                           "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 1s}\n");
  CHECK(WaitExit(SpawnRackchaos({"run", plan2, "--db", db, "--accept-new-host-keys"}, log), 30) == 3);
  CHECK(lab->LinkUp(a0));

  // First contact with --accept-new-host-keys records the key and runs.
  CHECK_MESSAGE(WaitExit(SpawnRackchaos({"run", plan, "--db", db, "--accept-new-host-keys"}, log), 30) == 0,
                ReadText(log));
  CHECK(ReadText(empty).find(lab->sshd().host_public_key()) != std::string::npos);
  CHECK(lab->LinkUp(a0));
}

}  // namespace
}  // namespace rackchaos::runner
