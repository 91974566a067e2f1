#include "runner/ssh/session.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runner/ssh/host_key.h"

namespace rackchaos::ssh {
namespace {

std::chrono::microseconds ToChrono(Duration d) { return std::chrono::microseconds(d.us); }

// Passes over the running commands per wake-up before yielding to other sessions.
constexpr int kMaxPassesPerPump = 16;

}  // namespace

Session::Session(boost::asio::io_context& io, HostSpec host, const PoolOptions& options)
    : io_(io), host_(std::move(host)), options_(options), connect_timer_(io), retry_timer_(io) {}

Session::~Session() { Shutdown(); }

void Session::Connect(ConnectDone done) {
  if (shut_down_ || state_ == State::kReady) {
    Status s = shut_down_ ? Status::Aborted(host_.Describe() + ": the SSH pool is shutting down")
                          : Status::Ok();
    boost::asio::post(io_, [done = std::move(done), s] { done(s); });
    return;
  }
  connect_waiters_.push_back(std::move(done));
  if (state_ == State::kIdle) StartConnect();
}

void Session::Exec(std::string command, CommandDone done) {
  Submit({std::make_shared<RemoteCommand>(io_, host_.name, std::move(command), options_.max_output_bytes),
          std::move(done), nullptr});
}

std::weak_ptr<RemoteCommand> Session::ExecArmed(std::string command, ArmedDone armed, CommandDone done) {
  auto c = std::make_shared<RemoteCommand>(io_, host_.name, std::move(command), options_.max_output_bytes, true);
  Submit({c, std::move(done), std::move(armed)});
  return c;
}

void Session::Cancel(const std::weak_ptr<RemoteCommand>& handle) {
  if (auto command = handle.lock()) command->Cancel();
}

Status Session::Fire(const std::weak_ptr<RemoteCommand>& handle, const std::string& line) {
  auto command = handle.lock();
  if (!command) return Status::Aborted(host_.Describe() + ": the armed command already ended");
  return command->Release(line);
}

void Session::Submit(Running r) {
  if (shut_down_) {
    r.command->Abort(Status::Aborted(host_.Describe() + ": the SSH pool is shutting down"));
    Complete(r);
    return;
  }
  if (state_ == State::kReady && !retire_) {
    StartCommand(std::move(r));
    Pump();
    return;
  }
  if (state_ == State::kReady) {  // draining before a recycle
    waiting_for_connection_.push_back(std::move(r));
    return;
  }
  waiting_for_connection_.push_back(std::move(r));
  if (state_ == State::kIdle) StartConnect();
}

void Session::Shutdown() {
  shut_down_ = true;
  TearDown();
  key_.reset();
}

// ---- Connection stages ------------------------------------------------------------------------

void Session::StartConnect() {
  state_ = State::kConnecting;
  const uint64_t attempt = ++connect_attempt_;
  connect_timer_.expires_after(ToChrono(options_.connect_timeout));
  connect_timer_.async_wait([self = shared_from_this(), attempt](boost::system::error_code ec) {
    if (ec || self->shut_down_ || attempt != self->connect_attempt_) return;
    if (self->state_ == State::kReady || self->state_ == State::kIdle) return;
    self->Fail(Status::Timeout(self->host_.Describe() + ": connect timed out after " +
                               FormatDuration(self->options_.connect_timeout) + " while " +
                               self->Phase()));
  });
  Status opened = OpenSession();
  if (!opened.ok()) {
    Fail(opened);
    return;
  }
  Pump();
}

Status Session::OpenSession() {
  if (!host_.use_agent && !key_) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(host_.identity_file.c_str(), nullptr, nullptr, nullptr, &key) !=
        SSH_OK) {
      return Status::Invalid(host_.Describe() + ": cannot load identity file '" +
                             host_.identity_file +
                             "' (missing, unreadable or passphrase-protected; load protected keys "
                             "into ssh-agent and set use_agent)");
    }
    key_.reset(key);
  }
  session_.reset(ssh_new());
  if (!session_) return Status::Internal(host_.Describe() + ": ssh_new failed");
  ssh_session s = session_.get();
  const int port = host_.port, no = 0, yes = 1, quiet = SSH_LOG_NOLOG;
  // Everything comes from the HostSpec: ~/.ssh/config would make runs depend on who starts them.
  bool ok = ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &quiet) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_HOST, host_.address.c_str()) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_PORT, &port) == SSH_OK &&
            ssh_options_set(s, SSH_OPTIONS_NODELAY, &yes) == SSH_OK;
  if (ok && !host_.user.empty())
    ok = ssh_options_set(s, SSH_OPTIONS_USER, host_.user.c_str()) == SSH_OK;
  if (ok && !host_.known_hosts_file.empty()) {
    ok = ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, host_.known_hosts_file.c_str()) == SSH_OK;
  }
  if (!ok) return Status::Invalid(host_.Describe() + ": bad SSH option: " + LibsshError(s));
  ssh_set_blocking(s, 0);
  return Status::Ok();
}

void Session::StepConnect() {
  const int rc = ssh_connect(session_.get());
  if (rc == SSH_AGAIN) {
    WatchSocket();
    return;
  }
  if (rc != SSH_OK) {
    Fail(
        Status::Unavailable(host_.Describe() + ": cannot connect: " + LibsshError(session_.get())));
    return;
  }
  if (!WatchSocket()) return;
  Status key_ok = VerifyHostKey(session_.get(), host_, options_.accept_new_host_keys);
  if (!key_ok.ok()) {
    Fail(key_ok);
    return;
  }
  state_ = State::kAuthenticating;
}

void Session::StepAuth() {
  ssh_session s = session_.get();
  const int rc = host_.use_agent ? ssh_userauth_agent(s, nullptr)
                                 : ssh_userauth_publickey(s, nullptr, key_.get());
  if (rc == SSH_AUTH_AGAIN) return;
  if (rc == SSH_AUTH_SUCCESS) {
    BecomeReady();
    return;
  }
  Fail(AuthError(rc));
}

Status Session::AuthError(int rc) const {
  const std::string who =
      "user '" + (host_.user.empty() ? std::string("(current)") : host_.user) + "' with " +
      (host_.use_agent ? std::string("the ssh-agent's keys") : "key '" + host_.identity_file + "'");
  if (rc == SSH_AUTH_DENIED) {
    return Status::Invalid(host_.Describe() + ": public key authentication refused for " + who);
  }
  if (rc == SSH_AUTH_PARTIAL) {
    return Status::Invalid(host_.Describe() + ": the server wants another authentication method " +
                           "after the public key of " + who);
  }
  return Status::Unavailable(host_.Describe() +
                             ": authentication failed: " + LibsshError(session_.get()));
}

void Session::BecomeReady() {
  ++connect_attempt_;
  connect_timer_.cancel();
  event_.reset(ssh_event_new());
  if (!event_ || ssh_event_add_session(event_.get(), session_.get()) != SSH_OK) {
    event_.reset();
    Fail(Status::Internal(host_.Describe() + ": cannot create a libssh event for the session"));
    return;
  }
  state_ = State::kReady;
  for (auto& done : std::exchange(connect_waiters_, {})) {
    boost::asio::post(io_, [done = std::move(done)] { done(Status::Ok()); });
  }
  auto waiting = std::exchange(waiting_for_connection_, {});
  for (auto& r : waiting) StartCommand(std::move(r));
}

// ---- Running stage ----------------------------------------------------------------------------

void Session::StartCommand(Running running) {
  std::weak_ptr<RemoteCommand> weak = running.command;
  running.command->timer().expires_after(ToChrono(options_.command_timeout));
  running.command->timer().async_wait(
      [self = shared_from_this(), weak](boost::system::error_code ec) {
        if (ec) return;
        if (auto command = weak.lock()) self->OnCommandTimeout(command);
      });
  running_.push_back(std::move(running));
}

void Session::StepReady() {
  // Reads what the socket has and hands it to the channels' callbacks.
  ssh_event_dopoll(event_.get(), 0);
  CloseAbandoned();
  bool activity = Alive();
  for (int pass = 0; activity && Alive(); ++pass) {
    if (pass == kMaxPassesPerPump) {
      // Still busy: let other sessions run, then continue where we stopped.
      boost::asio::post(io_, [self = shared_from_this(), gen = wait_generation_] {
        if (!self->shut_down_ && gen == self->wait_generation_) self->Pump();
      });
      break;
    }
    activity = StepCommands();
  }
  if (!Alive()) {
    Fail(Status::Unavailable(host_.Describe() + ": SSH session dropped" +
                             (running_.empty() ? std::string() : " while a command ran") + ": " +
                             LibsshError(session_.get())));
  }
}

bool Session::StepCommands() {
  bool activity = false;
  std::vector<Running> retry;  // refused, for the next connection, in their order
  for (auto& r : running_) {
    r.command->Step(session_.get());
    activity = r.command->TakeActivity() || activity;
    if (r.armed && r.command->armed()) {
      boost::asio::post(io_, [armed = std::exchange(r.armed, nullptr)] { armed(Status::Ok()); });
    }
  }
  for (auto it = running_.begin(); it != running_.end();) {
    if (!it->command->finished()) {
      ++it;
      continue;
    }
    KeepAbandoned(*it->command);
    if (it->command->open_refused() && !retire_) {
      // The first refusal on this connection: recycle it (channels held open on the server by
      // something else than this runner, or leaked before); the refused command waits for the new
      // connection once, later ones on the old one fail.
      retire_ = true;
      boost::asio::post(io_, [self = shared_from_this()] {
        if (!self->shut_down_) self->MaybeRecycle();
      });
    }
    if (retire_ && it->command->RetryAfterRefusal()) {
      it->command->timer().cancel();
      retry.push_back(std::move(*it));
    } else {
      Complete(*it);
    }
    it = running_.erase(it);
    activity = true;
  }
  waiting_for_connection_.insert(waiting_for_connection_.begin(), std::make_move_iterator(retry.begin()),
                                 std::make_move_iterator(retry.end()));
  if (retire_ && running_.empty()) {
    boost::asio::post(io_, [self = shared_from_this()] {
      if (!self->shut_down_) self->MaybeRecycle();
    });
  }
  return activity;
}

void Session::KeepAbandoned(RemoteCommand& command) {
  if (ChannelHandle c = command.TakeAbandonedChannel()) abandoned_.push_back(std::move(c));
}

void Session::CloseAbandoned() {
  std::erase_if(abandoned_, [](ChannelHandle& c) { return RemoteCommand::CloseAbandoned(c); });
}

void Session::MaybeRecycle() {
  if (!retire_ || state_ != State::kReady || !running_.empty()) return;
  Recycle();
}

void Session::Recycle() {
  // The commands that waited for it go to the next connection; nothing has been reported to them.
  auto waiters = std::exchange(connect_waiters_, {});
  auto waiting = std::exchange(waiting_for_connection_, {});
  TearDown();
  retire_ = false;
  connect_waiters_ = std::move(waiters);
  waiting_for_connection_ = std::move(waiting);
  if (!waiting_for_connection_.empty() || !connect_waiters_.empty()) StartConnect();
}

void Session::OnCommandTimeout(const std::shared_ptr<RemoteCommand>& command) {
  if (shut_down_) return;
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    if (it->command != command || command->finished()) continue;
    command->Abort(Status::Timeout(host_.Describe() + ": command timed out after " +
                                   FormatDuration(options_.command_timeout) +
                                   "; the remote process was sent SIGKILL and the channel closed"));
    KeepAbandoned(*command);
    Complete(*it);
    running_.erase(it);
    if (retire_ && running_.empty()) {
      MaybeRecycle();
      return;
    }
    Pump();  // flush the signal and close, and re-arm the socket wait
    return;
  }
}

// ---- Plumbing ---------------------------------------------------------------------------------

bool Session::Alive() const {
  if (!session_ || !ssh_is_connected(session_.get())) return false;
  return (ssh_get_status(session_.get()) & (SSH_CLOSED | SSH_CLOSED_ERROR)) == 0;
}

void Session::Pump() {
  if (shut_down_) return;
  ++wait_generation_;  // handlers of earlier waits become no-ops
  if (socket_) {
    boost::system::error_code ignored;
    socket_->cancel(ignored);
  }
  if (state_ == State::kConnecting) StepConnect();
  if (state_ == State::kAuthenticating) StepAuth();
  if (state_ == State::kReady) StepReady();
  ArmWait();
}

void Session::ArmWait() {
  if (shut_down_ || state_ == State::kIdle) return;
  const uint64_t gen = wait_generation_;
  auto wake = [self = shared_from_this(), gen](boost::system::error_code ec) {
    if (ec == boost::asio::error::operation_aborted) return;
    if (self->shut_down_ || gen != self->wait_generation_) return;
    self->Pump();
  };
  if (!socket_) {
    // libssh has no socket yet (name resolution in progress): look again shortly.
    retry_timer_.expires_after(std::chrono::milliseconds(5));
    retry_timer_.async_wait(wake);
    return;
  }
  // An idle ready session still watches for reads, so a dropped connection is noticed early.
  socket_->async_wait(boost::asio::posix::stream_descriptor::wait_read, wake);
  if (ssh_get_poll_flags(session_.get()) & SSH_WRITE_PENDING) {
    socket_->async_wait(boost::asio::posix::stream_descriptor::wait_write, wake);
  }
}

bool Session::WatchSocket() {
  if (socket_) return true;
  const int fd = ssh_get_fd(session_.get());
  if (fd < 0) return false;
  // A duplicate, so that Asio's close and libssh's close each close their own descriptor.
  const int dup_fd = ::dup(fd);
  if (dup_fd < 0) {
    Fail(Status::IoError(host_.Describe() +
                         ": dup() of the SSH socket failed: " + std::strerror(errno)));
    return false;
  }
  socket_.emplace(io_);
  boost::system::error_code ec;
  socket_->assign(dup_fd, ec);
  if (ec) {
    ::close(dup_fd);
    socket_.reset();
    Fail(Status::IoError(host_.Describe() + ": cannot watch the SSH socket: " + ec.message()));
    return false;
  }
  return true;
}

void Session::Fail(const Status& status) {
  for (auto& done : std::exchange(connect_waiters_, {})) {
    boost::asio::post(io_, [done = std::move(done), status] { done(status); });
  }
  for (auto& r : std::exchange(waiting_for_connection_, {})) {
    r.command->Abort(status);
    Complete(r);
  }
  for (auto& r : std::exchange(running_, {})) {
    r.command->Abort(status);
    Complete(r);
  }
  TearDown();
}

void Session::TearDown() {
  ++wait_generation_;
  ++connect_attempt_;
  connect_timer_.cancel();
  retry_timer_.cancel();
  if (socket_) {
    boost::system::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
  }
  // Channels belong to the session: release them before it goes.
  for (auto& r : running_) r.command->Abort(Status::Aborted("shut down"));
  running_.clear();
  abandoned_.clear();
  retire_ = false;
  waiting_for_connection_.clear();
  connect_waiters_.clear();
  if (event_ && session_) ssh_event_remove_session(event_.get(), session_.get());
  event_.reset();
  session_.reset();
  state_ = State::kIdle;
}

void Session::Complete(Running& running) {
  if (running.armed) {  // ended before it was armed: say why first
    const CommandResult& r = running.command->result();
    Status why = !r.status.ok() ? r.status
                                : Status::Unavailable(host_.Describe() + ": the armed command ended before it was fired "
                                                      "(exit status " + std::to_string(r.exit_status) + ")" +
                                                      (r.err.empty() ? "" : ": " + r.err.substr(0, r.err.find('\n'))));
    boost::asio::post(io_, [armed = std::exchange(running.armed, nullptr), why] { armed(why); });
  }
  boost::asio::post(
      io_, [done = std::move(running.done),
            result = std::move(running.command->result())]() mutable { done(std::move(result)); });
}

std::string Session::Phase() const {
  switch (state_) {
    case State::kConnecting:
      return "connecting and exchanging keys";
    case State::kAuthenticating:
      return "authenticating";
    case State::kReady:
      return "ready";
    case State::kIdle:
      break;
  }
  return "idle";
}

}  // namespace rackchaos::ssh
