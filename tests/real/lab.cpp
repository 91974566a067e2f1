#include "tests/real/lab.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "runner/ssh/command_template.h"

namespace rackchaos::runner::testing {
namespace fs = std::filesystem;
using ssh::testing::RunShell;
using ssh::testing::SshdFixture;

namespace {

constexpr const char* kFakeNvidiaSmi = R"(#!/bin/sh
# Fake nvidia-smi for the loopback lab: -i N, then -pl W (set) or --query-gpu=... (print the limit).
state="${RCLAB_STATE:?RCLAB_STATE is not set}"
gpu=0; pl=""
while [ $# -gt 0 ]; do
  case "$1" in
    -i) gpu=$2; shift 2;;
    -pl) pl=$2; shift 2;;
    *) shift;;
  esac
done
case "$gpu" in ''|*[!0-9]*) echo "Invalid GPU index: $gpu" >&2; exit 2;; esac
f="$state/gpu$gpu.power_limit"
[ -f "$f" ] || echo 1200.00 > "$f"
if [ -n "$pl" ]; then
  case "$pl" in *[!0-9.]*) echo "Invalid power limit: $pl" >&2; exit 2;; esac
  old=$(cat "$f")
  printf '%.2f\n' "$pl" > "$f"
  echo "Power limit for GPU $gpu was set to $pl W from $old W."
  exit 0
fi
cat "$f"
)";

void Replace(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

}  // namespace

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::unique_ptr<Lab>> Lab::Start() {
  std::unique_ptr<Lab> lab(new Lab());
  RC_ASSIGN_OR_RETURN(lab->sshd_, SshdFixture::Start(2));
  RC_RETURN_IF_ERROR(lab->Build());
  return lab;
}

std::string LabCleanupScript(const std::string& dir, const std::string& netns) {
  std::string s;
  if (!dir.empty()) s += ssh::testing::KillMentioning(dir) + "; ";
  if (!netns.empty()) s += "ip netns del " + ssh::ShellQuote(netns) + " 2>/dev/null; ";
  if (!dir.empty()) s += "rm -rf -- " + ssh::ShellQuote(dir) + "; ";
  return s + "true";
}

int RemoveOldFormatLabs(const std::string& dir, std::chrono::seconds idle) {
  constexpr std::string_view kPrefix = "rclab-";
  const auto cutoff = fs::file_time_type::clock::now() - idle;
  std::vector<std::string> stale;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != kPrefix.size() + 6 || name.compare(0, kPrefix.size(), kPrefix) != 0 ||
        name.find('-', kPrefix.size()) != std::string::npos || !entry.is_directory(ec) || entry.is_symlink(ec))
      continue;
    auto newest = fs::last_write_time(entry.path(), ec);
    for (auto it = fs::recursive_directory_iterator(entry.path(), fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code unreadable;  // a dangling link: no time, not a reason to keep the lab
      const auto t = fs::last_write_time(it->path(), unreadable);
      if (!unreadable) newest = std::max(newest, t);
    }
    if (!ec && newest < cutoff) stale.push_back(entry.path().string());
  }
  for (const std::string& path : stale) ssh::testing::RunScript(LabCleanupScript(path, ""));
  return static_cast<int>(stale.size());
}

Status Lab::Build() {
  // Labs of test processes that are gone: their directories (and what mentions them), their namespaces.
  ssh::testing::RemoveStale("/tmp", "rclab-", false, [](const std::string& d) { return LabCleanupScript(d, ""); });
  ssh::testing::RemoveStale("/run/netns", "rclab", true, [](const std::string& ns) {
    return LabCleanupScript("", fs::path(ns).filename().string());
  });
  // Labs of the format before the pid was in the name: once per test process is enough.
  static std::once_flag old_format_once;
  std::call_once(old_format_once, [] { RemoveOldFormatLabs("/tmp", std::chrono::hours(1)); });
  tag_ = std::to_string(::getpid());
  netns_ = "rclab" + tag_;
  std::string tmpl = "/tmp/rclab-" + tag_ + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return Status::IoError("mkdtemp failed");
  dir_ = tmpl;
  RC_ASSIGN_OR_RETURN(guard_, ssh::testing::CleanupGuard::Arm(LabCleanupScript(dir_, netns_)));
  ::chmod(dir_.c_str(), 0755);
  const passwd* pw = getpwnam(SshdFixture::kUser);
  if (!pw) return Status::Unavailable("no test user");

  // Links: veth pairs inside the lab's own namespace, all up.
  RunShell("ip netns del " + netns_ + " 2>/dev/null");
  if (RunShell("ip netns add " + netns_) != 0) return Status::Unavailable("ip netns add failed (root needed)");
  for (char t : {'a', 'b'}) {
    for (int n = 0; n < 2; ++n) {
      const std::string i = Iface(t, n);
      if (RunShell("ip -n " + netns_ + " link add " + i + " type veth peer name " + i + "p && ip -n " + netns_ +
                   " link set " + i + " up && ip -n " + netns_ + " link set " + i + "p up") != 0)
        return Status::Unavailable("cannot create veth " + i);
    }
  }
  // The setuid wrapper, in a directory only root and the SSH user can enter.
  fs::create_directories(dir_ + "/priv");
  fs::copy_file(RCLAB_IP, dir_ + "/priv/rclab-ip");
  if (::chown((dir_ + "/priv").c_str(), 0, pw->pw_gid) != 0 || ::chmod((dir_ + "/priv").c_str(), 0750) != 0 ||
      ::chown((dir_ + "/priv/rclab-ip").c_str(), 0, 0) != 0 || ::chmod((dir_ + "/priv/rclab-ip").c_str(), 04755) != 0)
    return Status::IoError("cannot install rclab-ip");
  // The fake nvidia-smi and per-host state.
  fs::create_directories(dir_ + "/bin");
  std::ofstream(dir_ + "/bin/nvidia-smi") << kFakeNvidiaSmi;
  ::chmod((dir_ + "/bin/nvidia-smi").c_str(), 0755);
  for (const char* h : {"host00", "host01"}) {
    const std::string state = dir_ + "/state/" + h;
    fs::create_directories(state);
    if (::chown(state.c_str(), pw->pw_uid, pw->pw_gid) != 0) return Status::IoError("chown " + state);
  }
  return Status::Ok();
}

// The watcher's script (LabCleanupScript): processes the hosts left behind (host-side expiry timers)
// mention the lab directory; then the namespace and the directory.
Lab::~Lab() { guard_.RunNow(); }

std::string Lab::Iface(char tray, int n) const { return "rc" + tag_ + tray + std::to_string(n); }

std::string Lab::WriteInventory(const std::string& name, const std::string& grace, const std::string& known_hosts,
                                const std::vector<std::pair<std::string, std::string>>& edits) const {
  std::string text = ReadText(std::string(RACKCHAOS_SOURCE_DIR) + "/sites/loopback-lab.yaml");
  for (const auto& [from, to] : edits) Replace(text, from, to);
  const auto& eps = sshd_->endpoints();
  Replace(text, "@GRACE@", grace);
  Replace(text, "@USER@", SshdFixture::kUser);
  Replace(text, "@KEY@", sshd_->user_key());
  Replace(text, "@KNOWN_HOSTS@", known_hosts.empty() ? sshd_->known_hosts() : known_hosts);
  Replace(text, "@LAB@", dir_);
  Replace(text, "@TAG@", tag_);
  for (size_t i = 0; i < eps.size(); ++i) {
    Replace(text, "@ADDR" + std::to_string(i) + "@", eps[i].address);
    Replace(text, "@PORT" + std::to_string(i) + "@", std::to_string(eps[i].port));
  }
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string Lab::WritePlan(const std::string& name, const std::string& inventory, const std::string& faults) const {
  const std::string path = dir_ + "/plan-" + name + ".yaml";
  std::ofstream(path) << "name: " << name << "\ncluster: {model: gb200-nvl72, racks: 1, inventory: "
                      << fs::path(inventory).filename().string() << "}\nfaults:\n"
                      << faults;
  return path;
}

bool Lab::LinkUp(const std::string& iface) const {
  std::string out;
  RunShell("ip -n " + netns_ + " -o link show dev " + iface + " 2>/dev/null", &out);
  return out.find("<UP") != std::string::npos || out.find(",UP,") != std::string::npos ||
         out.find(",UP>") != std::string::npos;
}

std::string Lab::PowerLimit(int host, int gpu) const {
  char h[16];
  std::snprintf(h, sizeof h, "host%02d", host);
  std::string v = ReadText(dir_ + "/state/" + h + "/gpu" + std::to_string(gpu) + ".power_limit");
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v.empty() ? "1200.00" : v;
}

pid_t SpawnRackchaos(const std::vector<std::string>& args, const std::string& log) {
  const std::string binary = std::string(RACKCHAOS_BINARY_DIR) + "/rackchaos";
  std::vector<const char*> argv = {binary.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, const_cast<char**>(argv.data()), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int WaitExit(pid_t pid, double seconds) {
  int status = 0;
  const bool done = WaitFor([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, seconds);
  if (!done) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool WaitFor(const std::function<bool()>& cond, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace rackchaos::runner::testing
