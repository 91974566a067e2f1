// Test and benchmark helpers that start real services on loopback: a child process that is always
// ended (SIGTERM, then SIGKILL; and PR_SET_PDEATHSIG, so a crashed test leaves nothing behind), a free
// loopback port, a static file server (python3 -m http.server) and Debian's prometheus scraping it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rackchaos::testing {

class ChildProcess {
 public:
  ChildProcess() = default;
  // Starts `argv` with stdout and stderr to `log` (appended; "/dev/null" for none).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log) { Start(argv, log); }
  ~ChildProcess() { Kill(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void Start(const std::vector<std::string>& argv, const std::string& log) {
    Kill();
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      execv(args[0], args.data());
      _exit(127);
    }
  }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  // SIGTERM, up to 10 s to exit, then SIGKILL. Idempotent.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

inline int FreeLoopbackPort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(s);
    throw std::runtime_error("no free loopback port");
  }
  close(s);
  return ntohs(a.sin_port);
}

// True once something accepts connections on 127.0.0.1:`port`, polling for up to `limit`.
inline bool WaitForPort(int port, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(s);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

inline std::string FindProgram(const std::string& name) {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// python3's static file server on 127.0.0.1:`port` over `dir`: each file is a scrape target
// (/tray07.prom), read afresh on every request.
inline void StartFileServer(ChildProcess& p, const std::string& dir, int port, const std::string& log) {
  p.Start({FindProgram("python3"), "-m", "http.server", std::to_string(port), "--bind", "127.0.0.1", "--directory", dir},
          log);
}

// Debian's prometheus on 127.0.0.1:`port` with `config`, its data in `data`.
inline void StartPrometheus(ChildProcess& p, const std::string& config, const std::string& data, int port,
                            const std::string& log) {
  p.Start({FindProgram("prometheus"), "--config.file=" + config, "--storage.tsdb.path=" + data,
           "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
          log);
}

// A scrape config: every `paths` entry a job of its own on 127.0.0.1:`target_port`, scraped every
// `interval` ("1s").
inline std::string PrometheusConfig(int target_port, const std::vector<std::string>& paths, const std::string& interval) {
  std::string s = "global:\n  scrape_interval: " + interval + "\n  scrape_timeout: " + interval +
                  "\n  evaluation_interval: " + interval + "\nscrape_configs:\n";
  for (const std::string& path : paths) {
    std::string job = std::filesystem::path(path).stem().string();
    s += "  - job_name: '" + job + "'\n    metrics_path: '" + path + "'\n    static_configs:\n      - targets: ['127.0.0.1:" +
         std::to_string(target_port) + "']\n";
  }
  return s;
}

}  // namespace rackchaos::testing
