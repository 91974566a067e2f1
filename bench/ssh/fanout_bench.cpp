// SSH fan-out benchmark: one command on N loopback sshd endpoints at once.
//
//   [FIRE_LEAD_MS=300] [ARMED_APPLY=:] [PRINT_INSTANTS=1] ssh_fanout_bench [hosts=256] [rounds=5] [--no-compare | --armed-only]
//
// Starts N endpoints (16 per sshd) and measures, for rackchaos' SshPool:
//   cold   - a new pool each round: connect + key exchange + host key check + auth + run `true`;
//   pooled - `true` on every host over sessions that are already open;
//   armed  - the command already started on every host (SshPool::ArmAll), timing only the release:
//            released now (FireAll), or told to run at an instant 300 ms ahead (FireAt, as real runs);
// and, when installed, `pdsh -R ssh -f N` and `parallel-ssh -p N` running `true` (both start one
// OpenSSH client per host, so they pay the cold cost every time). Start skew is measured twice:
// on this side (when each exec request was sent) and on the hosts (`date +%s%N` as the command, or
// for armed rounds the gate's own $EPOCHREALTIME stamps just before and after the apply).
// --armed-only runs only the armed-at-T rounds and ends with one LANDING SKEW line: the figure
// issue #4 targets (p99 of the hosts' landing stamps, 50 ms), with the load average around it.
// Must run as root (the fixture creates the test user and starts sshd). Loopback only.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "runner/ssh/ssh_pool.h"
#include "tests/ssh/sshd_fixture.h"

namespace {

using rackchaos::ssh::CommandResult;
using rackchaos::ssh::HostSpec;
using rackchaos::ssh::SshPool;
using rackchaos::ssh::testing::SshdFixture;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time (user + system) this process used so far, in milliseconds.
double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

// The p-quantile (0..1) of `v` by nearest rank; 0 for an empty vector.
double Quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

// Offsets of each stamp from the earliest one, in milliseconds.
std::vector<double> Skews(const std::vector<int64_t>& stamps_us) {
  std::vector<double> out;
  if (stamps_us.empty()) return out;
  const int64_t first = *std::min_element(stamps_us.begin(), stamps_us.end());
  for (int64_t s : stamps_us) out.push_back(static_cast<double>(s - first) / 1000.0);
  return out;
}

int64_t UnixMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every 19-digit number in `text` (date +%s%N), as microseconds.
std::vector<int64_t> NanoStamps(const std::string& text) {
  std::vector<int64_t> out;
  static const std::regex kStamp("\\b(1[0-9]{18})\\b");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kStamp);
       it != std::sregex_iterator(); ++it) {
    out.push_back(std::stoll((*it)[1]) / 1000);
  }
  return out;
}

struct Round {
  double wall_ms = 0;
  double submit_ms = 0;      // inside Run(): every session's channel-open request written
  double submit_cpu_ms = 0;  // CPU this process used for that
  int failed = 0;
  std::vector<double> local_skew_ms, remote_skew_ms;
  std::vector<double> late_ms;  // FireAt rounds: each host's landing after the instant it was given
  std::vector<double> gate_skew_ms;  // armed rounds: the gate's own landing stamps (what real runs record)
  std::vector<double> end_skew_ms;   // armed rounds: the gate's stamps of the apply's end
};

// Pooled armed-round figures, kept for the summary line of --armed-only.
struct Landing {
  double p50 = 0, p99 = 0, max = 0, end_p99 = 0;
  size_t stamps = 0;
  std::vector<double> round_p99;  // each round's own p99 (one load burst spoils one round, not all)
};

Landing Print(const char* name, const std::vector<Round>& rounds) {
  std::vector<double> walls, submits, submit_cpu, local, remote, late, gate, end;
  int failed = 0;
  for (const Round& r : rounds) {
    walls.push_back(r.wall_ms);
    submits.push_back(r.submit_ms);
    submit_cpu.push_back(r.submit_cpu_ms);
    local.insert(local.end(), r.local_skew_ms.begin(), r.local_skew_ms.end());
    remote.insert(remote.end(), r.remote_skew_ms.begin(), r.remote_skew_ms.end());
    late.insert(late.end(), r.late_ms.begin(), r.late_ms.end());
    gate.insert(gate.end(), r.gate_skew_ms.begin(), r.gate_skew_ms.end());
    end.insert(end.end(), r.end_skew_ms.begin(), r.end_skew_ms.end());
    failed += r.failed;
  }
  std::printf(
      "%-26s wall median %8.1f ms (min %8.1f, max %8.1f), submit %5.1f ms (cpu %5.1f) | start skew "
      "p50/p99/max: local %6.1f/%6.1f/%6.1f ms, remote %7.1f/%7.1f/%7.1f ms | failed %d\n",
      name, Quantile(walls, 0.5), Quantile(walls, 0), Quantile(walls, 1), Quantile(submits, 0.5),
      Quantile(submit_cpu, 0.5), Quantile(local, 0.5), Quantile(local, 0.99), Quantile(local, 1),
      Quantile(remote, 0.5), Quantile(remote, 0.99), Quantile(remote, 1), failed);
  if (!late.empty())
    std::printf("%-26s landing after the instant p50/p99/max %6.1f/%6.1f/%6.1f ms\n", "", Quantile(late, 0.5),
                Quantile(late, 0.99), Quantile(late, 1));
  if (!gate.empty())
    std::printf("%-26s landing skew (hosts' stamps just before the apply) p50/p99/max %6.1f/%6.1f/%6.1f ms\n", "",
                Quantile(gate, 0.5), Quantile(gate, 0.99), Quantile(gate, 1));
  if (!end.empty())
    std::printf("%-26s apply end skew (hosts' stamps just after the apply) p50/p99/max %6.1f/%6.1f/%6.1f ms\n", "",
                Quantile(end, 0.5), Quantile(end, 0.99), Quantile(end, 1));
  Landing landing{Quantile(gate, 0.5), Quantile(gate, 0.99), Quantile(gate, 1), Quantile(end, 0.99), gate.size(), {}};
  for (const Round& r : rounds)
    if (!r.gate_skew_ms.empty()) landing.round_p99.push_back(Quantile(r.gate_skew_ms, 0.99));
  return landing;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

Round Measure(boost::asio::io_context& io, SshPool& pool, const std::vector<std::string>& names,
              const std::string& command) {
  Round round;
  std::vector<CommandResult> results;
  const auto start = Clock::now();
  const double cpu_before = CpuMs();
  pool.Run(names, command, [&](CommandResult r) { results.push_back(std::move(r)); });
  round.submit_ms = Ms(Clock::now() - start);
  round.submit_cpu_ms = CpuMs() - cpu_before;
  while (results.size() < names.size() && io.run_one() > 0) {
  }
  round.wall_ms = Ms(Clock::now() - start);
  std::vector<int64_t> local, remote;
  for (const CommandResult& r : results) {
    if (!r.status.ok() || r.exit_status != 0) {
      if (round.failed++ == 0)
        std::fprintf(stderr, "  %s: %s\n", r.host.c_str(), r.status.ToString().c_str());
      continue;
    }
    local.push_back(r.start_wall_us);
    for (int64_t s : NanoStamps(r.out)) remote.push_back(s);
  }
  round.local_skew_ms = Skews(local);
  round.remote_skew_ms = Skews(remote);
  return round;
}

std::vector<Round> RackchaosCold(const std::vector<HostSpec>& hosts, int rounds,
                                 const std::string& cmd) {
  std::vector<std::string> names;
  for (const HostSpec& h : hosts) names.push_back(h.name);
  std::vector<Round> out;
  for (int i = 0; i < rounds; ++i) {
    boost::asio::io_context io;
    SshPool pool(io);
    if (!pool.AddHosts(hosts).ok()) std::abort();
    out.push_back(Measure(io, pool, names, cmd));  // each Run connects first
  }
  return out;
}

std::vector<Round> RackchaosPooled(const std::vector<HostSpec>& hosts, int rounds,
                                   const std::string& cmd) {
  boost::asio::io_context io;
  SshPool pool(io);
  const rackchaos::Status s = pool.ConnectAll(hosts);
  if (!s.ok()) std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
  std::vector<std::string> names = pool.HostNames();
  Measure(io, pool, names, "true");  // warm-up
  std::vector<Round> out;
  for (int i = 0; i < rounds; ++i) out.push_back(Measure(io, pool, names, cmd));
  return out;
}

// Armed: the command is started on every host ahead of time (SshPool::ArmAll) and each round
// measures only the release, as a real run lands a fault armed before its time. `lead` 0 releases
// it now (FireAll: one write per host, each host runs it on receipt); otherwise every host is told
// to run it `lead` from now on its own clock (FireAt, as real runs), and `late_ms` says how long
// after that instant each one landed. With PRINT_INSTANTS set, each instant is printed on
// CLOCK_MONOTONIC (for `perf record -k CLOCK_MONOTONIC` windows).
std::vector<Round> RackchaosArmed(const std::vector<HostSpec>& hosts, int rounds, const std::string& cmd,
                                  std::chrono::milliseconds lead) {
  boost::asio::io_context io;
  SshPool pool(io, rackchaos::ssh::PoolOptions{.max_concurrent = static_cast<int>(hosts.size())});
  const rackchaos::Status s = pool.ConnectAll(hosts);
  if (!s.ok()) std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
  const std::vector<std::string> names = pool.HostNames();
  std::vector<Round> out;
  for (int i = 0; i < rounds; ++i) {
    std::shared_ptr<SshPool::Armed> armed;
    const rackchaos::Status a = pool.ArmAll(names, cmd, armed);
    if (!a.ok()) std::fprintf(stderr, "arm: %s\n", a.ToString().c_str());
    Round round;
    // The 256 "hosts" share this machine's cores with the runner: without priority the shells that
    // wake on the first releases preempt the loop writing the rest (real hosts have their own CPUs).
    // Released at an instant, the writes are not on the critical path: no priority change.
    const int niceness = getpriority(PRIO_PROCESS, 0);
    if (lead.count() == 0) setpriority(PRIO_PROCESS, 0, -15);
    const auto start = Clock::now();
    const double cpu_before = CpuMs();
    const int64_t lead_us = std::chrono::duration_cast<std::chrono::microseconds>(lead).count();
    const int64_t instant = UnixMicrosNow() + lead_us;
    if (lead.count() != 0 && std::getenv("PRINT_INSTANTS"))
      std::printf("instant %.6f s CLOCK_MONOTONIC\n",
                  std::chrono::duration<double>(start.time_since_epoch()).count() + lead_us / 1e6);
    const std::vector<CommandResult> results = lead.count() == 0 ? pool.FireAll(*armed) : pool.FireAt(*armed, instant);
    setpriority(PRIO_PROCESS, 0, niceness);
    round.wall_ms = Ms(Clock::now() - start) - static_cast<double>(lead.count());
    round.submit_cpu_ms = CpuMs() - cpu_before;
    std::vector<int64_t> local, remote, gate, end;
    for (const CommandResult& r : results) {
      if (!r.status.ok() || r.exit_status != 0) {
        if (round.failed++ == 0) std::fprintf(stderr, "  %s: %s\n", r.host.c_str(), r.status.ToString().c_str());
        continue;
      }
      local.push_back(r.start_wall_us);
      if (r.landed_wall_us != 0) gate.push_back(r.landed_wall_us);
      if (r.apply_end_wall_us != 0) end.push_back(r.apply_end_wall_us);
      if (r.landed_wall_us == 0 || r.apply_end_wall_us == 0) ++round.failed;  // a lost stamp is a failure here
      for (int64_t stamp : NanoStamps(r.out)) remote.push_back(stamp);
    }
    if (lead.count() != 0)
      for (int64_t stamp : gate) round.late_ms.push_back(static_cast<double>(stamp - instant) / 1000.0);
    round.local_skew_ms = Skews(local);
    round.remote_skew_ms = Skews(remote);
    round.gate_skew_ms = Skews(gate);
    round.end_skew_ms = Skews(end);
    out.push_back(round);
  }
  return out;
}

// An OpenSSH client config naming every endpoint e000.. with its address and port.
std::string WriteSshConfig(const SshdFixture& sshd, std::string* host_list) {
  const std::string path = sshd.dir() + "/ssh_config";
  std::ofstream out(path);
  for (size_t i = 0; i < sshd.endpoints().size(); ++i) {
    char alias[16];
    std::snprintf(alias, sizeof alias, "e%03zu", i % 1000);
    out << "Host " << alias << "\n  HostName " << sshd.endpoints()[i].address << "\n  Port "
        << sshd.endpoints()[i].port << "\n";
    if (!host_list->empty()) *host_list += ',';
    *host_list += alias;
  }
  out << "Host *\n  User " << SshdFixture::kUser << "\n  IdentityFile " << sshd.user_key()
      << "\n  IdentitiesOnly yes\n  UserKnownHostsFile " << sshd.known_hosts()
      << "\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
      << "  LogLevel ERROR\n";
  return path;
}

std::vector<Round> External(const std::string& shell_command, int rounds, size_t hosts) {
  std::vector<Round> out;
  for (int i = 0; i < rounds; ++i) {
    Round round;
    std::string output;
    const auto start = Clock::now();
    const int rc = rackchaos::ssh::testing::RunShell(shell_command + " 2>&1", &output);
    round.wall_ms = Ms(Clock::now() - start);
    const std::vector<int64_t> stamps = NanoStamps(output);
    round.remote_skew_ms = Skews(stamps);
    if (rc != 0 || stamps.size() != hosts)
      round.failed = static_cast<int>(hosts - std::min(hosts, stamps.size())) + (rc != 0);
    if (round.failed && i == 0) std::fprintf(stderr, "  rc %d: %.300s\n", rc, output.c_str());
    out.push_back(round);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string mode = argc > 3 ? argv[3] : "";
  const bool armed_only = mode == "--armed-only";  // only the armed rounds (the landing skew)
  const bool compare = mode.empty();
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  auto sshd = SshdFixture::Start(n);
  if (!sshd.ok()) {
    std::fprintf(stderr, "fixture: %s\n", sshd.status().ToString().c_str());
    return 1;
  }
  const std::vector<HostSpec> hosts = (*sshd)->Hosts((*sshd)->known_hosts());
  const std::string stamp = "date +%s%N";
  std::printf(
      "%d endpoints on %d sshd processes, %d rounds each (the date +%%s%%N runs give the remote "
      "skew)\n",
      n, (n + 15) / 16, rounds);

  if (!armed_only) {
    Print("rackchaos cold `true`", RackchaosCold(hosts, rounds, "true"));
    Print("rackchaos cold `date`", RackchaosCold(hosts, rounds, stamp));
    Print("rackchaos pooled `true`", RackchaosPooled(hosts, rounds * 4, "true"));
    Print("rackchaos pooled `date`", RackchaosPooled(hosts, rounds * 4, stamp));
  }
  // The applies: `:` is a bash builtin (the landing alone); `ip link show` execs a process, as a
  // real apply (`ip link set ... down`) does, but changes nothing. `date` prints when a new process
  // got to run on the host (the remote skew of the fired-now rounds).
  // ARMED_APPLY replaces `:` (e.g. 'echo x >&2; exit 0' writes and exits at the instant, as the gate
  // did before it deferred its stamp and exit past the landing window).
  const char* apply_env = std::getenv("ARMED_APPLY");
  const std::string builtin = apply_env ? apply_env : ":", exec_apply = "ip link show dev lo >/dev/null";
  const char* lead_env = std::getenv("FIRE_LEAD_MS");  // how far ahead the instant is (default 300 ms)
  const std::chrono::milliseconds now{0}, lead{lead_env ? std::atoi(lead_env) : 300};
  if (!armed_only) {
    Print("rackchaos armed `true`", RackchaosArmed(hosts, rounds * 4, "true", now));
    Print("rackchaos armed `date`", RackchaosArmed(hosts, rounds * 4, stamp, now));
  }
  const std::string load_before = LoadAverage();
  const Landing at_t = Print(("armed at T, apply `" + builtin.substr(0, 12) + "`").c_str(), RackchaosArmed(hosts, rounds * 4, builtin, lead));
  const Landing at_t_exec = Print("armed at T, apply `ip link`", RackchaosArmed(hosts, rounds * 4, exec_apply, lead));
  std::printf(
      "LANDING SKEW p99 over %d hosts (%zu stamps): %.1f ms with a builtin apply (p50 %.1f, max %.1f; rounds' "
      "own p99 min/median/max %.1f/%.1f/%.1f, %zu of %zu rounds over 50 ms; applied %.1f), %.1f ms with an exec'd "
      "apply (applied %.1f); target 50 ms; load average %s before, %s after\n",
      n, at_t.stamps, at_t.p99, at_t.p50, at_t.max, Quantile(at_t.round_p99, 0), Quantile(at_t.round_p99, 0.5),
      Quantile(at_t.round_p99, 1),
      static_cast<size_t>(std::count_if(at_t.round_p99.begin(), at_t.round_p99.end(), [](double v) { return v > 50; })),
      at_t.round_p99.size(), at_t.end_p99, at_t_exec.p99, at_t_exec.end_p99, load_before.c_str(), LoadAverage().c_str());

  std::string list;
  const std::string config = WriteSshConfig(**sshd, &list);
  const std::string N = std::to_string(n);
  if (compare && rackchaos::ssh::testing::RunShell("command -v pdsh >/dev/null") == 0) {
    const std::string pdsh = "PDSH_SSH_ARGS='-F " + config + " -a -x -l%u %h' pdsh -R ssh -l " +
                             SshdFixture::kUser + " -f " + N + " -w " + list + " ";
    Print("pdsh -R ssh -f N `date`", External(pdsh + "'" + stamp + "'", rounds, hosts.size()));
  }
  if (compare && rackchaos::ssh::testing::RunShell("command -v parallel-ssh >/dev/null") == 0) {
    const std::string hosts_file = (*sshd)->dir() + "/pssh_hosts";
    std::ofstream(hosts_file) << std::regex_replace(list, std::regex(","), "\n") << "\n";
    const std::string pssh =
        "parallel-ssh -h " + hosts_file + " -p " + N + " -t 120 -x '-F " + config + "' -i ";
    Print("parallel-ssh -p N `date`", External(pssh + "'" + stamp + "'", rounds, hosts.size()));
  }
  return 0;
}
