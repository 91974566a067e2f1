#include "runner/ssh/ssh_pool.h"

#include <libssh/libssh.h>

#include <algorithm>

#include "runner/ssh/remote_command.h"
#include "runner/ssh/session.h"

namespace rackchaos::ssh {
namespace {

Status CheckSpec(const HostSpec& h) {
  const std::string what = "host '" + h.name + "'";
  if (h.name.empty())
    return Status::Invalid("SSH host with address '" + h.address + "' has no name");
  if (h.address.empty()) return Status::Invalid(what + " has no address");
  if (h.port < 1 || h.port > 65535) {
    return Status::Invalid(what + " has port " + std::to_string(h.port) + " (valid: 1-65535)");
  }
  if (!h.use_agent && h.identity_file.empty()) {
    return Status::Invalid(what + " has neither an identity file nor use_agent");
  }
  return Status::Ok();
}

bool SameSpec(const HostSpec& a, const HostSpec& b) {
  return a.name == b.name && a.address == b.address && a.port == b.port && a.user == b.user &&
         a.identity_file == b.identity_file && a.use_agent == b.use_agent &&
         a.known_hosts_file == b.known_hosts_file;
}

Status UnknownHost(const std::string& name) {
  return Status::NotFound("no SSH host named '" + name + "' in the pool");
}

}  // namespace

SshPool::SshPool(boost::asio::io_context& io, PoolOptions options)
    : io_(io), options_(options), admission_(io, options.max_concurrent) {
  ssh_init();
}

SshPool::~SshPool() {
  *alive_ = false;
  admission_.Clear();
  for (auto& [name, session] : sessions_) session->Shutdown();
  sessions_.clear();
  ssh_finalize();
}

Status SshPool::AddHosts(const std::vector<HostSpec>& hosts) {
  std::map<std::string, const HostSpec*> seen;
  for (const HostSpec& h : hosts) {
    RC_RETURN_IF_ERROR(CheckSpec(h));
    auto [it, inserted] = seen.emplace(h.name, &h);
    if (!inserted && !SameSpec(*it->second, h)) {
      return Status::Invalid("SSH host name '" + h.name + "' is used for two different hosts");
    }
    auto known = sessions_.find(h.name);
    if (known != sessions_.end() && !SameSpec(known->second->host(), h)) {
      return Status::Invalid("SSH host '" + h.name + "' is already in the pool as " +
                             known->second->host().Describe());
    }
  }
  for (const HostSpec& h : hosts) {
    if (!sessions_.count(h.name)) sessions_[h.name] = std::make_shared<Session>(io_, h, options_);
  }
  return Status::Ok();
}

void SshPool::Connect(const std::vector<std::string>& names, ConnectCallback done) {
  auto shared_done = std::make_shared<ConnectCallback>(std::move(done));
  for (const std::string& name : names) {
    std::shared_ptr<Session> session = Find(name);
    if (!session) {
      boost::asio::post(io_, [shared_done, name] { (*shared_done)(name, UnknownHost(name)); });
      continue;
    }
    std::weak_ptr<bool> alive = alive_;
    admission_.Submit([this, alive, session, name, shared_done] {
      if (alive.expired() || !*alive.lock()) return;
      session->Connect([this, alive, name, shared_done](Status status) {
        if (alive.expired() || !*alive.lock()) return;
        admission_.Release();
        (*shared_done)(name, status);
      });
    });
  }
}

void SshPool::Run(const std::vector<std::string>& names, const std::string& command,
                  CommandCallback done) {
  auto shared_done = std::make_shared<CommandCallback>(std::move(done));
  for (const std::string& name : names) {
    std::shared_ptr<Session> session = Find(name);
    if (!session) {
      CommandResult r;
      r.host = name;
      r.status = UnknownHost(name);
      boost::asio::post(
          io_, [shared_done, r = std::move(r)]() mutable { (*shared_done)(std::move(r)); });
      continue;
    }
    std::weak_ptr<bool> alive = alive_;
    admission_.Submit([this, alive, session, command, shared_done] {
      if (alive.expired() || !*alive.lock()) return;
      session->Exec(command, [this, alive, shared_done](CommandResult result) {
        if (alive.expired() || !*alive.lock()) return;
        admission_.Release();
        (*shared_done)(std::move(result));
      });
    });
  }
}

Status SshPool::ConnectAll(const std::vector<HostSpec>& hosts) {
  RC_RETURN_IF_ERROR(AddHosts(hosts));
  std::vector<std::string> names;
  for (const HostSpec& h : hosts) names.push_back(h.name);
  std::map<std::string, Status> failed;
  size_t pending = names.size();
  Connect(names, [&](const std::string& name, const Status& status) {
    --pending;
    if (!status.ok()) failed.emplace(name, status);
  });
  RunUntil([&] { return pending == 0; });
  if (pending != 0) return Status::Internal("SSH connect: the event loop stopped early");
  if (failed.empty()) return Status::Ok();
  std::string message = std::to_string(failed.size()) + " of " + std::to_string(names.size()) +
                        " SSH hosts did not connect";
  for (const auto& [name, status] : failed) message += "; " + status.ToString();
  return Status(failed.begin()->second.code(), message);
}

std::vector<CommandResult> SshPool::RunAll(const std::vector<std::string>& names,
                                           const std::string& command) {
  std::vector<CommandResult> results(names.size());
  std::map<std::string, std::vector<size_t>> slots;  // a name may appear twice
  for (size_t i = 0; i < names.size(); ++i) slots[names[i]].push_back(i);
  size_t pending = names.size();
  Run(names, command, [&](CommandResult r) {
    std::vector<size_t>& free_slots = slots[r.host];
    const size_t slot = free_slots.front();
    free_slots.erase(free_slots.begin());
    results[slot] = std::move(r);
    --pending;
  });
  RunUntil([&] { return pending == 0; });
  for (size_t i = 0; i < names.size() && pending != 0; ++i) {
    if (results[i].host.empty()) {
      results[i].host = names[i];
      results[i].status = Status::Internal("SSH run: the event loop stopped early");
    }
  }
  return results;
}

Status SshPool::ArmAll(const std::vector<std::string>& names, const std::string& command,
                       std::shared_ptr<Armed>& out) {
  return ArmEach(names, std::vector<std::string>(names.size(), command), out);
}

Status SshPool::ArmEach(const std::vector<std::string>& names, const std::vector<std::string>& commands,
                        std::shared_ptr<Armed>& out) {
  if (names.size() != commands.size()) return Status::Internal("SSH arm: one command per host name expected");
  // Armed commands hold their slots until fired; other commands only wait a little for theirs.
  const int free_slots = options_.max_concurrent - armed_in_flight_;
  if (static_cast<int>(names.size()) > free_slots) {
    return Status::Invalid("cannot arm a command on " + std::to_string(names.size()) + " hosts with " +
                           std::to_string(free_slots) + " free session slots (ssh.max_concurrent " +
                           std::to_string(options_.max_concurrent) + ")");
  }
  out = std::make_shared<Armed>();
  Armed& a = *out;
  a.names_ = names;
  a.sessions_.resize(names.size());
  a.commands_.resize(names.size());
  a.armed_.assign(names.size(), Status::Ok());
  a.results_.resize(names.size());
  a.waiting_armed_ = a.waiting_done_ = names.size();
  std::weak_ptr<bool> alive = alive_;
  for (size_t i = 0; i < names.size(); ++i) {
    a.results_[i].host = names[i];
    std::shared_ptr<Session> session = Find(names[i]);
    if (!session) {
      a.armed_[i] = a.results_[i].status = UnknownHost(names[i]);
      a.results_[i].exit_status = -1;
      --a.waiting_armed_;
      --a.waiting_done_;
      continue;
    }
    a.sessions_[i] = session;
    ++armed_in_flight_;
    std::weak_ptr<Armed> weak = out;
    admission_.Submit([this, alive, weak, session, command = commands[i], i] {
      if (alive.expired() || !*alive.lock()) return;
      auto armed = weak.lock();
      if (!armed) {
        --armed_in_flight_;
        admission_.Release();
        return;
      }
      armed->commands_[i] = session->ExecArmed(
          command,
          [alive, weak, i](Status status) {
            auto set = weak.lock();
            if (alive.expired() || !*alive.lock() || !set) return;
            set->armed_[i] = std::move(status);
            --set->waiting_armed_;
          },
          [this, alive, weak, i](CommandResult result) {
            if (alive.expired() || !*alive.lock()) return;
            --armed_in_flight_;
            admission_.Release();
            if (auto set = weak.lock()) {
              set->results_[i] = std::move(result);
              --set->waiting_done_;
            }
          });
    });
  }
  RunUntil([&] { return a.waiting_armed_ == 0; });
  if (a.waiting_armed_ != 0) return Status::Internal("SSH arm: the event loop stopped early");
  std::string failed;
  StatusCode code = StatusCode::kOk;
  int count = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (a.armed_[i].ok()) continue;
    if (count++ == 0) code = a.armed_[i].code();
    failed += "; " + a.armed_[i].ToString();
  }
  if (count == 0) return Status::Ok();
  return Status(code, std::to_string(count) + " of " + std::to_string(names.size()) + " hosts could not be armed" + failed);
}

void SshPool::ReleaseArmed(Armed& a, const std::optional<std::string>& line) {
  // One pass of writes (or EOFs) with no packet processing in between, then the sessions' pumps.
  for (size_t i = 0; i < a.names_.size(); ++i) {
    if (!a.armed_[i].ok()) continue;
    auto session = a.sessions_[i].lock();
    if (!session) {
      if (a.results_[i].status.ok()) a.results_[i].status = Status::Aborted(a.names_[i] + ": the pool closed");
      continue;
    }
    if (!line) {
      session->Cancel(a.commands_[i]);
      continue;
    }
    Status s = session->Fire(a.commands_[i], *line);
    if (!s.ok() && a.results_[i].status.ok()) a.results_[i].status = s;
  }
  for (const auto& weak : a.sessions_)
    if (auto session = weak.lock()) session->Pump();
  RunUntil([&] { return a.waiting_done_ == 0; });
}

std::vector<CommandResult> SshPool::FireAll(Armed& a) {
  ReleaseArmed(a, std::string());
  return a.results_;
}

std::vector<CommandResult> SshPool::FireAt(Armed& a, int64_t wall_us, int64_t latest_us) {
  ReleaseArmed(a, std::to_string(wall_us) + (latest_us > 0 ? " " + std::to_string(latest_us) : std::string()));
  return a.results_;
}

void SshPool::Disarm(Armed& a) { ReleaseArmed(a, std::nullopt); }

std::vector<std::string> SshPool::HostNames() const {
  std::vector<std::string> names;
  for (const auto& [name, session] : sessions_) names.push_back(name);
  return names;
}

bool SshPool::IsConnected(const std::string& name) const {
  std::shared_ptr<Session> session = Find(name);
  return session && session->ready();
}

void SshPool::Disconnect(const std::string& name) {
  if (std::shared_ptr<Session> session = Find(name)) {
    session->Close(Status::Aborted(session->host().Describe() + ": disconnected on request"));
  }
}

void SshPool::RunUntil(const std::function<bool()>& done) {
  int idle_rounds = 0;
  while (!done()) {
    if (io_.stopped()) io_.restart();
    if (io_.run_one() > 0) {
      idle_rounds = 0;
    } else if (++idle_rounds > 1) {
      return;  // no work left: nothing can complete the operations any more
    }
  }
}

std::shared_ptr<Session> SshPool::Find(const std::string& name) const {
  auto it = sessions_.find(name);
  return it == sessions_.end() ? nullptr : it->second;
}

}  // namespace rackchaos::ssh
