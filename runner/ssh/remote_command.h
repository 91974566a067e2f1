// One command on one channel of an open session: open the channel, request exec, collect output
// through libssh channel callbacks, finish on close or on EOF plus exit status.
//
// Internal to runner/ssh; owned by a Session and used only on the io_context's thread. Output
// arrives through callbacks from whichever libssh call processes packets for the session, so a
// command never hides data in libssh's channel buffers where an fd wait could not see it.
#pragma once

#include <libssh/callbacks.h>

#include <chrono>
#include <string>

#include "runner/ssh/asio.h"
#include "runner/ssh/command_result.h"
#include "runner/ssh/libssh_handles.h"

namespace rackchaos::ssh {

class RemoteCommand {
 public:
  // A `gated` command starts on the host but waits in bash, blocked in `read`, until Release(): it
  // is how a fault is armed on many hosts ahead of time and then lands on all of them at once.
  // Cancel() before Release(), or before the release's instant, ends it with exit status 125 before
  // `command` runs. The host needs bash 5 or later (else the command ends with 126 at arming).
  RemoteCommand(boost::asio::io_context& io, std::string host, std::string command,
                size_t max_output_bytes, bool gated = false);
  ~RemoteCommand();
  RemoteCommand(const RemoteCommand&) = delete;
  RemoteCommand& operator=(const RemoteCommand&) = delete;

  // Advances the command on `session` (connected and authenticated) as far as it can without
  // blocking. Returns true once the command finished (result() is final and the channel released).
  bool Step(ssh_session session);
  // Ends the command now with `status` (not OK): asks the remote side to kill the process
  // (best effort), closes and releases the channel. Safe to call in any phase, also twice.
  void Abort(const Status& status);
  // True (and resets) when libssh reported anything for this channel since the last call.
  bool TakeActivity();
  // A gated command whose process runs on the host and waits for Release().
  bool armed() const { return gated_ && phase_ == Phase::kRunning && !finished_ && !released_; }
  // Lets an armed command go by writing `line` on its input: "" runs it now, a decimal number runs
  // it at that wall-clock instant of the host (microseconds since the Unix epoch). Internal when it
  // is not armed.
  Status Release(const std::string& line = "");
  // Sends EOF on the input of an armed or released command, once: before its go line or its
  // instant, it exits 125 unrun; afterwards it has no effect (the command reads /dev/null).
  void Cancel();

  bool finished() const { return finished_; }
  // True when the command finished because the server refused its channel (sshd's MaxSessions
  // reached, for one): the connection is no good for new channels.
  bool open_refused() const { return open_refused_; }
  // Once per command: makes a command whose channel was refused new again, to start it on another
  // connection. False (and nothing changes) when it was not refused or was retried already.
  bool RetryAfterRefusal();
  // A channel whose open the server had not confirmed yet when the command ended: it cannot be
  // closed before the server confirms it, and, freed, it would stay open on the server (one of
  // sshd's MaxSessions for good). The session takes it and closes it once confirmed (CloseAbandoned).
  ChannelHandle TakeAbandonedChannel() { return std::move(abandoned_); }
  // Advances an abandoned channel: true once it is done with (confirmed and closed, or refused).
  static bool CloseAbandoned(ChannelHandle& channel);
  CommandResult& result() { return result_; }
  // Armed by the session with the command timeout.
  boost::asio::steady_timer& timer() { return timer_; }

 private:
  enum class Phase { kNew, kOpening, kExec, kRunning };

  static int OnData(ssh_session, ssh_channel, void* data, uint32_t len, int is_stderr, void* self);
  static void OnEof(ssh_session, ssh_channel, void* self);
  static void OnClose(ssh_session, ssh_channel, void* self);
  static void OnExitStatus(ssh_session, ssh_channel, int status, void* self);
  static void OnExitSignal(ssh_session, ssh_channel, const char* signal, int core,
                           const char* errmsg, const char* lang, void* self);

  bool StartChannel(ssh_session session);
  void Finish(Status status);
  void ReleaseChannel();

  std::string command_;
  std::string err_tail_;  // gated: stderr's last bytes, where the landing stamp is
  size_t max_output_bytes_;
  CommandResult result_;
  Phase phase_ = Phase::kNew;
  ChannelHandle channel_;
  ChannelHandle abandoned_;  // see TakeAbandonedChannel
  ssh_channel_callbacks_struct callbacks_{};
  bool eof_ = false, closed_ = false, exit_known_ = false;
  bool activity_ = false;
  bool finished_ = false;
  bool gated_ = false, released_ = false, cancelled_ = false;
  bool open_refused_ = false, retried_ = false;
  std::chrono::steady_clock::time_point submitted_;
  boost::asio::steady_timer timer_;
};

}  // namespace rackchaos::ssh
