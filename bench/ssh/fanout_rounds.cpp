#include "bench/ssh/fanout_rounds.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "bench/ssh/bench_stats.h"
#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::bench {
namespace {

using Clock = std::chrono::steady_clock;
using ssh::CommandResult;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Runs `command` on every host of `pool` and waits for all results; the skews go into `round`.
void RunAndCollect(boost::asio::io_context& io, ssh::SshPool& pool, const std::vector<std::string>& names,
                   const std::string& command, Round* round) {
  std::vector<CommandResult> results;
  pool.Run(names, command, [&](CommandResult r) { results.push_back(std::move(r)); });
  while (results.size() < names.size() && io.run_one() > 0) {
  }
  std::vector<int64_t> local, remote;
  for (const CommandResult& r : results) {
    if (!r.status.ok() || r.exit_status != 0) {
      if (round->failed++ == 0) std::fprintf(stderr, "  %s: %s\n", r.host.c_str(), r.status.ToString().c_str());
      continue;
    }
    local.push_back(r.start_wall_us);
    for (int64_t s : NanoStamps(r.out)) remote.push_back(s);
  }
  round->failed += static_cast<int>(names.size() - results.size());
  round->local_skew_ms = Skews(local);
  round->remote_skew_ms = Skews(remote);
}

}  // namespace

Round RackchaosCold(const std::vector<ssh::HostSpec>& hosts, const std::string& command) {
  Round round;
  const auto start = Clock::now();
  const double cpu_before = SelfCpuMs();
  {
    boost::asio::io_context io;
    auto pool = std::make_unique<ssh::SshPool>(io);
    if (!pool->AddHosts(hosts).ok()) std::abort();
    RunAndCollect(io, *pool, ssh::testing::Names(hosts), command, &round);  // each Run connects first
    pool.reset();
    io.poll();  // what the teardown queued
  }
  round.wall_ms = Ms(Clock::now() - start);
  round.client_cpu_ms = SelfCpuMs() - cpu_before;
  return round;
}

Round RackchaosPooled(boost::asio::io_context& io, ssh::SshPool& pool, const std::string& command) {
  Round round;
  const auto start = Clock::now();
  const double cpu_before = SelfCpuMs();
  RunAndCollect(io, pool, pool.HostNames(), command, &round);
  round.wall_ms = Ms(Clock::now() - start);
  round.client_cpu_ms = SelfCpuMs() - cpu_before;
  return round;
}

Round RackchaosArmedAt(ssh::SshPool& pool, const std::string& command, std::chrono::milliseconds lead) {
  std::shared_ptr<ssh::SshPool::Armed> armed;
  Round round;
  const Status a = pool.ArmAll(pool.HostNames(), command, armed);
  if (!a.ok()) {
    std::fprintf(stderr, "arm: %s\n", a.ToString().c_str());
    round.failed = static_cast<int>(pool.HostNames().size());
    return round;
  }
  const auto start = Clock::now();
  const double cpu_before = SelfCpuMs();
  const int64_t lead_us = std::chrono::duration_cast<std::chrono::microseconds>(lead).count();
  const int64_t instant = UnixMicrosNow() + lead_us;
  if (std::getenv("PRINT_INSTANTS"))  // for `perf record -k CLOCK_MONOTONIC` windows (perf_at_instant.py)
    std::printf("instant %.6f s CLOCK_MONOTONIC\n",
                std::chrono::duration<double>(start.time_since_epoch()).count() + lead_us / 1e6);
  const std::vector<CommandResult> results = pool.FireAt(*armed, instant);
  round.wall_ms = Ms(Clock::now() - start) - static_cast<double>(lead.count());
  round.client_cpu_ms = SelfCpuMs() - cpu_before;
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
  for (int64_t stamp : gate) round.late_ms.push_back(static_cast<double>(stamp - instant) / 1000.0);
  round.local_skew_ms = Skews(local);
  round.remote_skew_ms = Skews(remote);
  round.gate_skew_ms = Skews(gate);
  round.end_skew_ms = Skews(end);
  return round;
}

Round External(const std::string& shell_command, size_t hosts, const std::string& masters_text) {
  Round round;
  std::string output;
  const double masters_before = masters_text.empty() ? 0 : TreeCpuMs("ssh", masters_text);
  const double cpu_before = ChildrenCpuMs();
  const auto start = Clock::now();
  const int rc = ssh::testing::RunShell(shell_command + " </dev/null 2>&1", &output);
  round.wall_ms = Ms(Clock::now() - start);
  round.client_cpu_ms = ChildrenCpuMs() - cpu_before;
  if (!masters_text.empty()) round.client_cpu_ms += TreeCpuMs("ssh", masters_text) - masters_before;
  const std::vector<int64_t> stamps = NanoStamps(output);
  round.remote_skew_ms = Skews(stamps);
  if (rc != 0 || stamps.size() != hosts)
    round.failed = static_cast<int>(hosts - std::min(hosts, stamps.size())) + (rc != 0);
  if (round.failed) std::fprintf(stderr, "  rc %d: %.300s\n", rc, output.c_str());
  return round;
}

}  // namespace rackchaos::bench
