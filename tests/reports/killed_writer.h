// A report file left by a writer killed (SIGKILL) while it stored a brand-new file's first topology: the
// file has the rollback journal of that transaction (a hot journal), which only a read-write open can
// roll back. Shared by the store's own tests and the commands that read reports.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "reports/store.h"
#include "tests/reports/test_util.h"

namespace rackchaos::reports::testing {

// `n` components in racks of 500 (a rack and 499 parts, each the child of the one before).
inline std::vector<ComponentRow> ChainedRows(uint32_t n) {
  std::vector<ComponentRow> rows;
  rows.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string name = "r" + std::to_string(i / 500) + ".p" + std::to_string(i % 500);
    rows.push_back({i, name, "gpu", i % 500 ? i - 1 : kNoComponent, "SIM-x-" + name});
  }
  return rows;
}

// Forks a writer that creates the report at `path`, calls `before` on it (to store what the file should
// hold), begins a run and stores 400,000 components for it, the file's first topology; kills it
// `delay_ms` after that transaction's journal appears (400,000 rows take longer than 150 ms). Checks that
// the writer was killed inside the transaction; returns whether its journal is left.
inline bool KillFirstTopologyWriterOnce(const std::string& path, int delay_ms,
                                        const std::function<bool(ReportStore&)>& before) {
  static const std::vector<ComponentRow> rows = ChainedRows(400000);
  const std::string journal = path + "-journal";
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    auto store = ReportStore::Open(path);
    if (!store.ok() || (before && !before(*store))) _exit(1);
    auto run = store->BeginRun(SampleRunInfo());
    if (!run.ok() || write(ready[1], "c", 1) != 1) _exit(1);
    (void)store->AddComponents(*run, rows);
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  const bool started = read(ready[0], &byte, 1) == 1;
  close(ready[0]);
  // The journal appears with the first page the components' transaction writes.
  bool seen = false;
  for (int i = 0; i < 5000 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::error_code ec;
    seen = std::filesystem::exists(journal, ec) && std::filesystem::file_size(path, ec) > 0 &&
           std::filesystem::file_size(journal, ec) > 0;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(started);
  CHECK(seen);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  return std::filesystem::exists(journal);
}

// KillFirstTopologyWriterOnce until a kill leaves the journal, at most 5 times, each on a new file. With
// delay 0 on a loaded machine (the ASan stage, 1 run in about 15 with three busy loops beside it) the
// journal seen can be gone when the SIGKILL lands; such a miss says nothing about the store, and the
// callers' checks need a killed transaction's file.
inline bool KillFirstTopologyWriter(const std::string& path, int delay_ms,
                                    const std::function<bool(ReportStore&)>& before = {}) {
  for (int attempt = 1; attempt <= 5; ++attempt) {
    if (KillFirstTopologyWriterOnce(path, delay_ms, before)) return true;
    MESSAGE("attempt " << attempt << ": the writer's journal was gone when it was killed; again on a new file");
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
  return false;
}

}  // namespace rackchaos::reports::testing
