// A loopback lab must not outlive its test process: not when the process is killed (SIGTERM, SIGINT, a
// CTest timeout's SIGKILL), and a lab a dead process left anyway is removed by the next lab's start.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/real/lab.h"

namespace fs = std::filesystem;
using rackchaos::runner::testing::Lab;
using rackchaos::runner::testing::WaitFor;
using rackchaos::ssh::testing::RunShell;

namespace {

bool NetnsExists(const std::string& name) { return fs::exists("/run/netns/" + name); }
// Some process has `text` in its command line (the "[/]" form does not match the shell running pgrep).
bool ProcessMentions(const std::string& text) {
  return RunShell("pgrep -f -- '[" + text.substr(0, 1) + "]" + text.substr(1) + "' >/dev/null") == 0;
}

struct Child {
  pid_t pid = -1;
  std::string lab_dir, sshd_dir, netns;
};

// Forks a process that starts a lab, reports what it made, and waits to be killed.
Child StartLabInChild() {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);  // the lab's sshd must not hold the write end open
  Child c;
  c.pid = ::fork();
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    ::signal(SIGTERM, SIG_DFL);  // die as a plain process would, without doctest's report in this log
    ::signal(SIGINT, SIG_DFL);
    ::close(fds[0]);
    auto lab = Lab::Start();
    const std::string report = lab.ok() ? (*lab)->dir() + "\n" + (*lab)->sshd().dir() + "\n" : "error\n";
    [[maybe_unused]] const ssize_t n = ::write(fds[1], report.data(), report.size());
    ::close(fds[1]);
    if (!lab.ok()) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  const size_t nl = text.find('\n');
  REQUIRE_MESSAGE(nl != std::string::npos, "the child lab did not start: " << text);
  REQUIRE_MESSAGE(text.substr(0, nl) != "error", "the child lab did not start");
  c.lab_dir = text.substr(0, nl);
  c.sshd_dir = text.substr(nl + 1, text.find('\n', nl + 1) - nl - 1);
  c.netns = "rclab" + std::to_string(c.pid);
  return c;
}

bool Gone(const Child& c) {
  return !fs::exists(c.lab_dir) && !fs::exists(c.sshd_dir) && !NetnsExists(c.netns) &&
         !ProcessMentions(c.sshd_dir + "/");
}

}  // namespace

TEST_CASE("lab cleanup: a killed test process leaves no namespace, sshd or directory") {
  for (int sig : {SIGKILL, SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const Child c = StartLabInChild();
    REQUIRE(fs::exists(c.lab_dir));
    REQUIRE(NetnsExists(c.netns));
    REQUIRE(ProcessMentions(c.sshd_dir + "/"));
    ::kill(c.pid, sig);
    ::waitpid(c.pid, nullptr, 0);
    CHECK(WaitFor([&] { return Gone(c); }, 10));
    if (!Gone(c))
      rackchaos::ssh::testing::RunScript(rackchaos::runner::testing::LabCleanupScript(c.lab_dir, c.netns) + "; " +
                                         rackchaos::ssh::testing::SshdCleanupScript(c.sshd_dir));
  }
}

TEST_CASE("lab cleanup: the next lab removes what a dead test process left") {
  // A pid that is certainly dead: a child that exited and was reaped.
  const pid_t dead = ::fork();
  REQUIRE(dead >= 0);
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string tag = std::to_string(dead);
  const std::string lab_dir = "/tmp/rclab-" + tag + "-stale0", sshd_dir = "/tmp/rackchaos-sshd-" + tag + "-stale0";
  fs::create_directories(lab_dir + "/state");
  fs::create_directories(sshd_dir);
  REQUIRE(RunShell("ip netns add rclab" + tag) == 0);
  // A process the dead lab's host left (its command line names the lab directory), as real mode's
  // host-side timers do.
  const pid_t orphan = ::fork();
  REQUIRE(orphan >= 0);
  if (orphan == 0) {
    const int null = ::open("/dev/null", O_RDWR);  // CTest would wait for a process holding its output
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl("/bin/sh", "sh", "-c", "while :; do sleep 1; done", lab_dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(WaitFor([&] { return ProcessMentions(lab_dir); }, 5));

  auto lab = Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().message());
  CHECK_FALSE(fs::exists(lab_dir));
  CHECK_FALSE(fs::exists(sshd_dir));
  CHECK_FALSE(NetnsExists("rclab" + tag));
  int status = 0;
  CHECK(::waitpid(orphan, &status, 0) == orphan);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  // The live lab is not stale: it is still there.
  CHECK(fs::exists((*lab)->dir()));
  CHECK(NetnsExists("rclab" + std::to_string(::getpid())));
  RunShell("ip netns del rclab" + tag + " 2>/dev/null; rm -rf " + lab_dir + " " + sshd_dir);
}

TEST_CASE("lab cleanup: RunNow runs the guard's script once, and the lab's destructor removes what the watcher would") {
  char tmpl[] = "/tmp/rc-runnow-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl, marks = dir + "/marks";
  {
    auto guard = rackchaos::ssh::testing::CleanupGuard::Arm("echo ran >> " + marks);
    REQUIRE(guard.ok());
    guard->RunNow();
    CHECK(rackchaos::runner::testing::ReadText(marks) == "ran\n");
    guard->RunNow();  // disarmed: nothing more
  }
  ::usleep(300 * 1000);  // a watcher that was not told "done" would run the script now
  CHECK(rackchaos::runner::testing::ReadText(marks) == "ran\n");
  fs::remove_all(dir);

  auto lab = Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().message());
  const std::string lab_dir = (*lab)->dir(), sshd_dir = (*lab)->sshd().dir() + "/";
  const std::string netns = "rclab" + std::to_string(::getpid());
  const pid_t timer = ::fork();  // what a host-side expiry timer looks like: its command line names the lab
  REQUIRE(timer >= 0);
  if (timer == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl("/bin/sh", "sh", "-c", "while :; do sleep 1; done", lab_dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(WaitFor([&] { return ProcessMentions(lab_dir); }, 5));
  lab->reset();
  int status = 0;
  CHECK(::waitpid(timer, &status, 0) == timer);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  CHECK_FALSE(fs::exists(lab_dir));
  CHECK_FALSE(NetnsExists(netns));
  CHECK_FALSE(ProcessMentions(sshd_dir));
}

TEST_CASE("lab cleanup: old-format labs (rclab-XXXXXX, no pid) go once nothing in them changed for the idle time") {
  using rackchaos::runner::testing::RemoveOldFormatLabs;
  char tmpl[] = "/tmp/rc-oldlabs-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string parent = tmpl;
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  auto make = [&](const std::string& name, bool fresh_file) {
    fs::create_directories(parent + "/" + name + "/state/host00");
    std::ofstream(parent + "/" + name + "/state/host00/gpu0.power_limit") << "600.00\n";
    for (const auto& e : fs::recursive_directory_iterator(parent + "/" + name)) fs::last_write_time(e.path(), two_hours_ago);
    fs::last_write_time(parent + "/" + name, two_hours_ago);
    if (fresh_file) fs::last_write_time(parent + "/" + name + "/state/host00/gpu0.power_limit", fs::file_time_type::clock::now());
  };
  make("rclab-Ab3xZ9", false);        // old format, idle two hours: left over
  make("rclab-Qw7yU1", true);         // old format, a state file written just now: maybe live
  make("rclab-4242-Ab3xZ9", false);   // the pid format: RemoveStale's, not this function's
  make("rclab-Ab3x", false);          // not mkdtemp's six characters
  CHECK(RemoveOldFormatLabs(parent, std::chrono::hours(3)) == 0);  // two hours idle is not three
  CHECK(RemoveOldFormatLabs(parent, std::chrono::hours(1)) == 1);
  CHECK_FALSE(fs::exists(parent + "/rclab-Ab3xZ9"));
  CHECK(fs::exists(parent + "/rclab-Qw7yU1"));
  CHECK(fs::exists(parent + "/rclab-4242-Ab3xZ9"));
  CHECK(fs::exists(parent + "/rclab-Ab3x"));
  fs::remove_all(parent);
}
