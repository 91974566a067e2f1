// Armed commands (SshPool::ArmAll/ArmEach, FireAll/FireAt, Disarm) against real OpenSSH servers on
// loopback (label: ssh). The hosts' commands run in bash 5, as on real hosts.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "runner/ssh/ssh_pool.h"
#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::ssh {
namespace {

using testing::Names;
using testing::RunIoUntil;
using testing::SshdFixture;

std::unique_ptr<SshdFixture> StartSshd(int endpoints) {
  auto f = SshdFixture::Start(endpoints);
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  return std::move(f).value();
}

// `endpoints` sshd endpoints and a pool with a session open to each.
struct Connected {
  Connected(int endpoints, int slots)
      : sshd(StartSshd(endpoints)),
        pool(io, PoolOptions{.max_concurrent = slots}),
        hosts(sshd->Hosts(sshd->known_hosts())) {
    REQUIRE(pool.ConnectAll(hosts).ok());
  }
  std::unique_ptr<SshdFixture> sshd;
  boost::asio::io_context io;
  SshPool pool;
  std::vector<HostSpec> hosts;
};

int64_t WallMicrosNow() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "1764505000.123456\n" (bash's $EPOCHREALTIME) as microseconds; 0 when it is not one.
int64_t StampMicros(const std::string& text) {
  std::istringstream in(text);
  int64_t seconds = 0, micros = 0;
  char dot = 0;
  if (!(in >> seconds >> dot >> micros) || dot != '.') return 0;
  return seconds * 1000000 + micros;
}

TEST_CASE("ssh.armed: commands wait on the hosts until fired, and never run when disarmed") {
  Connected c(8, 8);
  auto& [sshd, io, pool, hosts] = c;
  const std::string dir = std::filesystem::temp_directory_path() / ("rackchaos-armed-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  // Each host leaves a file named after its sshd address and port when the command really runs.
  const std::string command = "touch " + dir + "/$(echo $SSH_CONNECTION | cut -d' ' -f3,4 | tr ' ' _); echo ran";
  auto ran = [&] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
  };

  std::shared_ptr<SshPool::Armed> armed;
  const Status arm = pool.ArmAll(Names(hosts), command, armed);
  REQUIRE_MESSAGE(arm.ok(), arm.ToString());
  RunIoUntil(
      io, [] { return false; }, 0.3);  // armed, not fired: nothing may run
  CHECK(ran() == 0);
  const auto results = pool.FireAll(*armed);
  REQUIRE(results.size() == hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    CHECK_MESSAGE(results[i].status.ok(), results[i].status.ToString());
    CHECK(results[i].host == hosts[i].name);
    CHECK(results[i].exit_status == 0);
    CHECK(results[i].out == "ran\n");
  }
  CHECK(ran() == hosts.size());

  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  REQUIRE(pool.ArmAll(Names(hosts), command, armed).ok());
  pool.Disarm(*armed);
  for (const CommandResult& r : armed->results()) CHECK(r.exit_status == 125);
  RunIoUntil(
      io, [] { return false; }, 0.2);
  CHECK(ran() == 0);

  // More hosts than free slots cannot all wait at once; an unknown host fails, the others arm.
  SshPool narrow(io, PoolOptions{.max_concurrent = 2});
  REQUIRE(narrow.ConnectAll(hosts).ok());
  CHECK(narrow.ArmAll(Names(hosts), command, armed).code() == StatusCode::kInvalidArgument);
  const Status partly = pool.ArmAll({"host00", "nosuch"}, command, armed);
  CHECK(partly.code() == StatusCode::kNotFound);
  CHECK(partly.message().find("1 of 2 hosts could not be armed") != std::string::npos);
  const auto some = pool.FireAll(*armed);
  CHECK(some[0].status.ok());
  CHECK(some[0].out == "ran\n");
  CHECK(some[1].status.code() == StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST_CASE("ssh.armed: fired at an instant, every host runs its command at that instant and not before") {
  Connected c(8, 8);
  auto& [sshd, io, pool, hosts] = c;
  // The command stamps its start with a shell builtin: no process start between waking and the stamp.
  const std::string stamp = "printf '%s\\n' \"$EPOCHREALTIME\"";
  std::shared_ptr<SshPool::Armed> armed;
  REQUIRE(pool.ArmAll(Names(hosts), stamp, armed).ok());
  const int64_t at = WallMicrosNow() + 400000;
  const auto results = pool.FireAt(*armed, at);
  REQUIRE(results.size() == hosts.size());
  for (const CommandResult& r : results) {
    CHECK_MESSAGE(r.status.ok(), r.status.ToString());
    CHECK(r.exit_status == 0);
    CHECK(r.start_wall_us < at);  // the go lines went out ahead of the instant
    const int64_t ran = StampMicros(r.out);
    CHECK_MESSAGE(ran >= at, r.out);
    CHECK_MESSAGE(ran < at + 5000000, r.out);  // a loose bound: this machine may be busy
    // The gate's own stamps, taken out of stderr: when bash let the command go, just before it ran,
    // and when it ended.
    CHECK(r.landed_wall_us >= at);
    CHECK(r.landed_wall_us <= ran);
    CHECK(r.apply_end_wall_us >= ran);
    CHECK(r.err.empty());
    // Nothing but the wake and the command happens at the instant: the stamp's write and the exit
    // wait until 100 ms after it, so the result cannot be here before then.
    CHECK(r.end_wall_us >= at + 100000);
  }

  // An instant already past: the hosts run the command at once.
  REQUIRE(pool.ArmAll(Names(hosts), stamp, armed).ok());
  const int64_t past = WallMicrosNow() - 60000000;
  for (const CommandResult& r : pool.FireAt(*armed, past)) {
    CHECK(r.exit_status == 0);
    CHECK(StampMicros(r.out) >= WallMicrosNow() - 30000000);
  }
}

TEST_CASE("ssh.armed: a go line that reaches a host past its latest instant does not run the command") {
  Connected c(2, 2);
  auto& [sshd, io, pool, hosts] = c;
  const std::string stamp = "printf '%s\\n' \"$EPOCHREALTIME\"";
  std::shared_ptr<SshPool::Armed> armed;
  // Held back (as by a partition) until after the latest instant: exit 125, nothing ran.
  REQUIRE(pool.ArmAll(Names(hosts), stamp, armed).ok());
  const int64_t past = WallMicrosNow() - 5000000;
  for (const CommandResult& r : pool.FireAt(*armed, past, past + 1000000)) {
    CHECK_MESSAGE(r.status.ok(), r.status.ToString());
    CHECK(r.exit_status == 125);
    CHECK(r.out.empty());
    CHECK(r.landed_wall_us == 0);
  }
  // Late, but within the latest instant: it runs at once.
  REQUIRE(pool.ArmAll(Names(hosts), stamp, armed).ok());
  const int64_t late = WallMicrosNow() - 100000;
  for (const CommandResult& r : pool.FireAt(*armed, late, late + 60000000)) {
    CHECK_MESSAGE(r.status.ok(), r.status.ToString());
    CHECK(r.exit_status == 0);
    CHECK(StampMicros(r.out) >= late);
  }
  // On time with a latest instant: at the instant, as without one.
  REQUIRE(pool.ArmAll(Names(hosts), stamp, armed).ok());
  const int64_t at = WallMicrosNow() + 300000;
  for (const CommandResult& r : pool.FireAt(*armed, at, at + 5000000)) {
    CHECK(r.exit_status == 0);
    CHECK(StampMicros(r.out) >= at);
  }
}

TEST_CASE("ssh.armed: ArmEach gives each host its own command, and a host may get several") {
  Connected c(2, 4);
  auto& [sshd, io, pool, hosts] = c;
  std::shared_ptr<SshPool::Armed> armed;
  REQUIRE(pool.ArmEach({"host00", "host01", "host00"}, {"cat; echo a", "echo b", "exit 3"}, armed).ok());
  const auto results = pool.FireAt(*armed, WallMicrosNow() + 100000);
  REQUIRE(results.size() == 3);
  for (const CommandResult& r : results) CHECK(r.apply_end_wall_us >= r.landed_wall_us);  // `exit` keeps the stamps
  CHECK(results[0].landed_wall_us > 0);
  CHECK(results[0].out == "a\n");  // `cat` read /dev/null, not the channel
  CHECK(results[1].out == "b\n");
  CHECK(results[2].exit_status == 3);
  // Three armed commands hold three of the four slots: four more cannot wait at once.
  REQUIRE(pool.ArmAll({"host00", "host01", "host00"}, "true", armed).ok());
  std::shared_ptr<SshPool::Armed> more;
  CHECK(pool.ArmAll({"host00", "host01"}, "true", more).code() == StatusCode::kInvalidArgument);
  pool.Disarm(*armed);
  for (const CommandResult& r : armed->results()) CHECK(r.exit_status == 125);
}

TEST_CASE("ssh.armed: the command's stderr stays, the landing stamps come off it even past the capture limit") {
  Connected c(1, 2);
  auto& [sshd, io, pool, hosts] = c;
  SshPool small(io, PoolOptions{.max_concurrent = 2, .max_output_bytes = 16});
  REQUIRE(small.ConnectAll(hosts).ok());
  std::shared_ptr<SshPool::Armed> armed;
  REQUIRE(small.ArmEach({"host00", "host00"}, {"echo warn >&2", "printf '%0100d\\n' 0 >&2"}, armed).ok());
  const int64_t at = WallMicrosNow() + 100000;
  const auto results = small.FireAt(*armed, at);
  REQUIRE(results.size() == 2);
  CHECK(results[0].err == "warn\n");
  CHECK_FALSE(results[0].err_truncated);
  CHECK(results[0].err_bytes == 5);
  CHECK(results[0].landed_wall_us >= at);
  CHECK(results[1].err_truncated);
  CHECK(results[1].err == std::string(16, '0'));
  CHECK(results[1].err_bytes == 101);
  CHECK(results[1].landed_wall_us >= at);
  CHECK(results[1].apply_end_wall_us >= results[1].landed_wall_us);
}

}  // namespace
}  // namespace rackchaos::ssh
