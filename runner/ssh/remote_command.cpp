#include "runner/ssh/remote_command.h"

#include <string_view>

#include "runner/ssh/command_template.h"
#include "core/wall_time.h"

namespace rackchaos::ssh {
namespace {

void Capture(std::string& into, bool& truncated, uint64_t& total, const char* data, size_t len,
             size_t cap) {
  total += len;
  const size_t room = into.size() < cap ? cap - into.size() : 0;
  into.append(data, std::min(room, len));
  if (len > room) truncated = true;
}

// A gated command runs in bash (5 or later, for $EPOCHREALTIME and fractional `read -t`), whatever
// the login shell, with the channel's input moved to fd 3 and /dev/null as stdin. It waits for one
// line on fd 3: EOF (a channel closed or disarmed before the line) exits 125 unrun. An empty line
// runs the command now; a line "T" (microseconds since the Unix epoch, host clock) sleeps until T
// inside bash (a pselect timeout in `read -t`: no child process, no signal) and runs it then, unless
// a line or EOF arrives first (a disarm: exit 125). "T L" does the same but exits 125 unrun when the
// host's clock is past L at T: a line that a partition held back must not start the command after
// the runner gave up on it (and may have reverted it).
// At T nothing but the wake and the command may compete for the host's CPUs (on a loopback bench,
// or with several armed commands on one host, the other shells still waking): gate and command form
// one compound command, parsed at arming (a syntax error ends it then); the landing instant and the
// command's end are kept in variables; only 100 ms after the end (at once after an empty line) does
// bash write "rackchaos-landed <landed> <ended>" (both $EPOCHREALTIME) on stderr and exit with the
// command's status, so the stamp's write, the exit and the client reading them happen after the
// landing window. The command may `exit` (the EXIT trap then stamps its end, settles and writes the
// stamps); an `exec` in it, or an EXIT trap of its own, loses them. It inherits fd 3 (the channel's
// input; nothing more is written there but a cancel's EOF).
constexpr const char* kGate = R"({
exec 3<&0 </dev/null; rackchaos_landed= rackchaos_ended=
IFS= read -r -u 3 rackchaos_go || exit 125
rackchaos_late=
[[ $rackchaos_go != *' '* ]] || { rackchaos_late=${rackchaos_go#* }; rackchaos_go=${rackchaos_go%% *}; }
case $rackchaos_go$rackchaos_late in *[!0-9]*) exit 125 ;; esac
rackchaos_end() {
  [[ $rackchaos_landed ]] || exit "$rackchaos_rc"
  [[ $rackchaos_ended ]] || { rackchaos_ended=$EPOCHREALTIME; [[ ! $rackchaos_go ]] || IFS= read -r -t 0.1 -u 3 rackchaos_go; }
  printf 'rackchaos-landed %s %s\n' "$rackchaos_landed" "$rackchaos_ended" >&2
  rackchaos_landed=
  exit "$rackchaos_rc"
}
trap 'rackchaos_rc=$?; rackchaos_end' EXIT
if [[ $rackchaos_go ]]; then
  rackchaos_us=$(( rackchaos_go - ${EPOCHREALTIME/[.,]/} ))
  if (( rackchaos_us > 0 )); then
    printf -v rackchaos_t '%d.%06d' $(( rackchaos_us / 1000000 )) $(( rackchaos_us % 1000000 ))
    IFS= read -r -t "$rackchaos_t" -u 3 rackchaos_t
    (( $? > 128 )) || exit 125
  fi
fi
[[ ! $rackchaos_late ]] || (( ${EPOCHREALTIME/[.,]/} <= rackchaos_late )) || exit 125
rackchaos_landed=$EPOCHREALTIME
)";
// After the command, inline (a function call at T costs the shells still waking): its status and end
// stamp, the settle, then the stamps' line and the exit.
constexpr const char* kEnd = R"(
rackchaos_rc=$? rackchaos_ended=$EPOCHREALTIME
[[ ! $rackchaos_go ]] || IFS= read -r -t 0.1 -u 3 rackchaos_go
rackchaos_end
}
)";
constexpr std::string_view kLanded = "rackchaos-landed ";
constexpr size_t kTailBytes = 128;  // longer than the landing line
// Checked before the gate, so that a host without bash 5 fails at arming, not at the fault's time.
constexpr const char* kNeedBash =
    "[ -n \"$EPOCHREALTIME\" ] || { echo 'rackchaos: armed commands need bash 5 or later' >&2; exit 126; }\n";

std::string GatedCommand(const std::string& command) {
  return "exec bash -c " + ShellQuote(std::string(kNeedBash) + kGate + command + kEnd) +
         " rackchaos-armed";
}

// Parses "S.UUUUUU" ($EPOCHREALTIME) into microseconds; 0 when it is not one.
int64_t StampMicros(std::string stamp) {
  const size_t point = stamp.find_first_of(".,");
  if (point == std::string::npos || point == 0 || stamp.size() != point + 7) return 0;
  stamp.erase(point, 1);
  if (stamp.size() > 18 || stamp.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(stamp);
}

// Takes a gated command's landing line "rackchaos-landed <landed> <ended>" off the end of its stderr.
// `tail` holds stderr's last bytes, so that the stamp is found even when the command's own output
// overflowed the capture.
void TakeLanded(CommandResult& r, const std::string& tail) {
  if (tail.empty() || tail.back() != '\n') return;
  const size_t start = tail.rfind(kLanded);
  if (start == std::string::npos || (start != 0 && tail[start - 1] != '\n')) return;
  const std::string line = tail.substr(start);
  const size_t space = line.find(' ', kLanded.size());
  if (space == std::string::npos) return;
  r.landed_wall_us = StampMicros(line.substr(kLanded.size(), space - kLanded.size()));
  r.apply_end_wall_us = StampMicros(line.substr(space + 1, line.size() - space - 2));
  // The line is the last thing on stderr: what came before it is the command's own.
  r.err_bytes -= std::min<uint64_t>(r.err_bytes, line.size());
  if (r.err.size() > r.err_bytes) r.err.resize(r.err_bytes);
  r.err_truncated = r.err.size() < r.err_bytes;
}

}  // namespace

RemoteCommand::RemoteCommand(boost::asio::io_context& io, std::string host, std::string command,
                             size_t max_output_bytes, bool gated)
    : command_(gated ? GatedCommand(command) : std::move(command)),
      max_output_bytes_(max_output_bytes),
      submitted_(std::chrono::steady_clock::now()),
      timer_(io) {
  gated_ = gated;
  result_.host = std::move(host);
}

RemoteCommand::~RemoteCommand() { ReleaseChannel(); }

bool RemoteCommand::RetryAfterRefusal() {
  if (!open_refused_ || retried_ || channel_) return false;
  retried_ = true;
  open_refused_ = finished_ = false;
  eof_ = closed_ = exit_known_ = activity_ = false;
  phase_ = Phase::kNew;
  err_tail_.clear();
  std::string host = std::move(result_.host);
  result_ = {};
  result_.host = std::move(host);
  return true;
}

bool RemoteCommand::CloseAbandoned(ChannelHandle& channel) {
  if (!channel) return true;
  // Non-blocking: SSH_AGAIN while the server has not answered the open. Once it is open, freeing
  // it sends the close (libssh frees it when the server's close comes back); refused, there is
  // nothing to close.
  if (ssh_channel_open_session(channel.get()) == SSH_AGAIN) return false;
  channel.reset();
  return true;
}

bool RemoteCommand::Step(ssh_session session) {
  if (finished_) return true;
  if (phase_ == Phase::kNew && !StartChannel(session)) return true;
  if (phase_ == Phase::kOpening) {
    const int rc = ssh_channel_open_session(channel_.get());
    if (rc == SSH_AGAIN) return false;
    if (rc != SSH_OK) {
      open_refused_ = true;
      Finish(
          Status::Unavailable(result_.host + ": cannot open a channel: " + LibsshError(session)));
      return true;
    }
    phase_ = Phase::kExec;
    result_.start_wall_us = UnixMicrosNow();
  }
  if (phase_ == Phase::kExec) {
    const int rc = ssh_channel_request_exec(channel_.get(), command_.c_str());
    if (rc == SSH_AGAIN) return false;
    if (rc != SSH_OK) {
      Finish(Status::Unavailable(result_.host + ": exec request refused: " + LibsshError(session)));
      return true;
    }
    phase_ = Phase::kRunning;
  }
  // sshd sends EOF, then exit-status (or exit-signal), then close; close alone also ends it.
  if (closed_ || (eof_ && exit_known_)) Finish(Status::Ok());
  return finished_;
}

bool RemoteCommand::StartChannel(ssh_session session) {
  channel_.reset(ssh_channel_new(session));
  if (!channel_) {
    Finish(
        Status::Unavailable(result_.host + ": cannot create a channel: " + LibsshError(session)));
    return false;
  }
  callbacks_ = {};
  callbacks_.userdata = this;
  callbacks_.channel_data_function = &RemoteCommand::OnData;
  callbacks_.channel_eof_function = &RemoteCommand::OnEof;
  callbacks_.channel_close_function = &RemoteCommand::OnClose;
  callbacks_.channel_exit_status_function = &RemoteCommand::OnExitStatus;
  callbacks_.channel_exit_signal_function = &RemoteCommand::OnExitSignal;
  ssh_callbacks_init(&callbacks_);
  if (ssh_set_channel_callbacks(channel_.get(), &callbacks_) != SSH_OK) {
    Finish(Status::Internal(result_.host + ": cannot register channel callbacks"));
    return false;
  }
  phase_ = Phase::kOpening;
  return true;
}

void RemoteCommand::Abort(const Status& status) {
  if (finished_) return;
  // Ask sshd to kill the process so it does not outlive us; a no-op if the channel is not open.
  if (channel_ && phase_ == Phase::kRunning && !closed_) {
    ssh_channel_request_send_signal(channel_.get(), "KILL");
  }
  Finish(status);
}

Status RemoteCommand::Release(const std::string& line) {
  if (!armed()) return Status::Internal(result_.host + ": the command is not armed");
  released_ = true;
  result_.start_wall_us = UnixMicrosNow();  // the command's own release, not its arming
  const std::string go = line + "\n";
  if (ssh_channel_write(channel_.get(), go.data(), static_cast<uint32_t>(go.size())) == SSH_ERROR) {
    const Status s = Status::Unavailable(result_.host + ": cannot release the armed command: " +
                                         LibsshError(ssh_channel_get_session(channel_.get())));
    Abort(s);
    return s;
  }
  return Status::Ok();
}

void RemoteCommand::Cancel() {
  if (!gated_ || finished_ || !channel_ || phase_ != Phase::kRunning || cancelled_) return;
  cancelled_ = true;
  ssh_channel_send_eof(channel_.get());  // a command that ended meanwhile closed its channel: harmless
}

bool RemoteCommand::TakeActivity() { return std::exchange(activity_, false); }

void RemoteCommand::Finish(Status status) {
  if (finished_) return;
  finished_ = true;
  if (gated_) TakeLanded(result_, err_tail_);
  result_.status = std::move(status);
  if (!result_.status.ok()) result_.exit_status = -1;
  result_.end_wall_us = UnixMicrosNow();
  result_.elapsed = Duration::Micros(std::chrono::duration_cast<std::chrono::microseconds>(
                                         std::chrono::steady_clock::now() - submitted_)
                                         .count());
  timer_.cancel();
  ReleaseChannel();
}

void RemoteCommand::ReleaseChannel() {
  if (!channel_) return;
  // Late packets for a freed channel must not reach callbacks pointing at this object.
  ssh_remove_channel_callbacks(channel_.get(), &callbacks_);
  if (phase_ == Phase::kOpening && !open_refused_) {
    abandoned_ = std::move(channel_);  // still opening: see TakeAbandonedChannel
    return;
  }
  channel_.reset();  // sends close when still open; libssh frees it after the remote close
}

int RemoteCommand::OnData(ssh_session, ssh_channel, void* data, uint32_t len, int is_stderr,
                          void* self) {
  auto* c = static_cast<RemoteCommand*>(self);
  c->activity_ = true;
  CommandResult& r = c->result_;
  const auto* bytes = static_cast<const char*>(data);
  if (is_stderr) {
    Capture(r.err, r.err_truncated, r.err_bytes, bytes, len, c->max_output_bytes_);
    if (c->gated_) {  // the landing stamp comes last: keep the tail whatever the capture dropped
      c->err_tail_.append(bytes, len);
      if (c->err_tail_.size() > kTailBytes) c->err_tail_.erase(0, c->err_tail_.size() - kTailBytes);
    }
  } else {
    Capture(r.out, r.out_truncated, r.out_bytes, bytes, len, c->max_output_bytes_);
  }
  return static_cast<int>(len);  // all consumed, so libssh keeps the window open
}

void RemoteCommand::OnEof(ssh_session, ssh_channel, void* self) {
  auto* c = static_cast<RemoteCommand*>(self);
  c->eof_ = c->activity_ = true;
}

void RemoteCommand::OnClose(ssh_session, ssh_channel, void* self) {
  auto* c = static_cast<RemoteCommand*>(self);
  c->closed_ = c->activity_ = true;
}

void RemoteCommand::OnExitStatus(ssh_session, ssh_channel, int status, void* self) {
  auto* c = static_cast<RemoteCommand*>(self);
  c->result_.exit_status = status;
  c->exit_known_ = c->activity_ = true;
}

void RemoteCommand::OnExitSignal(ssh_session, ssh_channel, const char* signal, int, const char*,
                                 const char*, void* self) {
  auto* c = static_cast<RemoteCommand*>(self);
  c->result_.exit_signal = signal ? signal : "?";
  c->exit_known_ = c->activity_ = true;
}

}  // namespace rackchaos::ssh
