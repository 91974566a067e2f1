// A throw-away OpenSSH server on loopback for integration tests.
//
// Start() makes a temp dir /tmp/rackchaos-sshd-<pid>-XXXXXX with an ed25519 host key, a user key and its
// authorized_keys, creates the test user "rcssh" (shell /bin/sh, no password, locked out of password
// login) if missing, and starts one `sshd -D` per 16 endpoints, each listening on 127.0.0.2..127.0.0.17
// at its own free port. The destructor kills every process it started (listeners, per-connection sshd
// children and their commands) and removes the temp dir, also when a test fails. When the test process
// is killed instead (SIGTERM, SIGINT, a CTest timeout's SIGKILL), a CleanupGuard kills the listeners and
// removes the dir; Start() first removes what fixtures of dead test processes left (cleanup_guard.h).
// Must run as root. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "runner/ssh/asio.h"
#include "runner/ssh/host_spec.h"
#include "tests/ssh/cleanup_guard.h"

namespace rackchaos::ssh::testing {

struct Endpoint {
  std::string address;
  int port = 0;
};

class SshdFixture {
 public:
  static constexpr const char* kUser = "rcssh";
  static constexpr int kAddressesPerSshd = 16;

  // `extra_config` goes first into every sshd_config (sshd takes a keyword's first value, so it
  // overrides the fixture's own settings, e.g. "MaxSessions 2\n").
  static Result<std::unique_ptr<SshdFixture>> Start(int endpoints, const std::string& extra_config = "");
  ~SshdFixture();
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  const std::vector<Endpoint>& endpoints() const { return endpoints_; }
  const std::string& dir() const { return dir_; }
  std::string user_key() const { return dir_ + "/user_ed25519"; }
  // The host key as a known_hosts key field ("ssh-ed25519 AAAA...") and its SHA256 fingerprint.
  const std::string& host_public_key() const { return host_public_key_; }
  const std::string& host_fingerprint() const { return host_fingerprint_; }
  // A known_hosts file in dir() that lists every endpoint with the right key.
  std::string known_hosts() const { return dir_ + "/known_hosts"; }

  // HostSpecs "host00".. for the first `count` endpoints (all when -1), authenticating as kUser
  // with user_key() and checking keys against `known_hosts_file`.
  std::vector<HostSpec> Hosts(const std::string& known_hosts_file, int count = -1) const;
  // Writes `path` listing each endpoint with `key` (a known_hosts key field).
  Status WriteKnownHosts(const std::string& path, const std::string& key) const;
  // Generates another ed25519 key pair dir()/<name>; returns its public key field.
  Result<std::string> NewKey(const std::string& name) const;
  // Kills the per-connection sshd processes and their children; the listeners keep running.
  int KillSessions();
  // Sends `signal` to the per-connection sshd processes and their children (SIGSTOP then SIGCONT:
  // a server that stops answering for a while, as behind a link that is down); returns how many.
  int SignalSessions(int signal);

 private:
  SshdFixture() = default;
  Status Prepare();
  Status StartSshd(int index, int addresses);
  std::vector<pid_t> Descendants() const;

  std::string dir_;
  std::string extra_config_;
  std::string host_public_key_, host_fingerprint_;
  std::vector<Endpoint> endpoints_;
  std::vector<pid_t> sshd_pids_;
  CleanupGuard guard_;  // disarmed by the destructor once it has cleaned up
};

// The shell commands that remove what an sshd fixture with directory `dir` made (listeners, the dir).
std::string SshdCleanupScript(const std::string& dir);

// Runs `command` with /bin/sh; returns its exit status and puts its stdout in `out` (if given).
int RunShell(const std::string& command, std::string* out = nullptr);

// A loopback TCP port that nothing listens on right now.
int FreePort();

// The names of `hosts`, in order.
std::vector<std::string> Names(const std::vector<HostSpec>& hosts);
// Runs `io` until `done()` or `limit_s` seconds pass (a steady timer bounds each wait).
void RunIoUntil(boost::asio::io_context& io, const std::function<bool()>& done, double limit_s);

}  // namespace rackchaos::ssh::testing
