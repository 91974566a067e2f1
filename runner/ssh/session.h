// One host's SSH connection, driven without blocking from the io_context.
//
// Internal to runner/ssh (SshPool is the public face). A Session walks
//   idle -> connecting (TCP + key exchange) -> host key check -> authenticating -> ready
// by calling libssh in non-blocking mode whenever the socket is ready, and runs any number of
// RemoteCommands on the ready session, each on its own channel. It waits on a dup() of libssh's
// socket through a posix::stream_descriptor, so Asio and libssh never fight over closing the fd.
// A session that fails or drops goes back to idle and reconnects on its next use. A session the server
// refuses a channel on (sshd's MaxSessions) is closed once its running commands end and opened
// again; the refused command waits for the new connection (once).
//
// Threading: everything runs on the io_context's thread. Ownership: held by shared_ptr; handlers
// keep it alive and do nothing after Shutdown(). Callbacks are posted, never run inside a call.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "runner/ssh/asio.h"
#include "runner/ssh/host_spec.h"
#include "runner/ssh/libssh_handles.h"
#include "runner/ssh/remote_command.h"
#include "runner/ssh/ssh_options.h"

namespace rackchaos::ssh {

class Session : public std::enable_shared_from_this<Session> {
 public:
  using ConnectDone = std::function<void(Status)>;
  using CommandDone = std::function<void(CommandResult)>;
  using ArmedDone = std::function<void(Status)>;

  Session(boost::asio::io_context& io, HostSpec host, const PoolOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Opens, checks and authenticates the session unless it is ready; posts `done` with the outcome.
  void Connect(ConnectDone done);
  // Runs `command` on a new channel, connecting first if needed; posts `done` with the result.
  void Exec(std::string command, CommandDone done);
  // Like Exec, but the command waits on the host until Fire(): `armed` is posted once, OK when the
  // process runs and waits, or the reason it cannot (then `done` follows with the failure). Returns
  // the handle Fire() takes.
  std::weak_ptr<RemoteCommand> ExecArmed(std::string command, ArmedDone armed, CommandDone done);
  // Releases an armed command with its go `line` (RemoteCommand::Release): libssh writes it to the
  // socket at once. An expired handle (the command already ended) is Aborted. Call Pump() afterwards
  // (after releasing on every session, so that no session's packet processing delays another's).
  Status Fire(const std::weak_ptr<RemoteCommand>& command, const std::string& line);
  // Cancels an armed or released command (RemoteCommand::Cancel); expired handles are ignored.
  void Cancel(const std::weak_ptr<RemoteCommand>& command);
  // Processes what the socket has and re-arms the wait.
  void Pump();
  // Ends every operation of this host with `why` (callbacks posted) and closes the connection;
  // the next Connect or Exec opens a new one.
  void Close(const Status& why) { Fail(why); }
  // Drops everything without calling any callback; the session is unusable afterwards.
  void Shutdown();

  bool ready() const { return state_ == State::kReady; }
  const HostSpec& host() const { return host_; }

 private:
  enum class State { kIdle, kConnecting, kAuthenticating, kReady };
  struct Running {
    std::shared_ptr<RemoteCommand> command;
    CommandDone done;
    ArmedDone armed;  // gated commands, until they are armed or end
  };

  // Connection stages.
  void StartConnect();
  Status OpenSession();
  void StepConnect();
  void StepAuth();
  void BecomeReady();
  Status AuthError(int rc) const;
  // Running stage.
  void Submit(Running running);
  void StartCommand(Running running);
  void StepReady();
  bool StepCommands();
  void OnCommandTimeout(const std::shared_ptr<RemoteCommand>& command);
  // Keeps the channel a command abandoned while it was opening, to close it once confirmed.
  void KeepAbandoned(RemoteCommand& command);
  void CloseAbandoned();
  // A connection the server refused a channel on takes no new command: once its running ones
  // ended, it is closed and a new one opened for the commands that waited (Recycle).
  void MaybeRecycle();
  void Recycle();
  // Plumbing.
  bool Alive() const;
  void ArmWait();
  bool WatchSocket();
  void Fail(const Status& status);
  void TearDown();
  void Complete(Running& running);
  std::string Phase() const;

  boost::asio::io_context& io_;
  HostSpec host_;
  PoolOptions options_;
  State state_ = State::kIdle;
  bool shut_down_ = false;
  SessionHandle session_;
  EventHandle event_;  // holds session_ while ready, to process packets for all channels at once
  KeyHandle key_;      // loaded once from host_.identity_file
  std::optional<boost::asio::posix::stream_descriptor> socket_;  // dup() of libssh's socket
  uint64_t wait_generation_ = 0;  // bumped on every pump: stale socket waits do nothing
  uint64_t connect_attempt_ = 0;  // bumped per attempt: a stale connect timeout does nothing
  boost::asio::steady_timer connect_timer_;
  boost::asio::steady_timer retry_timer_;
  std::vector<ConnectDone> connect_waiters_;
  std::deque<Running> waiting_for_connection_;
  std::vector<Running> running_;
  std::vector<ChannelHandle> abandoned_;  // channels of ended commands, still opening
  bool retire_ = false;                   // the server refused a channel: recycle when idle
};

}  // namespace rackchaos::ssh
