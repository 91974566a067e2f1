// SSH fan-out benchmark: one command on N loopback sshd endpoints at once, rackchaos against its peers.
//
//   [FIRE_LEAD_MS=300] [ARMED_APPLY=:] [PRINT_INSTANTS=1] ssh_fanout_bench [hosts=256] [rounds=5] [--armed-only]
//
// Starts N endpoints (16 per sshd, tests/ssh/sshd_fixture.h) and runs `rounds` rounds; each round runs
// every row once (the armed rows twice), starting at a different row each round, so load changes on
// the machine spread over all rows alike. Rows:
//   cold    - a new connection per host: rackchaos (a new SshPool; libssh 0.10 negotiates
//             curve25519-sha256), `pdsh -R ssh` and `clush`, each peer with the key exchange pinned to
//             curve25519-sha256 and with OpenSSH's default (sntrup761x25519-sha512); `date +%s%N`;
//   pooled  - connections opened before the first round: rackchaos' open sessions, and pdsh and clush
//             over OpenSSH ControlMaster/ControlPersist masters opened by a warm-up run; `date +%s%N`;
//   armed   - rackchaos only: the apply armed on every host (not timed) and released at an instant 300 ms
//             ahead (FireAt, as real runs); apply `:` (a builtin: the shells' wake-up) and `date +%s%N`
//             (a program exec'd on every host, as a real apply does).
// Each row reports wall time, the client side's CPU time (rackchaos: this process; a peer: its
// processes and, pooled, the masters' CPU) and the server side's (every sshd process of the fixture,
// from idle to idle: the row's sessions' ends included; for armed rows the arming too), and the hosts'
// start skew. Ends with a Markdown table (bench/README.md) and, as before, the LANDING
// SKEW line. --armed-only runs only the armed rows. Exit status 1 when any host failed in any row.
// Must run as root (the fixture creates the test user when missing, and then removes it; it starts
// sshd). Loopback only. Hold /tmp/rackchaos-root.lock (machine-wide ports).
#include <pwd.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/ssh/bench_stats.h"
#include "bench/ssh/fanout_rounds.h"
#include "bench/ssh/peer_commands.h"
#include "tests/ssh/cleanup_guard.h"
#include "tests/ssh/sshd_fixture.h"

namespace {

using rackchaos::bench::Quantile;
using rackchaos::bench::Round;
using rackchaos::ssh::testing::SshdFixture;

struct Row {
  std::string name;
  std::string kind;   // "cold", "pooled", "armed"
  int baseline = -1;  // the rackchaos row this one's ratio divides by
  int per_round = 1;
  std::function<Round()> run;
  std::vector<Round> rounds;
};

struct Summary {
  double wall = 0, wall_min = 0, wall_max = 0, client_cpu = 0, client_cpu_min = 0, client_cpu_max = 0;
  double server_cpu = 0, server_cpu_min = 0, server_cpu_max = 0;
  double skew_p99 = 0, skew_p99_min = 0, skew_p99_max = 0;  // remote `date` stamps, per round
  double landing_p50 = 0, landing_p99 = 0, round_landing_min = 0, round_landing_med = 0, round_landing_max = 0;
  double applied_p99 = 0, late_p50 = 0;
  int failed = 0, over_50ms = 0;
  size_t stamps = 0;
};

Summary Summarize(const Row& row) {
  std::vector<double> walls, client, server, skews, gate, end, late, round_gate;
  Summary s;
  for (const Round& r : row.rounds) {
    walls.push_back(r.wall_ms);
    client.push_back(r.client_cpu_ms);
    server.push_back(r.server_cpu_ms);
    if (!r.remote_skew_ms.empty()) skews.push_back(Quantile(r.remote_skew_ms, 0.99));
    gate.insert(gate.end(), r.gate_skew_ms.begin(), r.gate_skew_ms.end());
    end.insert(end.end(), r.end_skew_ms.begin(), r.end_skew_ms.end());
    late.insert(late.end(), r.late_ms.begin(), r.late_ms.end());
    if (!r.gate_skew_ms.empty()) round_gate.push_back(Quantile(r.gate_skew_ms, 0.99));
    s.failed += r.failed;
  }
  s.wall = Quantile(walls, 0.5), s.wall_min = Quantile(walls, 0), s.wall_max = Quantile(walls, 1);
  s.client_cpu = Quantile(client, 0.5), s.client_cpu_min = Quantile(client, 0), s.client_cpu_max = Quantile(client, 1);
  s.server_cpu = Quantile(server, 0.5), s.server_cpu_min = Quantile(server, 0), s.server_cpu_max = Quantile(server, 1);
  s.skew_p99 = Quantile(skews, 0.5), s.skew_p99_min = Quantile(skews, 0), s.skew_p99_max = Quantile(skews, 1);
  s.landing_p50 = Quantile(gate, 0.5), s.landing_p99 = Quantile(gate, 0.99), s.stamps = gate.size();
  s.round_landing_min = Quantile(round_gate, 0), s.round_landing_med = Quantile(round_gate, 0.5);
  s.round_landing_max = Quantile(round_gate, 1), s.applied_p99 = Quantile(end, 0.99), s.late_p50 = Quantile(late, 0.5);
  s.over_50ms = static_cast<int>(std::count_if(round_gate.begin(), round_gate.end(), [](double v) { return v > 50; }));
  return s;
}

std::string Ratio(double peer, double ours) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", ours > 0 ? peer / ours : 0.0);
  return buf;
}

// The Markdown tables bench/README.md quotes: cold and pooled rows, then the armed rows.
void PrintTables(const std::vector<Row>& rows) {
  std::vector<Summary> sums;
  for (const Row& row : rows) sums.push_back(Summarize(row));
  std::printf(
      "\n| row | wall median (min-max) | peer wall / rackchaos wall | client CPU median (min-max) | peer CPU / "
      "rackchaos CPU | sshd CPU median (min-max) | `date` start skew p99, median of rounds (min-max) | failed |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].kind == "armed") continue;
    const Summary& s = sums[i];
    const bool peer = rows[i].baseline >= 0;
    const Summary& base = sums[peer ? rows[i].baseline : i];
    std::printf(
        "| %s | %.2f s (%.2f-%.2f) | %s | %.2f s (%.2f-%.2f) | %s | %.2f s (%.2f-%.2f) | %.0f ms (%.0f-%.0f) | %d |\n",
        rows[i].name.c_str(), s.wall / 1e3, s.wall_min / 1e3, s.wall_max / 1e3,
        peer ? Ratio(s.wall, base.wall).c_str() : "1", s.client_cpu / 1e3, s.client_cpu_min / 1e3,
        s.client_cpu_max / 1e3, peer ? Ratio(s.client_cpu, base.client_cpu).c_str() : "1", s.server_cpu / 1e3,
        s.server_cpu_min / 1e3, s.server_cpu_max / 1e3, s.skew_p99, s.skew_p99_min, s.skew_p99_max, s.failed);
  }
  std::printf(
      "\n| armed at T | landing p50 / p99 (all stamps) | rounds' own landing p99 min/median/max | "
      "applied p99 | `date` stamp p99 | landing after T, p50 | runner CPU median | failed |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].kind != "armed") continue;
    const Summary& s = sums[i];
    std::printf("| %s | %.1f / %.1f ms (%zu) | %.1f/%.1f/%.1f ms | %.1f ms | %s | %.1f ms | %.0f ms | %d |\n",
                rows[i].name.c_str(), s.landing_p50, s.landing_p99, s.stamps, s.round_landing_min, s.round_landing_med,
                s.round_landing_max, s.applied_p99,
                s.skew_p99 > 0 ? (std::to_string(static_cast<int>(s.skew_p99 + 0.5)) + " ms").c_str() : "-", s.late_p50,
                s.client_cpu, s.failed);
  }
}

// The test user is the fixture's; when this run creates it, it removes it again, also when killed.
rackchaos::ssh::testing::CleanupGuard UserGuard(bool existed) {
  if (existed) return {};
  const std::string user = SshdFixture::kUser;
  auto guard =
      rackchaos::ssh::testing::CleanupGuard::Arm("userdel -f " + user + " 2>/dev/null; rm -rf /var/lib/" + user);
  return guard.ok() ? std::move(*guard) : rackchaos::ssh::testing::CleanupGuard{};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rackchaos::bench;
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool armed_only = argc > 3 && std::string(argv[3]) == "--armed-only";
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  // Setup: the endpoints, the peers' configs, rackchaos' open pool (its warm-up round) and the peers'
  // ControlPersist masters (theirs).
  const std::string load_before = LoadAverage(), started = UtcNow();
  rackchaos::ssh::testing::CleanupGuard user_guard = UserGuard(getpwnam(SshdFixture::kUser) != nullptr);
  auto sshd = SshdFixture::Start(n);
  if (!sshd.ok()) {
    std::fprintf(stderr, "fixture: %s\n", sshd.status().ToString().c_str());
    user_guard.RunNow();
    return 1;
  }
  const std::vector<rackchaos::ssh::HostSpec> hosts = (*sshd)->Hosts((*sshd)->known_hosts());
  const PeerConfigs peers = WritePeerConfigs(**sshd);
  boost::asio::io_context io;
  auto pool_owner =
      std::make_unique<rackchaos::ssh::SshPool>(io, rackchaos::ssh::PoolOptions{.max_concurrent = std::max(256, n)});
  rackchaos::ssh::SshPool& pool = *pool_owner;
  if (const rackchaos::Status s = pool.ConnectAll(hosts); !s.ok())
    std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
  RackchaosPooled(io, pool, "true");

  const std::string date = "date +%s%N", sshd_text = (*sshd)->dir() + "/sshd";
  const char* apply_env = std::getenv("ARMED_APPLY");
  const std::string builtin = apply_env ? apply_env : ":";
  const char* lead_env = std::getenv("FIRE_LEAD_MS");
  const std::chrono::milliseconds lead{lead_env ? std::atoi(lead_env) : 300};
  std::vector<Row> rows;
  if (!armed_only) {
    rows.push_back(
        {"rackchaos cold (libssh: curve25519-sha256)", "cold", -1, 1, [&] { return RackchaosCold(hosts, date); }, {}});
    const bool pdsh = Installed("pdsh"), clush = Installed("clush");
    if (!pdsh || !clush)
      std::printf("not installed (rows left out):%s%s\n", pdsh ? "" : " pdsh", clush ? "" : " clush");
    const auto peer = [&](const std::string& name, const std::string& kind, int base, std::string command,
                          std::string masters) {
      rows.push_back({name, kind, base, 1, [=, &peers] { return External(command, peers.count, masters); }, {}});
    };
    if (pdsh) peer("pdsh -R ssh, kex pinned curve25519-sha256", "cold", 0, PdshCommand(peers, peers.pinned, date), "");
    if (clush) peer("clush, kex pinned curve25519-sha256", "cold", 0, ClushCommand(peers, peers.pinned, date), "");
    if (pdsh)
      peer("pdsh -R ssh, OpenSSH default kex (sntrup761x25519)", "cold", 0, PdshCommand(peers, peers.defaults, date),
           "");
    if (clush)
      peer("clush, OpenSSH default kex (sntrup761x25519)", "cold", 0, ClushCommand(peers, peers.defaults, date), "");
    const int pooled = static_cast<int>(rows.size());
    rows.push_back(
        {"rackchaos pooled (sessions open)", "pooled", -1, 1, [&] { return RackchaosPooled(io, pool, date); }, {}});
    // The warm-up opens one master per host (pdsh's run); clush's then finds them by ControlPath.
    if (pdsh) External(PdshCommand(peers, peers.multiplexed, "true"), 0);
    if (clush) External(ClushCommand(peers, peers.multiplexed, "true"), 0);
    const std::string masters = peers.multiplexed;
    if (pdsh)
      peer("pdsh -R ssh over ControlMaster (masters open)", "pooled", pooled, PdshCommand(peers, masters, date),
           masters);
    if (clush)
      peer("clush over ControlMaster (masters open)", "pooled", pooled, ClushCommand(peers, masters, date), masters);
  }
  rows.push_back({"apply `" + builtin.substr(0, 12) + "` (builtin: the shells wake)",
                  "armed",
                  -1,
                  2,
                  [&] { return RackchaosArmedAt(pool, builtin, lead); },
                  {}});
  rows.push_back({"apply `date +%s%N` (exec'd on every host)",
                  "armed",
                  -1,
                  2,
                  [&] { return RackchaosArmedAt(pool, date, lead); },
                  {}});

  // The rounds, interleaved: round r starts at row r (mod the rows).
  std::printf("%zu endpoints on %d sshd processes, %d rounds, started %s, load average %s\n", hosts.size(),
              (n + 15) / 16, rounds, started.c_str(), load_before.c_str());
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < rows.size(); ++k) {
      Row& row = rows[(r + k) % rows.size()];
      for (int i = 0; i < row.per_round; ++i) {
        const double server_before = SettledTreeCpuMs("sshd", sshd_text);
        Round round = row.run();
        round.server_cpu_ms = SettledTreeCpuMs("sshd", sshd_text) - server_before;  // its sessions' ends included
        std::printf("round %d  %-58s wall %8.1f ms  client cpu %7.1f ms  sshd cpu %7.1f ms  failed %d\n", r,
                    row.name.c_str(), round.wall_ms, round.client_cpu_ms, round.server_cpu_ms, round.failed);
        row.rounds.push_back(std::move(round));
      }
    }
  }

  const std::string load_after = LoadAverage();
  std::printf("\n`ssh_fanout_bench %d %d%s`, %s, %zu hosts, %d rounds, load average %s before, %s after\n", n, rounds,
              armed_only ? " --armed-only" : "", started.c_str(), hosts.size(), rounds, load_before.c_str(),
              load_after.c_str());
  PrintTables(rows);
  const Summary at_t = Summarize(rows[rows.size() - 2]), at_t_exec = Summarize(rows.back());
  std::printf(
      "\nLANDING SKEW p99 over %zu hosts (%zu stamps): %.1f ms with a builtin apply (p50 %.1f; rounds' own p99 "
      "min/median/max %.1f/%.1f/%.1f, %d of %zu rounds over 50 ms; applied %.1f), %.1f ms with an exec'd apply "
      "(applied %.1f); target 50 ms; load average %s before, %s after\n",
      hosts.size(), at_t.stamps, at_t.landing_p99, at_t.landing_p50, at_t.round_landing_min, at_t.round_landing_med,
      at_t.round_landing_max, at_t.over_50ms, rows[rows.size() - 2].rounds.size(), at_t.applied_p99,
      at_t_exec.landing_p99, at_t_exec.applied_p99, load_before.c_str(), load_after.c_str());

  int failed = 0;
  for (const Row& row : rows)
    for (const Round& round : row.rounds) failed += round.failed;
  pool_owner.reset();
  sshd->reset();  // the servers, the masters and the directory (SshdCleanupScript)
  user_guard.RunNow();
  return failed == 0 ? 0 : 1;
}
