// Real mode when the report database fails mid-run (issue 10): the disk under the report fills while
// faults are applied on the hosts. The run must still revert every fault, close the ledger, exit 3 with a
// clear error, and must not mark the run complete.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "runner/site/ledger.h"
#include "tests/real/lab.h"

namespace rackchaos::runner {
namespace {

using testing::Lab;
using testing::ReadText;
using testing::SpawnRackchaos;
using testing::WaitExit;
using testing::WaitFor;

// A small tmpfs mounted for the test's lifetime, unmounted also when the test fails.
class SmallDisk {
 public:
  explicit SmallDisk(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=2m,mode=755") == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Writes zeros until the filesystem refuses more; returns the bytes written.
  size_t Fill() const {
    std::FILE* f = std::fopen((dir_ + "/filler").c_str(), "wb");
    if (!f) return 0;
    std::vector<char> block(64 * 1024, 0);
    size_t written = 0;
    for (size_t n; (n = std::fwrite(block.data(), 1, block.size(), f)) > 0;) {
      written += n;
      if (n < block.size()) break;
    }
    std::fclose(f);
    return written;
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST_CASE("real: the report disk fills mid-run, faults are still reverted and the run is not complete") {
  auto started = Lab::Start();
  REQUIRE_MESSAGE(started.ok(), started.status().ToString());
  Lab& lab = **started;
  const std::string b1 = lab.Iface('b', 1);
  const std::string inv = lab.WriteInventory("lab.yaml");
  const std::string plan = lab.WritePlan("disk", inv,
                                         "  - {at: 0s, kind: link_down, target: r01.tray02.nic1, for: 3s}\n"
                                         "  - {at: 0s, kind: gpu_throttle, target: r01.tray01.gpu2, for: 6s, "
                                         "params: {power_cap: 500W}}\n");
  SmallDisk disk(lab.dir() + "/disk");
  REQUIRE_MESSAGE(disk.mounted(), "mount -t tmpfs needs root");
  const std::string db = lab.dir() + "/disk/report.db", ledger = lab.dir() + "/report.ledger";
  const std::string log = lab.dir() + "/disk.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db, "--ledger", ledger}, log);
  REQUIRE(pid > 0);
  // Both faults on the hosts, then the report's disk fills before either is reverted.
  REQUIRE_MESSAGE(WaitFor([&] { return !lab.LinkUp(b1) && lab.PowerLimit(0, 2) == "500.00"; }, 15), ReadText(log));
  CHECK(disk.Fill() > 0);

  const int code = WaitExit(pid, 60);
  const std::string out = ReadText(log);
  CHECK_MESSAGE(code == 3, out);
  CHECK_MESSAGE(out.find("database or disk is full") != std::string::npos, out);
  CHECK(lab.LinkUp(b1));  // both faults reverted on the hosts despite the failing report
  CHECK(lab.PowerLimit(0, 2) == "1200.00");
  auto l = Ledger::Open(ledger);
  REQUIRE_MESSAGE(l.ok(), l.status().ToString());
  auto open = l->OpenEntries();
  REQUIRE(open.ok());
  CHECK(open->empty());
  // The run row says the run never finished: it is not 'passed' or 'failed'.
  std::string status;
  std::FILE* p = ::popen(("sqlite3 '" + db + "' 'select status from runs'").c_str(), "r");
  REQUIRE(p != nullptr);
  for (char buf[64]; std::fgets(buf, sizeof buf, p);) status += buf;
  ::pclose(p);
  CHECK_MESSAGE(status == "running\n", status);
}

}  // namespace
}  // namespace rackchaos::runner
