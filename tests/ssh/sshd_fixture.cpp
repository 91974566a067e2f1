#include "tests/ssh/sshd_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "runner/ssh/command_template.h"

namespace rackchaos::ssh::testing {
namespace fs = std::filesystem;
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Creates the test user when missing; a no-op afterwards. Its home must exist, or sshd prints
// "Could not chdir to home directory" into every command's stderr.
Status EnsureUser() {
  const std::string user = SshdFixture::kUser;
  if (!getpwnam(user.c_str())) {
    RunShell("useradd -M -d /var/lib/" + user + " -s /bin/sh " + user + " 2>/dev/null");
  }
  const passwd* pw = getpwnam(user.c_str());
  if (!pw)
    return Status::Unavailable("cannot create test user " + user + " (useradd; run as root)");
  // '*' is "no password" rather than "locked": with UsePAM no, sshd refuses locked accounts.
  if (RunShell("usermod -p '*' " + user) != 0) return Status::Unavailable("usermod -p failed");
  std::error_code ec;
  fs::create_directories(pw->pw_dir, ec);
  return Status::Ok();
}

bool Accepts(const Endpoint& e) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(e.port));
  inet_pton(AF_INET, e.address.c_str(), &addr.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string SshdConfig(const std::string& dir, int index, const std::vector<Endpoint>& eps,
                       const std::string& extra) {
  std::string c = extra;
  for (const Endpoint& e : eps)
    c += "ListenAddress " + e.address + ":" + std::to_string(e.port) + "\n";
  c += "HostKey " + dir + "/host_ed25519\n";
  c += "PidFile " + dir + "/sshd" + std::to_string(index) + ".pid\n";
  c += "AuthorizedKeysFile " + dir + "/authorized_keys\n";
  c += "AllowUsers " + std::string(SshdFixture::kUser) + "\n";
  c += R"(UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin no
StrictModes no
MaxStartups 1000:30:1000
MaxSessions 100
LogLevel ERROR
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
)";
  return c;
}

}  // namespace

int RunShell(const std::string& command, std::string* out) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    if (out) out->append(buf, n);
  }
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

Result<std::unique_ptr<SshdFixture>> SshdFixture::Start(int endpoints, const std::string& extra_config) {
  std::unique_ptr<SshdFixture> f(new SshdFixture());
  f->extra_config_ = extra_config;
  RC_RETURN_IF_ERROR(f->Prepare());
  for (int i = 0; endpoints > 0; ++i) {
    const int n = std::min(endpoints, kAddressesPerSshd);
    RC_RETURN_IF_ERROR(f->StartSshd(i, n));
    endpoints -= n;
  }
  RC_RETURN_IF_ERROR(f->WriteKnownHosts(f->known_hosts(), f->host_public_key_));
  return f;
}

std::string SshdCleanupScript(const std::string& dir) {
  return KillMentioning(dir + "/") + "; rm -rf -- " + ShellQuote(dir);
}

Status SshdFixture::Prepare() {
  RemoveStale("/tmp", "rackchaos-sshd-", false, SshdCleanupScript);
  std::string tmpl = "/tmp/rackchaos-sshd-" + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return Status::IoError("mkdtemp failed");
  dir_ = tmpl;
  RC_ASSIGN_OR_RETURN(guard_, CleanupGuard::Arm(SshdCleanupScript(dir_)));
  ::chmod(dir_.c_str(), 0755);  // the test user reads authorized_keys from here
  RC_RETURN_IF_ERROR(EnsureUser());
  std::error_code ec;
  fs::create_directories("/run/sshd", ec);  // sshd's privilege separation directory
  const std::string keygen = "ssh-keygen -q -t ed25519 -N '' -C rackchaos-test -f ";
  if (RunShell(keygen + dir_ + "/host_ed25519") != 0 || RunShell(keygen + user_key()) != 0) {
    return Status::Unavailable("ssh-keygen failed");
  }
  fs::copy_file(user_key() + ".pub", dir_ + "/authorized_keys", ec);
  ::chmod((dir_ + "/authorized_keys").c_str(), 0644);
  std::istringstream pub(ReadFile(dir_ + "/host_ed25519.pub"));
  std::string type, blob;
  pub >> type >> blob;
  host_public_key_ = type + " " + blob;
  std::string fp;
  RunShell("ssh-keygen -l -E sha256 -f " + dir_ + "/host_ed25519.pub", &fp);
  std::istringstream fps(fp);
  std::string bits;
  fps >> bits >> host_fingerprint_;
  return Status::Ok();
}

Status SshdFixture::StartSshd(int index, int addresses) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<Endpoint> eps;
    const int port = FreePort();
    for (int a = 0; a < addresses; ++a) eps.push_back({"127.0.0." + std::to_string(2 + a), port});
    const std::string conf = dir_ + "/sshd" + std::to_string(index) + ".conf";
    const std::string log = dir_ + "/sshd" + std::to_string(index) + ".log";
    std::ofstream(conf) << SshdConfig(dir_, index, eps, extra_config_);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const char* argv[] = {"/usr/sbin/sshd", "-D", "-e", "-f", conf.c_str(), nullptr};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Status::Unavailable("cannot start /usr/sbin/sshd");
    sshd_pids_.push_back(pid);

    // Wait (up to 5 s) until every address accepts; a port someone took meanwhile means retry.
    bool up = false, died = false;
    for (int i = 0; i < 250 && !up && !died; ++i) {
      up = true;
      for (const Endpoint& e : eps) up = up && Accepts(e);
      if (!up) {
        died = ::waitpid(pid, nullptr, WNOHANG) == pid;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (up) {
      endpoints_.insert(endpoints_.end(), eps.begin(), eps.end());
      return Status::Ok();
    }
    if (!died) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    sshd_pids_.pop_back();
    if (attempt == 3) return Status::Unavailable("sshd did not start: " + ReadFile(log));
  }
  return Status::Unavailable("sshd did not start");
}

SshdFixture::~SshdFixture() {
  KillSessions();
  guard_.RunNow();  // the watcher's script (SshdCleanupScript): the servers, then the directory
  for (pid_t pid : sshd_pids_) ::waitpid(pid, nullptr, 0);
}

std::vector<HostSpec> SshdFixture::Hosts(const std::string& known_hosts_file, int count) const {
  std::vector<HostSpec> hosts;
  const size_t n = count < 0 ? endpoints_.size() : std::min<size_t>(count, endpoints_.size());
  for (size_t i = 0; i < n; ++i) {
    HostSpec h;
    char name[32];
    std::snprintf(name, sizeof name, "host%02zu", i);
    h.name = name;
    h.address = endpoints_[i].address;
    h.port = endpoints_[i].port;
    h.user = kUser;
    h.identity_file = user_key();
    h.known_hosts_file = known_hosts_file;
    hosts.push_back(h);
  }
  return hosts;
}

Status SshdFixture::WriteKnownHosts(const std::string& path, const std::string& key) const {
  std::ofstream out(path);
  for (const Endpoint& e : endpoints_) {
    out << "[" << e.address << "]:" << e.port << " " << key << "\n";
  }
  return out ? Status::Ok() : Status::IoError("cannot write " + path);
}

Result<std::string> SshdFixture::NewKey(const std::string& name) const {
  const std::string path = dir_ + "/" + name;
  if (RunShell("ssh-keygen -q -t ed25519 -N '' -C rackchaos-test -f " + ShellQuote(path)) != 0) {
    return Status::Unavailable("ssh-keygen failed for " + path);
  }
  std::istringstream pub(ReadFile(path + ".pub"));
  std::string type, blob;
  pub >> type >> blob;
  return type + " " + blob;
}

std::vector<pid_t> SshdFixture::Descendants() const {
  std::multimap<pid_t, pid_t> children;  // ppid -> pid
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path() / "stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    children.emplace(ppid, std::stoi(name));
  }
  std::vector<pid_t> out, frontier = sshd_pids_;
  while (!frontier.empty()) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    auto [b, e] = children.equal_range(p);
    for (auto it = b; it != e; ++it) {
      out.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  return out;
}

int SshdFixture::KillSessions() { return SignalSessions(SIGKILL); }

int SshdFixture::SignalSessions(int signal) {
  const std::vector<pid_t> pids = Descendants();
  for (pid_t pid : pids) ::kill(pid, signal);
  return static_cast<int>(pids.size());
}

std::vector<std::string> Names(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> names;
  for (const HostSpec& h : hosts) names.push_back(h.name);
  return names;
}

void RunIoUntil(boost::asio::io_context& io, const std::function<bool()>& done, double limit_s) {
  const auto start = std::chrono::steady_clock::now();
  boost::asio::steady_timer tick(io);
  while (!done() && std::chrono::steady_clock::now() - start < std::chrono::duration<double>(limit_s)) {
    tick.expires_after(std::chrono::milliseconds(20));
    tick.async_wait([](boost::system::error_code) {});
    io.run_one();
  }
}

}  // namespace rackchaos::ssh::testing
