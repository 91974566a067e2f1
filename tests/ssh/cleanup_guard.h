// Cleanup for test fixtures that outlives the test process.
//
// A fixture's destructor does not run when the test is killed: a CTest timeout sends SIGKILL to the
// test's whole process tree, and a SIGTERM or SIGINT (Ctrl-C, a CI job being cancelled) ends it without
// unwinding. What the fixture made outside the process (temp dirs, network namespaces, servers that
// outlive their parent) would stay behind. Two mechanisms cover it:
//   - CleanupGuard: Arm(script) starts a watcher outside the test's process tree (so a tree kill does not
//     reach it) that waits for the test process to go away, however it ends, and then runs `script`
//     with /bin/sh. Disarm() (or the destructor) tells the watcher the owner cleaned up itself.
//   - RemoveStale(): what a dead test left when even the watcher could not run (the machine stopped, the
//     watcher was killed by hand) is removed by the next fixture's start. The fixtures name what they
//     make after their pid ("/tmp/rclab-<pid>-XXXXXX", netns "rclab<pid>"); an entry whose pid is gone
//     is stale. Live owners (other checkouts' tests running now) are left alone.
// Not thread-safe; the test process only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>

#include "core/status.h"

namespace rackchaos::ssh::testing {

class CleanupGuard {
 public:
  CleanupGuard() = default;
  // Starts the watcher for `script` (shell commands; must be safe to run twice and when nothing is left).
  static Result<CleanupGuard> Arm(const std::string& script);
  ~CleanupGuard() { Disarm(); }
  CleanupGuard(CleanupGuard&& other) noexcept : fd_(other.fd_), script_(std::move(other.script_)) { other.fd_ = -1; }
  CleanupGuard& operator=(CleanupGuard&& other) noexcept;
  CleanupGuard(const CleanupGuard&) = delete;
  CleanupGuard& operator=(const CleanupGuard&) = delete;

  // The owner has cleaned up: the watcher exits without running the script. Idempotent.
  void Disarm();
  // The owner's own cleanup: runs the script now (RunScript) and then disarms, so a fixture's destructor
  // and the watcher remove the same things. Nothing if not armed.
  void RunNow();

 private:
  CleanupGuard(int fd, std::string script) : fd_(fd), script_(std::move(script)) {}
  int fd_ = -1;  // the write end of the pipe the watcher reads; closing it without "done" runs the script
  std::string script_;
};

// A shell command that SIGKILLs every process whose command line contains `text` (a plain path, no regex
// characters but '.'). Run it through RunScript() or the guard: a shell whose own command line holds
// the path elsewhere (sh -c "...; rm -rf <path>") would match too.
std::string KillMentioning(const std::string& text);

// Runs `script` with /bin/sh (given on its stdin) and waits for it.
void RunScript(const std::string& script);

// True when a process `pid` exists (any owner).
bool PidAlive(pid_t pid);

// For each entry of `dir` named <prefix><pid>-... (or exactly <prefix><pid> when `exact`) whose pid is no
// longer alive, runs cleanup(path) with /bin/sh. Returns how many entries were stale.
int RemoveStale(const std::string& dir, const std::string& prefix, bool exact,
                const std::function<std::string(const std::string& path)>& cleanup);

}  // namespace rackchaos::ssh::testing
