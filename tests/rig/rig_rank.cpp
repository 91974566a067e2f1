// rig-rank: one rank of the rig's synchronous workload, a ring all-reduce as NCCL runs it.
//
// Every step each rank computes, then all-reduces a buffer of --bytes (floats) with the other ranks over
// TCP: a reduce-scatter (n-1 rounds; in each the rank sends one chunk of n to rank r+1, receives one from
// rank r-1 and adds it into its own) then an all-gather (n-1 rounds passing the reduced chunks on), and
// checks the sum (a wrong one ends the rank with exit 4). It cannot start the next step before all
// 2(n-1) rounds are done, so one slow or silent rank holds up all of them, as in NCCL. A collective that
// makes no progress for --timeout seconds ends the rank with exit 3 (the watchdog).
//
// The compute phase stands for a GPU's: a fixed amount of CPU time (--work-ms of this thread's CPU), stretched to
// --compute-ms, divided by the tray's GPU speed. The speed is the simulator's: cluster::SpeedAtPower of
// the tray's power cap (<dir>/power_cap, written by `rig power set`) and the gb200-nvl72 model's TDP
// (tests/rig/rig_gpu_model.h), read every step. A cap of 300 W makes the phase 1/0.630 = 1.59x longer,
// as the simulator makes a capped GPU's compute; the step (compute + all-reduce) grows with it.
//
// Every --ckpt-every steps the rank writes its step to <ckpt>/rank<R>; --start resumes from a step.
// A heartbeat thread rewrites <dir>/rank.status every 250 ms (tmp + rename):
//   heartbeat <unix seconds>
//   step <n> <compute seconds> <step seconds> <send seconds>   (the last finished step)
//   ckpt <n>
// <send seconds> is the rank's communication time: how long handing its chunks to the next rank took in
// one step (all 2(n-1) rounds; the median of its last 5 steps). The send buffer is small, so a send
// completes only once most of its chunk has crossed the link: a rank behind a slow link (tc tbf on its
// tray) has the slow sends, while waiting for a slow peer shows in the step time of everyone.
// A plain program (the rackchaos code it links is only the GPU model): the rig starts it on the trays
// through Slurm.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/rig/rig_gpu_model.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int rank = 0, size = 0, port = 7600, ckpt_every = 10, start = 0, timeout_s = 30, bytes = 65536;
  // CPU time per step: the same share of a CPU on a fast machine and a slow one. Under rig:charge's quota of
  // 3 ms per 100 ms period, 15 ms span five periods and the step about doubles; 10 ms left the capped job
  // near the monitor's slow line (speed 0.66 one run, not slowed in another under CI's load).
  double work_ms = 15;
  double compute_ms = 180;  // the compute phase of an uncapped step (the rig's steps are ~200 ms)
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

// `text` as a number in [lo, hi], or Die naming the option: a rank that took "abc" as 0 or 1e300 ms of
// work per step would hang the rig instead of saying what was wrong.
double Number(const std::string& option, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || text.empty() || end != text.c_str() + text.size() || !(v >= lo && v <= hi))
    Die(option + " must be a number from " + std::to_string(static_cast<long long>(lo)) + " to " +
        std::to_string(static_cast<long long>(hi)) + ", not '" + text.substr(0, 40) + "'");
  return v;
}
int Whole(const std::string& option, const std::string& text, int lo, int hi) {
  const double v = Number(option, text, lo, hi);
  if (v != static_cast<double>(static_cast<int>(v))) Die(option + " must be a whole number, not '" + text.substr(0, 40) + "'");
  return static_cast<int>(v);
}

Options Parse(int argc, char** argv) {
  Options o;
  if (argc % 2 == 0) Die(std::string("option ") + argv[argc - 1] + " has no value");
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--rank") o.rank = Whole(k, v, 0, 4096);
    else if (k == "--port") o.port = Whole(k, v, 1, 65535);
    else if (k == "--ckpt-every") o.ckpt_every = Whole(k, v, 1, 1000000);
    else if (k == "--start") o.start = Whole(k, v, 0, 1000000000);
    else if (k == "--timeout") o.timeout_s = Whole(k, v, 1, 86400);
    else if (k == "--bytes") o.bytes = Whole(k, v, 4, 64 << 20);
    else if (k == "--work-ms") o.work_ms = Number(k, v, 0, 1000);
    else if (k == "--compute-ms") o.compute_ms = Number(k, v, 0, 60000);
    else if (k == "--dir") o.dir = v;
    else if (k == "--ckpt") o.ckpt = v;
    else if (k == "--hosts") {
      std::stringstream s(v);
      for (std::string h; std::getline(s, h, ',');) o.hosts.push_back(h);
    } else Die("unknown option " + k);
  }
  o.size = static_cast<int>(o.hosts.size());
  if (o.size < 2 || o.rank < 0 || o.rank >= o.size) Die("need --hosts a,b[,...] and --rank in range");
  if (o.bytes < static_cast<int>(sizeof(float)) * o.size) Die("--bytes must hold one float per rank");
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

// Sends `out` (`n` bytes) to the next rank while receiving `n` bytes from the previous one into `in`;
// returns how long the send took. Exit 3 when neither direction moves for the timeout.
double Exchange(const Options& o, int to_next, int from_prev, const char* out, char* in, size_t n) {
  const auto t0 = Clock::now();
  auto send_done = t0;
  size_t sent = 0, got = 0;
  while (sent < n || got < n) {
    pollfd p[2] = {{to_next, static_cast<short>(sent < n ? POLLOUT : 0), 0},
                   {from_prev, static_cast<short>(got < n ? POLLIN : 0), 0}};
    int ready = poll(p, 2, o.timeout_s * 1000);
    if (ready == 0) Die("collective timeout: no progress in " + std::to_string(o.timeout_s) + " s", 3);
    if (ready < 0) Die(std::string("poll: ") + std::strerror(errno));
    if (p[0].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t k = send(to_next, out + sent, n - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno != EAGAIN) Die(std::string("send: ") + std::strerror(errno), 3);
      if (k > 0) sent += static_cast<size_t>(k);
      if (sent == n) send_done = Clock::now();
    }
    if (p[1].revents & (POLLIN | POLLERR | POLLHUP)) {
      ssize_t k = recv(from_prev, in + got, n - got, MSG_DONTWAIT);
      if (k == 0) Die("the previous rank closed its connection", 3);
      if (k < 0 && errno != EAGAIN) Die(std::string("recv: ") + std::strerror(errno), 3);
      if (k > 0) got += static_cast<size_t>(k);
    }
  }
  return std::chrono::duration<double>(send_done - t0).count();
}

// The ring all-reduce (sum) of `data` (size() equal chunks); returns the time spent sending. After the
// reduce-scatter's n-1 rounds rank r holds the full sum of chunk (r + 1) mod n; the all-gather's n-1
// rounds hand the sums round the ring.
double AllReduce(const Options& o, int to_next, int from_prev, std::vector<float>& data, std::vector<float>& tmp) {
  const size_t n = static_cast<size_t>(o.size), per = data.size() / n, r = static_cast<size_t>(o.rank);
  auto chunk = [&](size_t c) { return data.data() + c * per; };
  auto bytes = [](float* p) { return reinterpret_cast<char*>(p); };
  double send_s = 0;
  for (size_t s = 0; s + 1 < n; ++s) {  // reduce-scatter
    const size_t out = (r + n - s) % n, in = (r + n - s - 1) % n;
    send_s += Exchange(o, to_next, from_prev, bytes(chunk(out)), bytes(tmp.data()), per * sizeof(float));
    for (size_t i = 0; i < per; ++i) chunk(in)[i] += tmp[i];
  }
  for (size_t s = 0; s + 1 < n; ++s) {  // all-gather
    const size_t out = (r + n + 1 - s) % n, in = (r + n - s) % n;
    send_s += Exchange(o, to_next, from_prev, bytes(chunk(out)), bytes(chunk(in)), per * sizeof(float));
  }
  return send_s;
}

// CPU work until this thread has used `cpu_ms` of CPU time (a dependent chain the compiler cannot
// shorten, the clock read every ~0.1 ms of it). Bounded by CPU time, not by a count of iterations, so a
// cgroup's quota slows it alike on any machine: 4 M iterations took 13-17 ms on one VM of this kind and
// 6 ms on a faster one, where a quota of 3 ms per 100 ms period (rig:charge) hardly slowed the ranks and a
// tenth of a CPU let the diag's benchmark through unthrottled (rig:observe).
volatile double sink_value = 0;
double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
void Work(double cpu_ms) {
  const double until = ThreadCpuMs() + cpu_ms;
  double x = 1.0;
  do {
    for (int i = 0; i < 50000; ++i) x = x * 1.0000001 + 1e-9;
  } while (ThreadCpuMs() < until);
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
  // --bench: how many milliseconds of wall time 40 ms of CPU work takes here (the rig's tray diagnostic):
  // about 40 unless a quota (or a busy machine) holds it back. 40 ms outgrow a tenth of a CPU's 10 ms per
  // 100 ms period four times over.
  if (argc == 2 && std::string(argv[1]) == "--bench") {
    auto t0 = Clock::now();
    Work(40);
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
  const size_t per = static_cast<size_t>(o.bytes) / sizeof(float) / static_cast<size_t>(o.size);  // floats a chunk
  std::vector<float> data(per * static_cast<size_t>(o.size)), tmp(per);
  std::array<double, 5> sends{};  // the last 5 steps' send times, reported as their median
  for (long step = o.start;; ++step) {
    const auto t0 = Clock::now();
    Work(o.work_ms);
    // The GPU's compute phase: at least --compute-ms, at the speed the tray's power cap leaves.
    const double worked_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const double speed = std::max(rackchaos::rig::ReadTray(o.dir, UnixNow()).speed, 1e-3);
    const double phase_s = std::max(worked_s, o.compute_ms / 1000) / speed;
    std::this_thread::sleep_until(t0 + std::chrono::microseconds(static_cast<long>(phase_s * 1e6)));
    const auto t1 = Clock::now();
    // Rank r contributes r + 1 + (step mod 5) to every element: the sum is known, and checked.
    const float mine = static_cast<float>(o.rank + 1 + step % 5);
    std::fill(data.begin(), data.end(), mine);
    sends[static_cast<size_t>(step - o.start) % sends.size()] = AllReduce(o, to_next, from_prev, data, tmp);
    const float want = static_cast<float>(o.size * (o.size + 1) / 2 + o.size * (step % 5));
    for (float v : data)
      if (v != want) Die("all-reduce of step " + std::to_string(step) + " gave " + std::to_string(v) + ", not " +
                         std::to_string(want), 4);
    const size_t known = std::min(sends.size(), static_cast<size_t>(step - o.start + 1));
    std::array<double, 5> sorted = sends;
    std::sort(sorted.begin(), sorted.begin() + static_cast<long>(known));
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
