// The loopback lab: a real-mode test rig on this machine (needs root).
//
// Start() starts OpenSSH servers on loopback through the sshd fixture (tests/ssh/sshd_fixture.h) and
// builds what sites/loopback-lab.yaml describes: a network namespace "rclab<tag>" with veth links for
// two trays (rc<tag>a0, rc<tag>a1 on host00; rc<tag>b0, rc<tag>b1 on host01), the setuid rclab-ip
// wrapper that lets the unprivileged SSH user set exactly those links up and down, a fake nvidia-smi
// that keeps each host's power limits in files (1200 W until set), and per-host state directories.
// The destructor removes the namespace and the directory and kills the processes the lab's hosts left
// (host-side expiry timers), by pid, also when a test fails. The directory is /tmp/rclab-<pid>-XXXXXX and
// <tag> is the test's pid: a CleanupGuard removes them when the test process is killed, and Start()
// first removes labs whose test process is gone (tests/ssh/cleanup_guard.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::runner::testing {

class Lab {
 public:
  static Result<std::unique_ptr<Lab>> Start();
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  const std::string& dir() const { return dir_; }
  ssh::testing::SshdFixture& sshd() { return *sshd_; }
  // "rc<tag>a0": NIC n of tray 'a' (r01.tray01, host00) or 'b' (r01.tray02, host01).
  std::string Iface(char tray, int n) const;

  // Writes sites/loopback-lab.yaml with the blanks filled in to dir()/<name>; returns its path.
  // `known_hosts` empty = the fixture's (correct) file. `edit` replaces text in the result, for tests
  // that need a broken or hostile variant.
  std::string WriteInventory(const std::string& name, const std::string& grace = "30s",
                             const std::string& known_hosts = "",
                             const std::vector<std::pair<std::string, std::string>>& edits = {}) const;
  // Writes a plan using `inventory` with the given `faults:` YAML block; returns its path.
  std::string WritePlan(const std::string& name, const std::string& inventory, const std::string& faults) const;

  // The link's administrative state (its UP flag), read as root.
  bool LinkUp(const std::string& iface) const;
  // What the fake nvidia-smi stores as GPU `gpu`'s limit on host `host` ("1200.00" when never set).
  std::string PowerLimit(int host, int gpu) const;

 private:
  Lab() = default;
  Status Build();

  std::unique_ptr<ssh::testing::SshdFixture> sshd_;
  std::string dir_, tag_, netns_;
  ssh::testing::CleanupGuard guard_;  // disarmed by the destructor once it has cleaned up
};

// The shell commands that remove a lab's directory `dir` and namespace `netns` and kill the processes
// that mention the directory. Either may be empty.
std::string LabCleanupScript(const std::string& dir, const std::string& netns);

// Labs from before the pid naming (<dir>/rclab-XXXXXX, mkdtemp's six characters) do not name their test
// process, so the stale-lab cleanup cannot ask whether it is alive. A lab writes its state files at each
// action and no lab test runs for an hour, so one in which nothing (the directory or anything in it)
// changed for `idle` is taken as left over and removed with LabCleanupScript; a newer one may belong to
// an older checkout's test running now and stays. Returns how many were removed.
int RemoveOldFormatLabs(const std::string& dir, std::chrono::seconds idle);

// Runs the built rackchaos binary with `args`; stdout+stderr go to `log`. Returns its pid.
pid_t SpawnRackchaos(const std::vector<std::string>& args, const std::string& log);
// Waits up to `seconds` for `pid`; returns its exit status, 128+signal if killed, -1 on timeout.
int WaitExit(pid_t pid, double seconds);
// Polls `cond` every 50 ms for up to `seconds`.
bool WaitFor(const std::function<bool()>& cond, double seconds);
std::string ReadText(const std::string& path);

}  // namespace rackchaos::runner::testing
