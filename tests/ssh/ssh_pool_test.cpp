// Integration tests for SshPool against real OpenSSH servers on loopback (label: ssh).
#include "runner/ssh/ssh_pool.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/ssh/command_template.h"
#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::ssh {
namespace {

using testing::Names;
using testing::RunIoUntil;
using testing::SshdFixture;
using Clock = std::chrono::steady_clock;

std::unique_ptr<SshdFixture> StartSshd(int endpoints, const std::string& extra_config = "") {
  auto f = SshdFixture::Start(endpoints, extra_config);
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  return std::move(f).value();
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("runs a command and captures stdout, stderr and the exit status") {
  auto sshd = StartSshd(1);
  boost::asio::io_context io;
  SshPool pool(io);
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  REQUIRE(pool.ConnectAll(hosts).ok());
  CHECK(pool.IsConnected("host00"));

  const auto results = pool.RunAll({"host00"}, "echo hello; echo err >&2; exit 3");
  REQUIRE(results.size() == 1);
  const CommandResult& r = results[0];
  CHECK_MESSAGE(r.status.ok(), r.status.ToString());
  CHECK(r.host == "host00");
  CHECK(r.out == "hello\n");
  CHECK(r.err == "err\n");
  CHECK(r.exit_status == 3);
  CHECK_FALSE(r.out_truncated);
  CHECK(r.start_wall_us > 0);
  CHECK(r.end_wall_us >= r.start_wall_us);
  CHECK(r.elapsed.us > 0);

  // The session is reused: a second command runs on the same connection (same client port).
  const auto a = pool.RunAll({"host00"}, "echo $SSH_CLIENT");
  const auto b = pool.RunAll({"host00"}, "echo $SSH_CLIENT");
  CHECK(a[0].out == b[0].out);
  CHECK_FALSE(a[0].out.empty());
}

TEST_CASE("runs on 24 endpoints of two sshds concurrently, each on its own host") {
  auto sshd = StartSshd(24);
  boost::asio::io_context io;
  SshPool pool(io);
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  REQUIRE(hosts.size() == 24);
  const Status connected = pool.ConnectAll(hosts);
  REQUIRE_MESSAGE(connected.ok(), connected.ToString());

  // Each answer names the server address and port it came from.
  const auto where = pool.RunAll(Names(hosts), "echo $SSH_CONNECTION | cut -d' ' -f3,4");
  for (size_t i = 0; i < hosts.size(); ++i) {
    CHECK_MESSAGE(where[i].status.ok(), where[i].status.ToString());
    CHECK(where[i].host == hosts[i].name);
    CHECK(where[i].out == hosts[i].address + " " + std::to_string(hosts[i].port) + "\n");
  }
  // 24 one-second sleeps take about one second, not 24.
  const auto start = Clock::now();
  const auto slept = pool.RunAll(Names(hosts), "sleep 1; echo done");
  const double wall = SecondsSince(start);
  for (const auto& r : slept)
    CHECK_MESSAGE((r.status.ok() && r.out == "done\n"), r.status.ToString());
  CHECK(wall >= 1.0);
  CHECK(wall < 4.0);
}

TEST_CASE("max_concurrent queues the operations beyond the limit") {
  auto sshd = StartSshd(6);
  boost::asio::io_context io;
  SshPool pool(io, PoolOptions{.max_concurrent = 2});
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  REQUIRE(pool.ConnectAll(hosts).ok());
  const auto start = Clock::now();
  const auto results = pool.RunAll(Names(hosts), "sleep 0.5");
  const double wall = SecondsSince(start);
  for (const auto& r : results) CHECK_MESSAGE(r.status.ok(), r.status.ToString());
  CHECK(wall >= 1.4);  // three waves of two
  CHECK(wall < 4.0);
}

TEST_CASE("an unknown host key is refused with its fingerprint, and recorded with accept_new") {
  auto sshd = StartSshd(2);
  const std::string known = sshd->dir() + "/fresh_known_hosts";  // does not exist yet
  const auto hosts = sshd->Hosts(known);
  {
    boost::asio::io_context io;
    SshPool pool(io);
    const Status s = pool.ConnectAll(hosts);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(s.message().find(sshd->host_fingerprint()) != std::string::npos, s.message());
    CHECK(s.message().find("--accept-new-host-keys") != std::string::npos);
    CHECK(s.message().find("not known") != std::string::npos);
    CHECK(s.message().find("host01 (127.0.0.3:" + std::to_string(hosts[1].port) + ")") !=
          std::string::npos);
    CHECK_FALSE(pool.IsConnected("host00"));
    CHECK_FALSE(std::filesystem::exists(known));
  }
  {
    boost::asio::io_context io;
    SshPool pool(io, PoolOptions{.accept_new_host_keys = true});
    const Status s = pool.ConnectAll(hosts);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    const std::string text = ReadFile(known);
    for (const HostSpec& h : hosts) {
      CHECK(text.find("[" + h.address + "]:" + std::to_string(h.port)) != std::string::npos);
    }
  }
  {
    boost::asio::io_context io;
    SshPool pool(io);  // strict again: the recorded keys are now known
    const Status s = pool.ConnectAll(hosts);
    CHECK_MESSAGE(s.ok(), s.ToString());
  }
}

TEST_CASE("a changed host key is refused, also with accept_new") {
  auto sshd = StartSshd(1);
  auto impostor = sshd->NewKey("impostor");
  REQUIRE(impostor.ok());
  const std::string known = sshd->dir() + "/changed_known_hosts";
  REQUIRE(sshd->WriteKnownHosts(known, *impostor).ok());
  std::string impostor_fp;
  testing::RunShell("ssh-keygen -l -E sha256 -f " + sshd->dir() + "/impostor.pub | cut -d' ' -f2",
                    &impostor_fp);
  impostor_fp.pop_back();
  const std::string before = ReadFile(known);

  for (bool accept_new : {false, true}) {
    CAPTURE(accept_new);
    boost::asio::io_context io;
    SshPool pool(io, PoolOptions{.accept_new_host_keys = accept_new});
    const Status s = pool.ConnectAll(sshd->Hosts(known));
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(s.message().find("CHANGED") != std::string::npos, s.message());
    CHECK(s.message().find("host00 (127.0.0.2:") != std::string::npos);
    CHECK_MESSAGE(s.message().find(impostor_fp) != std::string::npos,
                  (s.message() + " / " + impostor_fp));                      // recorded
    CHECK(s.message().find(sshd->host_fingerprint()) != std::string::npos);  // what is offered
    CHECK(s.message().find("ssh-keygen -R") != std::string::npos);
    CHECK(ReadFile(known) == before);
  }
}

TEST_CASE("public key authentication with a key the server does not know is refused") {
  auto sshd = StartSshd(1);
  REQUIRE(sshd->NewKey("stranger").ok());
  auto hosts = sshd->Hosts(sshd->known_hosts());
  hosts[0].identity_file = sshd->dir() + "/stranger";
  boost::asio::io_context io;
  SshPool pool(io);
  const Status s = pool.ConnectAll(hosts);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(s.message().find("authentication refused for user 'rcssh'") != std::string::npos,
                s.message());

  hosts[0].identity_file = sshd->dir() + "/no-such-key";
  hosts[0].name = "other";
  const Status missing = pool.ConnectAll(hosts);
  CHECK_MESSAGE(missing.message().find("cannot load identity file") != std::string::npos,
                missing.message());
}

// An ssh-agent holding the test user's key; killed (by pid) when the test ends.
struct Agent {
  pid_t pid = 0;
  std::string socket;
  ~Agent() {
    if (pid > 0) ::kill(pid, SIGTERM);
    ::unsetenv("SSH_AUTH_SOCK");
  }
};

TEST_CASE("authenticates with the ssh-agent's key when use_agent is set") {
  auto sshd = StartSshd(1);
  Agent agent;
  agent.socket = sshd->dir() + "/agent.sock";
  std::string out;
  REQUIRE(testing::RunShell("ssh-agent -s -a " + agent.socket, &out) == 0);
  const size_t at = out.find("SSH_AGENT_PID=");
  REQUIRE(at != std::string::npos);
  agent.pid = std::stoi(out.substr(at + 14));
  REQUIRE(testing::RunShell("SSH_AUTH_SOCK=" + agent.socket + " ssh-add -q " + sshd->user_key() +
                            " 2>/dev/null") == 0);
  ::setenv("SSH_AUTH_SOCK", agent.socket.c_str(), 1);

  auto hosts = sshd->Hosts(sshd->known_hosts());
  hosts[0].use_agent = true;
  hosts[0].identity_file.clear();
  boost::asio::io_context io;
  SshPool pool(io);
  const Status s = pool.ConnectAll(hosts);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  const auto r = pool.RunAll({"host00"}, "id -un")[0];
  CHECK(r.out == "rcssh\n");

  // Without the key in the agent, the agent path is refused like a wrong key.
  REQUIRE(testing::RunShell("SSH_AUTH_SOCK=" + agent.socket + " ssh-add -q -D 2>/dev/null") == 0);
  hosts[0].name = "again";
  const Status refused = pool.ConnectAll(hosts);
  CHECK_MESSAGE(refused.message().find("the ssh-agent's keys") != std::string::npos,
                refused.message());
}

TEST_CASE("a command timeout is reported as kTimeout while other hosts succeed") {
  auto sshd = StartSshd(3);
  boost::asio::io_context io;
  SshPool pool(io, PoolOptions{.command_timeout = Duration::Seconds(1)});
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  REQUIRE(pool.ConnectAll(hosts).ok());

  std::vector<CommandResult> results;
  pool.Run({"host00"}, "sleep 30", [&](CommandResult r) { results.push_back(std::move(r)); });
  pool.Run({"host01", "host02"}, "echo fine",
           [&](CommandResult r) { results.push_back(std::move(r)); });
  const auto start = Clock::now();
  RunIoUntil(
      io, [&] { return results.size() == 3; }, 10);
  REQUIRE(results.size() == 3);
  CHECK(SecondsSince(start) < 3.0);
  // The quick hosts answer first, long before the timeout.
  CHECK(results[0].status.ok());
  CHECK(results[1].status.ok());
  CHECK(results[0].elapsed.us < Duration::Millis(900).us);
  CHECK(results[2].host == "host00");
  CHECK(results[2].status.code() == StatusCode::kTimeout);
  CHECK(results[2].status.message().find("host00") != std::string::npos);
  CHECK(results[2].elapsed >= Duration::Seconds(1));

  // The session survives the timeout.
  const auto again = pool.RunAll({"host00"}, "echo again");
  CHECK_MESSAGE(again[0].status.ok(), again[0].status.ToString());
  CHECK(again[0].out == "again\n");
}

// Issue 25's long run: from minute 48 every channel open to the tray hosts failed ("open failed":
// sshd's MaxSessions reached) after commands had timed out while the trays' links were down.
TEST_CASE("commands that time out, also while the server does not answer, never use up its MaxSessions") {
  auto sshd = StartSshd(1, "MaxSessions 2\n");
  boost::asio::io_context io;
  SshPool pool(io, PoolOptions{.command_timeout = Duration::Seconds(1)});
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  const Status connected = pool.ConnectAll(hosts);
  REQUIRE_MESSAGE(connected.ok(), connected.ToString());

  // Commands that run past the timeout: killed, their channels closed.
  for (int i = 0; i < 4; ++i) {
    const auto r = pool.RunAll({"host00"}, "sleep 30");
    CHECK_MESSAGE(r[0].status.code() == StatusCode::kTimeout, r[0].status.ToString());
  }
  auto ok = pool.RunAll({"host00"}, "echo ok");
  CHECK_MESSAGE((ok[0].status.ok() && ok[0].out == "ok\n"), ok[0].status.ToString());

  // A server that stops answering (its link down) for longer than the timeout, each time while a
  // command's channel is being opened, and answers again afterwards: the channel it confirms late
  // was abandoned, and must not stay open on the server.
  for (int i = 0; i < 4; ++i) {
    REQUIRE(sshd->SignalSessions(SIGSTOP) > 0);
    const auto r = pool.RunAll({"host00"}, "echo late");
    CHECK_MESSAGE(r[0].status.code() == StatusCode::kTimeout, r[0].status.ToString());
    sshd->SignalSessions(SIGCONT);
    RunIoUntil(io, [] { return false; }, 0.3);  // the late answers arrive
  }
  ok = pool.RunAll({"host00"}, "echo ok");
  CHECK_MESSAGE((ok[0].status.ok() && ok[0].out == "ok\n"), ok[0].status.ToString());

  // The same while the command already runs: the kill and the close reach the server late.
  for (int i = 0; i < 4; ++i) {
    std::vector<CommandResult> results;
    pool.Run({"host00"}, "sleep 30", [&](CommandResult r) { results.push_back(std::move(r)); });
    RunIoUntil(io, [] { return false; }, 0.3);
    REQUIRE(sshd->SignalSessions(SIGSTOP) > 0);
    RunIoUntil(io, [&] { return !results.empty(); }, 5);
    REQUIRE(results.size() == 1);
    CHECK_MESSAGE(results[0].status.code() == StatusCode::kTimeout, results[0].status.ToString());
    sshd->SignalSessions(SIGCONT);
    RunIoUntil(io, [] { return false; }, 0.3);
  }
  ok = pool.RunAll({"host00"}, "echo ok");
  CHECK_MESSAGE((ok[0].status.ok() && ok[0].out == "ok\n"), ok[0].status.ToString());
}

TEST_CASE("a connection the server refuses a channel on is reopened once its commands end") {
  // sshd's MaxSessions reached by this runner's own commands (or, before the fix above, by channels
  // left open on the server): the refused command waits for a new connection instead of failing.
  auto sshd = StartSshd(1, "MaxSessions 2\n");
  boost::asio::io_context io;
  SshPool pool(io, PoolOptions{.command_timeout = Duration::Seconds(10)});
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  const Status connected = pool.ConnectAll(hosts);
  REQUIRE_MESSAGE(connected.ok(), connected.ToString());

  std::vector<CommandResult> results;
  auto keep = [&](CommandResult r) { results.push_back(std::move(r)); };
  pool.Run({"host00"}, "sleep 1; echo first", keep);
  pool.Run({"host00"}, "sleep 1; echo second", keep);
  pool.Run({"host00"}, "echo third", keep);
  pool.Run({"host00"}, "echo fourth", keep);
  const auto start = Clock::now();
  RunIoUntil(io, [&] { return results.size() == 4; }, 15);
  REQUIRE(results.size() == 4);
  for (const auto& r : results) CHECK_MESSAGE(r.status.ok(), r.status.ToString());
  std::vector<std::string> outs;  // in the order they ended, which the two connections do not fix
  for (const auto& r : results) outs.push_back(r.out);
  std::sort(outs.begin(), outs.end());
  CHECK(outs == std::vector<std::string>{"first\n", "fourth\n", "second\n", "third\n"});
  CHECK(SecondsSince(start) < 5.0);
  const auto again = pool.RunAll({"host00"}, "echo again");
  CHECK_MESSAGE((again[0].status.ok() && again[0].out == "again\n"), again[0].status.ToString());
}

TEST_CASE("dead and silent endpoints fail fast and do not hold up the others") {
  auto sshd = StartSshd(3);
  auto hosts = sshd->Hosts(sshd->known_hosts());
  HostSpec dead = hosts[0];
  dead.name = "dead";
  dead.port = testing::FreePort();  // nothing listens there
  hosts.push_back(dead);

  // A socket that accepts TCP connections (backlog) but never speaks SSH.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  HostSpec mute = hosts[0];
  mute.name = "silent";
  mute.address = "127.0.0.1";
  mute.port = silent.local_endpoint().port();
  hosts.push_back(mute);

  SshPool pool(io, PoolOptions{.connect_timeout = Duration::Seconds(1)});
  const auto start = Clock::now();
  const Status s = pool.ConnectAll(hosts);
  CHECK(SecondsSince(start) < 3.0);
  CHECK(s.message().find("2 of 5 SSH hosts did not connect") != std::string::npos);
  CHECK_MESSAGE(s.message().find("dead (127.0.0.2:" + std::to_string(dead.port) +
                                 "): cannot connect") != std::string::npos,
                s.message());
  CHECK(s.message().find("silent (127.0.0.1:" + std::to_string(mute.port) +
                         "): connect timed out") != std::string::npos);
  CHECK(pool.IsConnected("host00"));

  const auto results = pool.RunAll(Names(hosts), "echo up");
  CHECK(results[0].out == "up\n");
  CHECK(results[2].status.ok());
  CHECK(results[3].status.code() == StatusCode::kUnavailable);
  // Refused at once, no retry loop: sooner than the connect timeout (1 s) a wait or a retry would take.
  CHECK(results[3].elapsed < Duration::Seconds(1));
  CHECK(results[4].status.code() == StatusCode::kTimeout);
}

TEST_CASE("a flooding command's output is capped") {
  auto sshd = StartSshd(1);
  boost::asio::io_context io;
  SshPool pool(io);
  REQUIRE(pool.ConnectAll(sshd->Hosts(sshd->known_hosts())).ok());
  const auto r = pool.RunAll({"host00"}, "yes | head -c 50000000; echo tail >&2")[0];
  CHECK_MESSAGE(r.status.ok(), r.status.ToString());
  CHECK(r.exit_status == 0);
  CHECK(r.out.size() == size_t{1} << 20);
  CHECK(r.out.substr(0, 4) == "y\ny\n");
  CHECK(r.out_truncated);
  CHECK(r.out_bytes == 50000000);
  CHECK(r.err == "tail\n");
  CHECK_FALSE(r.err_truncated);
}

TEST_CASE("template values cannot inject shell syntax over SSH") {
  auto sshd = StartSshd(1);
  boost::asio::io_context io;
  SshPool pool(io);
  REQUIRE(pool.ConnectAll(sshd->Hosts(sshd->known_hosts())).ok());
  const std::string sandbox = sshd->dir() + "/sandbox";
  std::filesystem::create_directory(sandbox);
  std::filesystem::permissions(sandbox, std::filesystem::perms::all);
  const std::string marker = sandbox + "/pwned";
  const std::string evil =
      "eth0; touch " + marker + "; echo $(touch " + marker + ")'\"`touch " + marker + "`";

  auto rendered = RenderTemplate("printf '<%s>' {if}", {{"if", evil}});
  REQUIRE(rendered.ok());
  const auto r = pool.RunAll({"host00"}, *rendered)[0];
  CHECK_MESSAGE(r.status.ok(), r.status.ToString());
  CHECK(r.out == "<" + evil + ">");
  CHECK_FALSE(std::filesystem::exists(marker));

  // Control: the same value spliced in unquoted does run the injected command.
  const auto spliced = pool.RunAll({"host00"}, "printf '<%s>' eth0; touch " + marker)[0];
  CHECK(spliced.status.ok());
  CHECK(std::filesystem::exists(marker));
}

TEST_CASE("a session dropped during a command is reported, and reconnected on next use") {
  auto sshd = StartSshd(2);
  boost::asio::io_context io;
  SshPool pool(io);
  const auto hosts = sshd->Hosts(sshd->known_hosts());
  REQUIRE(pool.ConnectAll(hosts).ok());

  std::vector<CommandResult> results;
  pool.Run({"host00"}, "sleep 20", [&](CommandResult r) { results.push_back(std::move(r)); });
  boost::asio::steady_timer kill(io);
  kill.expires_after(std::chrono::milliseconds(300));
  kill.async_wait([&](boost::system::error_code) { CHECK(sshd->KillSessions() > 0); });
  const auto start = Clock::now();
  RunIoUntil(
      io, [&] { return results.size() == 1; }, 10);
  REQUIRE(results.size() == 1);
  CHECK(SecondsSince(start) < 3.0);
  CHECK(results[0].status.code() == StatusCode::kUnavailable);
  CHECK_MESSAGE(results[0].status.message().find("host00") != std::string::npos,
                results[0].status.message());
  CHECK(results[0].status.message().find("dropped") != std::string::npos);

  // Both sessions were killed; host01 was idle, and the pool notices that on its own.
  RunIoUntil(
      io, [&] { return !pool.IsConnected("host01"); }, 3);
  CHECK_FALSE(pool.IsConnected("host00"));
  CHECK_FALSE(pool.IsConnected("host01"));
  const auto back = pool.RunAll(Names(hosts), "echo back");
  for (const auto& r : back)
    CHECK_MESSAGE((r.status.ok() && r.out == "back\n"), r.status.ToString());
  CHECK(pool.IsConnected("host00"));
}

TEST_CASE("unknown host names and bad host specs are reported") {
  boost::asio::io_context io;
  SshPool pool(io);
  const auto r = pool.RunAll({"nope"}, "true");
  CHECK(r[0].status.code() == StatusCode::kNotFound);
  CHECK(r[0].host == "nope");
  HostSpec h;
  h.name = "a";
  h.address = "127.0.0.2";
  h.port = 0;
  h.identity_file = "k";
  CHECK(pool.AddHosts({h}).code() == StatusCode::kInvalidArgument);
  h.port = 22;
  REQUIRE(pool.AddHosts({h}).ok());
  CHECK(pool.AddHosts({h}).ok());  // identical: no-op
  h.address = "127.0.0.3";
  CHECK(pool.AddHosts({h}).code() == StatusCode::kInvalidArgument);
  CHECK(pool.HostNames() == std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace rackchaos::ssh
