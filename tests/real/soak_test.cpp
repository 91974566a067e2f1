// The crash-and-recover soak (issue 10; CTest label `soak`, not in the default test command):
// N times (RACKCHAOS_SOAK_ITERATIONS, default 50) start a real-mode run on the loopback lab
// (tests/real/lab.h), `kill -9` the runner at a random moment (seed RACKCHAOS_SOAK_SEED, printed), then run
// `rackchaos recover`. After each iteration every fault must be gone on the hosts themselves (link UP flags
// in the lab's namespace, the fake GPU power limits) and the report database must open, pass SQLite's
// integrity check and hold no run still marked running.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "core/rng.h"
#include "reports/store.h"
#include "tests/real/lab.h"

namespace rackchaos::runner {
namespace {

using testing::Lab;
using testing::ReadText;
using testing::SpawnRackchaos;
using testing::WaitExit;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Faults that overlap, start and end at different moments, so a kill lands before, during and after
// applies, verifies, reverts and the final revert.
const char* kFaults =
    "  - {at: 0s, kind: link_down, target: r01.tray02.nic1, for: 2s}\n"
    "  - {at: 300ms, kind: gpu_throttle, target: r01.tray01.gpu2, for: 3s, params: {power_cap: 500W}}\n"
    "  - {at: 1s, kind: link_down, target: r01.tray01.nic0, for: 1s}\n"
    "  - {at: 1500ms, kind: gpu_throttle, target: r01.tray02.gpu0, for: 2s, params: {power_cap: 700W}}\n";

// What is still applied on the hosts: one line per leftover, empty when the site is clean.
std::string Leftovers(const Lab& lab) {
  std::string out;
  for (char tray : {'a', 'b'})
    for (int n : {0, 1})
      if (!lab.LinkUp(lab.Iface(tray, n))) out += lab.Iface(tray, n) + " is down\n";
  for (int host : {0, 1})
    for (int gpu = 0; gpu < 4; ++gpu)
      if (lab.PowerLimit(host, gpu) != "1200.00")
        out += "host" + std::to_string(host) + " gpu" + std::to_string(gpu) + " at " + lab.PowerLimit(host, gpu) + "\n";
  return out;
}

// Where a process that does not finish is stuck: every thread's stack, from gdb.
std::string Stacks(pid_t pid) {
  const std::string out = "/tmp/rackchaos-soak-stacks-" + std::to_string(pid) + ".txt";
  const std::string cmd = "gdb -p " + std::to_string(pid) + " -batch -ex 'thread apply all bt' >" + out + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return "\n(gdb could not attach)";
  std::string text = ReadText(out);
  std::remove(out.c_str());
  return "\n" + text;
}

// Empty when the database opens (read-write, as `rackchaos report` does: a WAL left by a killed writer is
// recovered on open), passes the integrity check and has no run left 'running'.
std::string DatabaseProblem(const std::string& path) {
  sqlite3* db = nullptr;
  std::string problem;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    problem = std::string("open: ") + sqlite3_errmsg(db);
  } else {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
      problem = std::string("integrity_check: ") + sqlite3_errmsg(db);
    else if (std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) != "ok")
      problem = std::string("integrity_check: ") + reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  if (!problem.empty()) return problem;
  auto store = reports::ReportStore::Open(path);
  if (!store.ok()) return store.status().ToString();
  auto runs = store->ListRuns();
  if (!runs.ok()) return runs.status().ToString();
  for (const reports::RunRow& r : *runs)
    if (r.status == "running") return "run " + std::to_string(r.id) + " is still marked running";
  return "";
}

TEST_CASE("soak: kill -9 at a random moment, recover, nothing left applied") {
  const uint64_t iterations = EnvOr("RACKCHAOS_SOAK_ITERATIONS", 50);
  const uint64_t seed = EnvOr("RACKCHAOS_SOAK_SEED", static_cast<uint64_t>(::time(nullptr)));
  std::cout << "soak: " << iterations << " iterations, RACKCHAOS_SOAK_SEED=" << seed << "\n";
  auto started = Lab::Start();
  REQUIRE_MESSAGE(started.ok(), started.status().ToString());
  Lab& lab = **started;
  const std::string inv = lab.WriteInventory("lab.yaml");
  const std::string plan = lab.WritePlan("soak", inv, kFaults);
  Rng rng(seed);

  int left_applied = 0, bad_databases = 0, recover_failures = 0, killed = 0;
  for (uint64_t i = 0; i < iterations; ++i) {
    const std::string db = lab.dir() + "/soak" + std::to_string(i) + ".db";
    const std::string log = lab.dir() + "/soak" + std::to_string(i) + ".log";
    // 0 to 4.5 s: the runs last about 3.5 s plus their start-up, so some kills land after the end.
    const auto kill_after = std::chrono::milliseconds(static_cast<int64_t>(rng.Uniform() * 4500));
    const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(kill_after);
    ::kill(pid, SIGKILL);
    killed += WaitExit(pid, 10) == 128 + SIGKILL ? 1 : 0;  // not counted: runs that had already ended

    const std::string recover_log = lab.dir() + "/recover" + std::to_string(i) + ".log";
    const pid_t recover = SpawnRackchaos({"recover", "--db", db}, recover_log);
    const int code = WaitExit(recover, 60);
    if (code != 0) {
      ++recover_failures;
      MESSAGE("iteration " << i << ": recover exited " << code << " (-1: still running after 60 s): "
                           << ReadText(recover_log) << (code == -1 ? Stacks(recover) : ""));
      if (code == -1) {
        ::kill(recover, SIGKILL);
        WaitExit(recover, 10);
      }
    }
    const std::string leftovers = Leftovers(lab);
    if (!leftovers.empty()) {
      ++left_applied;
      MESSAGE("iteration " << i << " (kill after " << kill_after.count() << " ms) left applied:\n"
                           << leftovers << ReadText(log) << ReadText(recover_log));
    }
    // A kill before the runner created the database leaves none: nothing to open.
    if (::access(db.c_str(), F_OK) == 0) {
      const std::string problem = DatabaseProblem(db);
      if (!problem.empty()) {
        ++bad_databases;
        MESSAGE("iteration " << i << ": database " << db << ": " << problem);
      }
    }
  }
  std::cout << "soak: " << iterations << " iterations, " << killed << " runners killed mid-run, " << left_applied
            << " left faults applied, " << bad_databases << " databases failed to open, " << recover_failures
            << " recover failures\n";
  CHECK(left_applied == 0);
  CHECK(bad_databases == 0);
  CHECK(recover_failures == 0);
}

}  // namespace
}  // namespace rackchaos::runner
