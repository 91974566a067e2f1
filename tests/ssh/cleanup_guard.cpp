#include "tests/ssh/cleanup_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "runner/ssh/command_template.h"
#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::ssh::testing {
namespace {

// The watcher: a subshell in the background, so the sh that posix_spawn starts exits at once and the
// watcher is reparented away from the test's process tree. It ignores the terminal's and CI's stop
// signals, blocks reading the pipe (fd 3), and runs the script from its environment unless the owner
// wrote "done". The script is in the environment, not the command line, so that a `pkill -f <dir>` in
// it does not match the watcher itself.
// fd 3 is made in the outer shell: an asynchronous list's own stdin is /dev/null before its redirections.
constexpr const char* kWatcher =
    "exec 3<&0; ( trap '' INT TERM HUP; read -r word <&3; [ \"$word\" = done ] || eval \"$RC_CLEANUP\" ) "
    "</dev/null >/dev/null 2>&1 &";

}  // namespace

Result<CleanupGuard> CleanupGuard::Arm(const std::string& script) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IoError("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);  // out of the terminal's process group (Ctrl-C)
  const std::string env_script = "RC_CLEANUP=" + script;
  const char* env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", env_script.c_str(), nullptr};
  const char* argv[] = {"/bin/sh", "-c", kWatcher, nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, &attr, const_cast<char**>(argv), const_cast<char**>(env));
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    return Status::Unavailable("cannot start the cleanup watcher (/bin/sh)");
  }
  ::waitpid(pid, nullptr, 0);  // the outer sh exits once the watcher runs in the background
  return CleanupGuard(fds[1], script);
}

CleanupGuard& CleanupGuard::operator=(CleanupGuard&& other) noexcept {
  if (this != &other) {
    Disarm();
    fd_ = other.fd_;
    script_ = std::move(other.script_);
    other.fd_ = -1;
  }
  return *this;
}

void CleanupGuard::Disarm() {
  if (fd_ < 0) return;
  const char done[] = "done\n";
  [[maybe_unused]] const ssize_t n = ::write(fd_, done, sizeof done - 1);
  ::close(fd_);
  fd_ = -1;
}

void CleanupGuard::RunNow() {
  if (fd_ < 0) return;
  RunScript(script_);  // still armed meanwhile: if the owner dies now, the watcher runs it again (idempotent)
  Disarm();
}

std::string KillMentioning(const std::string& text) {
  if (text.empty()) return "true";
  // "[/]tmp/x" matches "/tmp/x" but not the pattern's own text.
  return "pkill -KILL -f -- " + ShellQuote("[" + text.substr(0, 1) + "]" + text.substr(1));
}

void RunScript(const std::string& script) {
  // On the shell's stdin, not its command line: a `pkill -f <path>` in the script must not match the
  // shell that runs it (its command line would contain the path in the script's other commands).
  FILE* sh = ::popen("/bin/sh -s", "w");
  if (!sh) return;
  std::fputs(script.c_str(), sh);
  ::pclose(sh);
}

bool PidAlive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

int RemoveStale(const std::string& dir, const std::string& prefix, bool exact,
                const std::function<std::string(const std::string& path)>& cleanup) {
  std::error_code ec;
  std::vector<std::string> stale;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t digits = name.find_first_not_of("0123456789", prefix.size());
    if (digits == prefix.size() || (digits != std::string::npos && digits - prefix.size() > 9)) continue;
    if (exact ? digits != std::string::npos : (digits == std::string::npos || name[digits] != '-')) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name.substr(prefix.size(), digits - prefix.size())));
    if (!PidAlive(pid)) stale.push_back(entry.path().string());
  }
  for (const std::string& path : stale) RunScript(cleanup(path));
  return static_cast<int>(stale.size());
}

}  // namespace rackchaos::ssh::testing
