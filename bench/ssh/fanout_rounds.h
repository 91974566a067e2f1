// One measured round of each kind the fan-out bench compares: rackchaos' SshPool cold, pooled and armed
// at an instant, and an external tool (pdsh, clush) run through /bin/sh.
//
// Every round returns its wall time and the CPU time of the client side: for rackchaos this process
// (RUSAGE_SELF: the pool, libssh, the event loop), for a peer every process it started and waited for
// (RUSAGE_CHILDREN: the tool itself and its ssh clients) plus, when `masters_text` is given, the OpenSSH
// ControlPersist masters that carry its sessions (they are not its children: /proc). The caller adds the
// server side (the sshd processes) around the call. Single-threaded; runs `io` itself where it takes one.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "runner/ssh/host_spec.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::bench {

struct Round {
  double wall_ms = 0;
  double client_cpu_ms = 0;
  double server_cpu_ms = 0;  // filled by the caller
  int failed = 0;
  std::vector<double> local_skew_ms;   // rackchaos: when each host's exec request (or go line) was written
  std::vector<double> remote_skew_ms;  // each host's `date +%s%N` after the first host's
  std::vector<double> late_ms;         // armed at T: each host's landing stamp after T
  std::vector<double> gate_skew_ms;    // armed: the gate's landing stamps (just before the apply)
  std::vector<double> end_skew_ms;     // armed: the gate's stamps just after the apply
};

// A new pool for `hosts` (default PoolOptions, as `rackchaos run` uses): connect, key exchange, host key
// check, authentication, `command` on every host, and the pool's teardown (the connections' close) all
// inside the measured time, as a peer's process exit is inside its own.
Round RackchaosCold(const std::vector<ssh::HostSpec>& hosts, const std::string& command);

// `command` on every host of `pool`, whose sessions are open already (ConnectAll and a warm-up run).
Round RackchaosPooled(boost::asio::io_context& io, ssh::SshPool& pool, const std::string& command);

// `command` armed on every host of `pool` (SshPool::ArmAll, not timed), then released at the instant
// `lead` from now (FireAt, as real runs). wall_ms is the time past that instant until every result came.
Round RackchaosArmedAt(ssh::SshPool& pool, const std::string& command, std::chrono::milliseconds lead);

// `shell_command` run with /bin/sh, stdin from /dev/null; each of `hosts` must print one `date +%s%N`
// stamp, else the missing ones count as failed (and a non-zero exit as one more).
Round External(const std::string& shell_command, size_t hosts, const std::string& masters_text = "");

}  // namespace rackchaos::bench
