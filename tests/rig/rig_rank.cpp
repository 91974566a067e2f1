// rig-rank: one rank of the rig's synchronous workload, an all-reduce in miniature.
//
// Every step each rank computes (--work iterations of a fixed loop, so a CPU quota on its cgroup slows it like
// a power cap slows a GPU), then exchanges a buffer with its ring neighbours over TCP: it sends to rank
// r+1 and receives from rank r-1, and cannot start the next step before both are done. One slow or
// silent rank therefore holds up all of them, as in NCCL. A collective that makes no progress for
// --timeout seconds ends the rank with exit 3 (the watchdog).
//
// Every --ckpt-every steps the rank writes its step to <ckpt>/rank<R>; --start resumes from a step.
// A heartbeat thread rewrites <dir>/rank.status every 250 ms (tmp + rename):
//   heartbeat <unix seconds>
//   step <n> <compute seconds> <step seconds> <send seconds>   (the last finished step)
//   ckpt <n>
// <send seconds> is the rank's communication time: how long handing its chunk to the next rank took
// (the median of its last 5 steps). The send buffer is small, so a send completes only once most of
// the chunk has crossed the link: a rank behind a slow link (tc tbf on its tray) has the slow sends,
// while waiting for a slow peer shows in the step time of everyone.
// A plain program with no rackchaos code: the rig starts it on the trays through Slurm.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int rank = 0, size = 0, port = 7600, ckpt_every = 10, start = 0, timeout_s = 30, bytes = 65536;
  long work = 4000000;  // iterations per step: a few ms of one CPU
  double pace_ms = 200;
  std::vector<std::string> hosts;
  std::string dir = ".", ckpt = ".";
};

struct Status {
  std::mutex mu;
  long step = -1, ckpt = -1;
  double compute_s = 0, step_s = 0, send_s = 0;
};

[[noreturn]] void Die(const std::string& why, int code = 2) {
  std::fprintf(stderr, "rig-rank: %s\n", why.c_str());
  std::exit(code);
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--rank") o.rank = std::atoi(v.c_str());
    else if (k == "--port") o.port = std::atoi(v.c_str());
    else if (k == "--ckpt-every") o.ckpt_every = std::atoi(v.c_str());
    else if (k == "--start") o.start = std::atoi(v.c_str());
    else if (k == "--timeout") o.timeout_s = std::atoi(v.c_str());
    else if (k == "--bytes") o.bytes = std::atoi(v.c_str());
    else if (k == "--work") o.work = std::atol(v.c_str());
    else if (k == "--pace-ms") o.pace_ms = std::atof(v.c_str());
    else if (k == "--dir") o.dir = v;
    else if (k == "--ckpt") o.ckpt = v;
    else if (k == "--hosts") {
      std::stringstream s(v);
      for (std::string h; std::getline(s, h, ',');) o.hosts.push_back(h);
    } else Die("unknown option " + k);
  }
  o.size = static_cast<int>(o.hosts.size());
  if (o.size < 2 || o.rank < 0 || o.rank >= o.size) Die("need --hosts a,b[,...] and --rank in range");
  return o;
}

sockaddr_in Addr(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) Die("bad address " + host);
  return a;
}

// Listens on our address, connects to the next rank (retrying while it starts), accepts the previous.
void Connect(const Options& o, int& to_next, int& from_prev) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in me = Addr(o.hosts[o.rank], o.port);
  if (bind(ls, reinterpret_cast<sockaddr*>(&me), sizeof me) != 0 || listen(ls, 4) != 0)
    Die("cannot listen on " + o.hosts[o.rank] + ": " + std::strerror(errno));
  const sockaddr_in next = Addr(o.hosts[(o.rank + 1) % o.size], o.port);
  const auto deadline = Clock::now() + std::chrono::seconds(o.timeout_s);
  for (;;) {
    to_next = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(to_next, reinterpret_cast<const sockaddr*>(&next), sizeof next) == 0) break;
    close(to_next);
    if (Clock::now() > deadline) Die("collective timeout: cannot reach the next rank", 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  pollfd p{ls, POLLIN, 0};
  if (poll(&p, 1, o.timeout_s * 1000) <= 0) Die("collective timeout: the previous rank never connected", 3);
  from_prev = accept(ls, nullptr, nullptr);
  close(ls);
  setsockopt(to_next, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int sndbuf = 16384;  // the kernel doubles it: a send returns once all but ~32 KiB have been acknowledged
  setsockopt(to_next, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
}

// Sends `out` to the next rank while receiving as many bytes from the previous one; returns how long
// the send took. Exit 3 when neither direction moves for the timeout.
double Exchange(const Options& o, int to_next, int from_prev, const std::vector<char>& out, std::vector<char>& in) {
  const auto t0 = Clock::now();
  auto send_done = t0;
  size_t sent = 0, got = 0;
  while (sent < out.size() || got < in.size()) {
    pollfd p[2] = {{to_next, static_cast<short>(sent < out.size() ? POLLOUT : 0), 0},
                   {from_prev, static_cast<short>(got < in.size() ? POLLIN : 0), 0}};
    int n = poll(p, 2, o.timeout_s * 1000);
    if (n == 0) Die("collective timeout: no progress in " + std::to_string(o.timeout_s) + " s", 3);
    if (n < 0) Die(std::string("poll: ") + std::strerror(errno));
    if (p[0].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t k = send(to_next, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno != EAGAIN) Die(std::string("send: ") + std::strerror(errno), 3);
      if (k > 0) sent += static_cast<size_t>(k);
      if (sent == out.size()) send_done = Clock::now();
    }
    if (p[1].revents & (POLLIN | POLLERR | POLLHUP)) {
      ssize_t k = recv(from_prev, in.data() + got, in.size() - got, MSG_DONTWAIT);
      if (k == 0) Die("the previous rank closed its connection", 3);
      if (k < 0 && errno != EAGAIN) Die(std::string("recv: ") + std::strerror(errno), 3);
      if (k > 0) got += static_cast<size_t>(k);
    }
  }
  return std::chrono::duration<double>(send_done - t0).count();
}

// A fixed amount of CPU work (a dependent chain the compiler cannot shorten).
volatile double sink_value = 0;
void Work(long iterations) {
  double x = 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  sink_value = x;
}

void WriteStatus(const Options& o, Status& st) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    char buf[256];
    std::snprintf(buf, sizeof buf, "heartbeat %.3f\nstep %ld %.6f %.6f %.6f\nckpt %ld\n", UnixNow(), st.step,
                  st.compute_s, st.step_s, st.send_s, st.ckpt);
    text = buf;
  }
  const std::string tmp = o.dir + "/rank.status.tmp";
  std::ofstream(tmp) << text;
  std::rename(tmp.c_str(), (o.dir + "/rank.status").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // --bench: how many milliseconds a fixed amount of work takes here (the rig's tray diagnostic).
  if (argc == 2 && std::string(argv[1]) == "--bench") {
    auto t0 = Clock::now();
    Work(5000000);
    std::printf("%.1f\n", std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    return 0;
  }
  const Options o = Parse(argc, argv);
  Status st;
  st.step = o.start - 1;
  st.ckpt = o.start;
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    while (!done) {
      WriteStatus(o, st);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  heartbeat.detach();  // the process ends through exit(); the thread needs no join

  int to_next = -1, from_prev = -1;
  Connect(o, to_next, from_prev);
  std::vector<char> out(static_cast<size_t>(o.bytes), static_cast<char>(o.rank)), in(out.size());
  std::array<double, 5> sends{};  // the last 5 steps' send times, reported as their median
  for (long step = o.start;; ++step) {
    const auto t0 = Clock::now();
    Work(o.work);
    const auto t1 = Clock::now();
    sends[static_cast<size_t>(step - o.start) % sends.size()] = Exchange(o, to_next, from_prev, out, in);
    const size_t known = std::min(sends.size(), static_cast<size_t>(step - o.start + 1));
    std::array<double, 5> sorted = sends;
    std::sort(sorted.begin(), sorted.begin() + static_cast<long>(known));
    // Pace the job: a step is at least --pace-ms long, so the rig's ranks leave the CPU mostly idle.
    const auto min_end = t0 + std::chrono::microseconds(static_cast<long>(o.pace_ms * 1000));
    if (Clock::now() < min_end) std::this_thread::sleep_until(min_end);
    const auto t2 = Clock::now();
    {
      std::lock_guard<std::mutex> lock(st.mu);
      st.step = step;
      st.compute_s = std::chrono::duration<double>(t1 - t0).count();
      st.step_s = std::chrono::duration<double>(t2 - t0).count();
      st.send_s = sorted[known / 2];
    }
    if ((step + 1) % o.ckpt_every == 0) {
      std::ofstream(o.ckpt + "/rank" + std::to_string(o.rank)) << step + 1 << "\n";
      std::lock_guard<std::mutex> lock(st.mu);
      st.ckpt = step + 1;
    }
  }
}
