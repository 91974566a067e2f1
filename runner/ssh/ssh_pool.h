// SshPool: SSH sessions to many hosts, opened, verified and used concurrently from one Asio loop.
//
// Each host gets one libssh session in non-blocking mode. The pool waits on the sessions' sockets
// with Asio (no thread per host), so a command lands on hundreds of hosts at once and one slow or
// dead host never holds up the others. Sessions stay open and are reused; every command runs on a
// fresh channel of its host's session. A session that fails or drops is reported through the
// operation that hit it and reopened on the host's next use.
//
// Security: host keys are checked strictly against known_hosts (see host_key.h); authentication is
// by public key (identity file or ssh-agent); there is no password support.
//
// Threading: not thread-safe. Call everything on the thread that runs `io`; callbacks run there
// too, from posted handlers (never inside the call that started the operation). The blocking
// helpers (ConnectAll, RunAll) run `io` themselves until their operations end; do not call them
// from inside a handler of the same io_context.
//
// Ownership and lifetime: `io` must outlive the pool. Destroying the pool closes all sessions; the
// callbacks of operations still in flight are then never called.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "runner/ssh/admission.h"
#include "runner/ssh/asio.h"
#include "runner/ssh/command_result.h"
#include "runner/ssh/host_spec.h"
#include "runner/ssh/ssh_options.h"

namespace rackchaos::ssh {

class RemoteCommand;
class Session;

class SshPool {
 public:
  using ConnectCallback = std::function<void(const std::string& host, const Status& status)>;
  using CommandCallback = std::function<void(CommandResult result)>;

  SshPool(boost::asio::io_context& io, PoolOptions options = {});
  ~SshPool();
  SshPool(const SshPool&) = delete;
  SshPool& operator=(const SshPool&) = delete;

  // Registers hosts without connecting. Names must be unique and non-empty; each host needs an
  // address, a port in 1..65535 and an identity file unless use_agent. Re-adding an identical spec
  // is a no-op; a different spec under a known name is InvalidArgument. Nothing is added on error.
  Status AddHosts(const std::vector<HostSpec>& hosts);

  // Opens, host-key-checks and authenticates the named hosts' sessions concurrently (those already
  // open are reused). `done` runs once per name: OK, or the reason (kNotFound for an unknown name).
  void Connect(const std::vector<std::string>& names, ConnectCallback done);

  // Runs `command` on each named host, each on a new channel of its session (connecting first when
  // needed). `done` runs once per name with that host's CommandResult.
  void Run(const std::vector<std::string>& names, const std::string& command, CommandCallback done);

  // Arming: a command that must land on many hosts at the same moment (a fault) is started ahead of
  // time on every host, where it waits in bash (see RemoteCommand; hosts need bash 5 or later).
  // FireAt then sends each host the instant at which to run it, so the spread between hosts is
  // that of their clocks and of waking one process each, not of a network pass or of opening a
  // channel and starting a process per host. An armed command holds one of the `max_concurrent`
  // slots until it ends.
  class Armed {
   public:
    // Per name, in the order given to ArmAll/ArmEach: OK once armed, else why not.
    const std::vector<Status>& status() const { return armed_; }
    // Per name, once ended (after FireAll, FireAt or Disarm).
    const std::vector<CommandResult>& results() const { return results_; }

   private:
    friend class SshPool;
    std::vector<std::string> names_;
    std::vector<std::weak_ptr<Session>> sessions_;
    std::vector<std::weak_ptr<RemoteCommand>> commands_;  // parallel to names_; expired = ended
    std::vector<Status> armed_;
    std::vector<CommandResult> results_;
    size_t waiting_armed_ = 0, waiting_done_ = 0;
  };
  // Blocking: starts `command` gated on each named host and waits until every one is armed or has
  // failed. OK when all are armed; otherwise the first failure's code listing every failed host (the
  // armed ones stay armed: Fire or Disarm them). InvalidArgument when there are more names than
  // slots not held by other armed commands (commands in flight are waited for).
  Status ArmAll(const std::vector<std::string>& names, const std::string& command, std::shared_ptr<Armed>& out);
  // ArmAll with one command per name (`commands` parallel to `names`; a name may repeat).
  Status ArmEach(const std::vector<std::string>& names, const std::vector<std::string>& commands,
                 std::shared_ptr<Armed>& out);
  // Blocking: releases every armed command of `armed` now, then waits for all of them to end.
  // Results are in the order of the names armed; a host that never armed keeps its failure.
  std::vector<CommandResult> FireAll(Armed& armed);
  // Blocking: like FireAll, but every host runs its command when its own clock reads `wall_us`
  // (microseconds since the Unix epoch); a host whose clock is past it runs it at once. The hosts'
  // clocks are assumed synchronised (NTP/PTP): their error adds to the spread. With `latest_us`, a host
  // whose clock is past it when the command would start does not run it (exit 125, as a disarm): a
  // go line held back by a partition lands after the caller gave up on it otherwise.
  std::vector<CommandResult> FireAt(Armed& armed, int64_t wall_us, int64_t latest_us = 0);
  // Blocking: ends the armed commands without running them (the gate exits 125) and waits for them.
  void Disarm(Armed& armed);

  // Blocking: AddHosts + Connect for `hosts`. OK when every host connected; otherwise the first
  // failure's code and a message listing every failed host and why.
  Status ConnectAll(const std::vector<HostSpec>& hosts);
  // Blocking: Run and wait. Results are in the order of `names`.
  std::vector<CommandResult> RunAll(const std::vector<std::string>& names,
                                    const std::string& command);

  // The names of all registered hosts, sorted.
  std::vector<std::string> HostNames() const;
  // True when the host's session is open and authenticated (a drop may not be noticed yet).
  bool IsConnected(const std::string& name) const;
  // Closes one host's session now (it reopens on next use); its in-flight callbacks never run.
  void Disconnect(const std::string& name);

 private:
  // Runs `io_` until `done()` is true (or the loop runs out of work).
  void RunUntil(const std::function<bool()>& done);
  std::shared_ptr<Session> Find(const std::string& name) const;
  // Writes `line` to (or, without one, cancels) every armed command of `a`, then waits until all
  // have ended.
  void ReleaseArmed(Armed& a, const std::optional<std::string>& line);

  boost::asio::io_context& io_;
  PoolOptions options_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  Admission admission_;
  int armed_in_flight_ = 0;  // armed commands not ended yet
  // Cleared on destruction; callbacks posted earlier check it before running.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rackchaos::ssh
