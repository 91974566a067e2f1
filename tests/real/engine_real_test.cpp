// One engine on real hosts: the rules a plan carries (its safety limits, how a run stops, how it is
// qualified) hold on the loopback lab (tests/real/lab.h) as they do on the simulator, and a healer verb
// added as one row of the real-mode action table (gpu_reset) runs on the hosts.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cluster/catalogue.h"
#include "reports/store.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/wall_clock.h"
#include "tests/real/gb200.h"
#include "tests/real/lab.h"
#include "tests/real/lab_checks.h"
#include "tests/real/lab_site.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;
using testing::Lab;
using testing::ReadText;
using testing::SpawnRackchaos;
using testing::WaitExit;
using testing::WaitFor;

using testing::StartLab;
using testing::OnlyRun;
// Sets an environment variable for the runs this test spawns, and unsets it however the test ends.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST_CASE("engine on real hosts: safety.max_faults_at_once skips the faults past it, on the record") {
  auto lab = StartLab();
  const std::string a0 = lab->Iface('a', 0), a1 = lab->Iface('a', 1), b0 = lab->Iface('b', 0);
  // Two faults share an `at` (one group), a third comes while the first still holds; the limit is one.
  const std::string plan = lab->WritePlan("limit", lab->WriteInventory("lab.yaml"),
                                          "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 4s}\n"
                                          "  - {at: 0s, kind: link_down, target: r01.tray01.nic1, for: 4s}\n"
                                          "  - {at: 2s, kind: link_down, target: r01.tray02.nic0, for: 1s}\n"
                                          "safety: {max_faults_at_once: 1}\n");
  const std::string db = lab->dir() + "/m.db", log = lab->dir() + "/m.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  CHECK_MESSAGE(WaitFor([&] { return !lab->LinkUp(a0); }, 10), ReadText(log));
  CHECK(lab->LinkUp(a1));
  CHECK_MESSAGE(WaitExit(pid, 30) == 0, ReadText(log));
  CHECK(lab->LinkUp(a0));
  CHECK(lab->LinkUp(a1));
  CHECK(lab->LinkUp(b0));
  auto store = reports::ReportStore::Open(db);
  REQUIRE(store.ok());
  const reports::RunRow run = OnlyRun(db);
  CHECK(run.status == "passed");
  auto faults = store->ReadFaults(run.id);
  REQUIRE(faults.ok());
  REQUIRE(faults->size() == 1);
  CHECK(faults->at(0).fault == 1);
  auto skips = store->ReadActions(run.id, "safety");
  REQUIRE(skips.ok());
  REQUIRE(skips->size() == 2);
  CHECK_MESSAGE(skips->at(0).detail.find("fault #2 link_down on r01.tray01.nic1 skipped: 1 faults active, "
                                         "safety.max_faults_at_once 1") == 0,
                skips->at(0).detail);
  CHECK_MESSAGE(skips->at(1).detail.find("fault #3 link_down on r01.tray02.nic0 skipped") == 0, skips->at(1).detail);
}

TEST_CASE("engine on real hosts: a stop file halts the run, reverts its faults and is named as the reason") {
  auto lab = StartLab();
  const std::string a0 = lab->Iface('a', 0);
  const std::string stop = lab->dir() + "/stop";
  ScopedEnv env("RACKCHAOS_STOP_FILE", stop);
  const std::string plan = lab->WritePlan("stopped", lab->WriteInventory("lab.yaml"),
                                          "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 10m}\n");
  const std::string db = lab->dir() + "/s.db", log = lab->dir() + "/s.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return !lab->LinkUp(a0); }, 10), ReadText(log));
  { std::ofstream touch(stop); }
  CHECK_MESSAGE(WaitExit(pid, 30) == 4, ReadText(log));
  CHECK(lab->LinkUp(a0));
  const reports::RunRow run = OnlyRun(db);
  CHECK(run.status == "interrupted");
  CHECK_MESSAGE(run.failed_reason == "stop file " + stop, run.failed_reason);
}

// A suite of one real plan, its inventory's known_hosts still empty (first contact).
std::string RealSuite(Lab& lab, const std::string& known_hosts) {
  const std::string inventory = lab.WriteInventory("suite-site.yaml", "30s", known_hosts);
  const fs::path stage = fs::path(lab.dir()) / "suite" / "1-tray";
  fs::create_directories(stage);
  std::ofstream(stage / "link.yaml") << "name: link\ncluster: {model: gb200-nvl72, racks: 1, inventory: " << inventory
                                     << "}\nfaults:\n"
                                     << "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 1s}\n";
  return (fs::path(lab.dir()) / "suite").string();
}

TEST_CASE("engine on real hosts: qualify takes the ledger path and first contact with new host keys") {
  auto lab = StartLab();
  const std::string empty = lab->dir() + "/empty_known_hosts";
  { std::ofstream touch(empty); }
  const std::string suite = RealSuite(*lab, empty);
  const std::string db = lab->dir() + "/q.db", ledger = lab->dir() + "/custom.ledger", log = lab->dir() + "/q.log";
  // Without --accept-new-host-keys the unknown keys are refused before any fault: the plan is an error.
  CHECK_MESSAGE(
      WaitExit(SpawnRackchaos({"qualify", suite, "--rack", "loopback-lab-r01", "--db", db, "--ledger", ledger}, log), 60) == 3,
      ReadText(log));
  CHECK(ReadText(empty).empty());
  // With it, the keys are recorded, the plan runs and passes, and its ledger is the one named.
  CHECK_MESSAGE(WaitExit(SpawnRackchaos({"qualify", suite, "--rack", "loopback-lab-r01", "--db", db, "--ledger", ledger,
                                         "--accept-new-host-keys"},
                                        log),
                         60) == 0,
                ReadText(log));
  CHECK(ReadText(empty).find(lab->sshd().host_public_key()) != std::string::npos);
  CHECK(fs::exists(ledger));
  CHECK_FALSE(fs::exists(db + ".ledger"));
  CHECK(lab->LinkUp(lab->Iface('a', 0)));
}

using testing::Gb200;

TEST_CASE("engine on real hosts: gpu_reset runs `nvidia-smi -r -i {gpu}` on the GPU's host") {
  auto lab = StartLab();
  const std::string path = lab->WriteInventory("reset.yaml");
  std::ofstream(path, std::ios::app) << "healer:\n  gpu_reset: {apply: 'nvidia-smi -r -i {gpu}'}\n";
  testing::LabSite site(path);
  cluster::Topology topo = Gb200();
  SshBackend ssh(site.inv, topo, site.pool, site.clock, site.events);
  CHECK(ssh.Supports(cluster::Verb::kGpuReset));
  const Status reset = ssh.ResetGpu(*topo.Find("r01.tray02.gpu3"));
  CHECK_MESSAGE(reset.ok(), reset.ToString());
  int ran = 0;
  for (const Event& e : site.events.events())
    if (auto* a = std::get_if<ActionTaken>(&e.body); a && a->action == "ssh.gpu_reset") {
      ++ran;
      CHECK_MESSAGE(a->ok, a->detail);
      CHECK_MESSAGE(a->detail.find("host01: ") == 0, a->detail);
      CHECK_MESSAGE(a->detail.find("nvidia-smi -r -i ") != std::string::npos, a->detail);
      CHECK_MESSAGE(a->detail.find("3") != std::string::npos, a->detail);
    }
  CHECK(ran == 1);
}

}  // namespace
}  // namespace rackchaos::runner
