#include "bench/ssh/bench_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace rackchaos::bench {
namespace {

double Ms(const timeval& user, const timeval& sys) {
  return (user.tv_sec + sys.tv_sec) * 1e3 + (user.tv_usec + sys.tv_usec) / 1e3;
}

struct Proc {
  pid_t ppid = 0;
  std::string comm;
  double own_ms = 0;       // schedstat: time on a CPU, this process's threads
  double children_ms = 0;  // stat: cutime + cstime, its reaped children
};

// One /proc/<pid> entry; false when the process went away while it was read.
bool ReadProc(const std::string& dir, Proc* p) {
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // The command name is in parentheses and may hold spaces or ')'; the fields follow the last ')'.
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return false;
  p->comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  std::vector<std::string> f;
  while (rest >> field && f.size() < 16) f.push_back(field);
  if (f.size() < 16) return false;
  p->ppid = std::stoi(f[1]);
  static const double kTickMs = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  p->children_ms = (std::stod(f[13]) + std::stod(f[14])) * kTickMs;  // cutime, cstime (fields 16, 17)
  std::ifstream sched(dir + "/schedstat");
  double ns = 0;
  if (sched >> ns) {
    p->own_ms = ns / 1e6;
  } else {
    p->own_ms = (std::stod(f[11]) + std::stod(f[12])) * kTickMs;  // utime, stime
  }
  return true;
}

std::string CommandLine(const std::string& dir) {
  std::ifstream in(dir + "/cmdline");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

}  // namespace

double Quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

std::vector<double> Skews(const std::vector<int64_t>& stamps_us) {
  std::vector<double> out;
  if (stamps_us.empty()) return out;
  const int64_t first = *std::min_element(stamps_us.begin(), stamps_us.end());
  for (int64_t s : stamps_us) out.push_back(static_cast<double>(s - first) / 1000.0);
  return out;
}

std::vector<int64_t> NanoStamps(const std::string& text) {
  std::vector<int64_t> out;
  static const std::regex kStamp("\\b(1[0-9]{18})\\b");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kStamp); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoll((*it)[1]) / 1000);
  return out;
}

int64_t UnixMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double SelfCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return Ms(u.ru_utime, u.ru_stime);
}

double ChildrenCpuMs() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return Ms(u.ru_utime, u.ru_stime);
}

double TreeCpuMs(const std::string& comm, const std::string& text) {
  std::map<pid_t, Proc> procs;
  std::vector<pid_t> roots;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    Proc p;
    if (!ReadProc(entry.path(), &p)) continue;
    const pid_t pid = std::stoi(name);
    // Only the roots' command lines are read: the sessions' sshd rewrite theirs ("sshd: user@notty").
    if (p.comm == comm && CommandLine(entry.path()).find(text) != std::string::npos) roots.push_back(pid);
    procs.emplace(pid, p);
  }
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, p] : procs) children.emplace(p.ppid, pid);
  // A session's sshd keeps the listener's command line until it renames itself, so it can be both a
  // root and a listener's descendant: each process counts once.
  std::set<pid_t> seen;
  double total = 0;
  std::vector<pid_t> todo = roots;
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    if (!seen.insert(pid).second) continue;
    total += procs[pid].own_ms + procs[pid].children_ms;
    for (auto [it, end] = children.equal_range(pid); it != end; ++it) todo.push_back(it->second);
  }
  return total;
}

double SettledTreeCpuMs(const std::string& comm, const std::string& text) {
  double last = TreeCpuMs(comm, text);
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double now = TreeCpuMs(comm, text);
    if (now - last < 2) return now;
    last = now;
  }
  return last;
}

}  // namespace rackchaos::bench
