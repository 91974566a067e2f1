// The journal reader against the real journalctl (Debian 12: systemd 252), on journal files that
// systemd-journal-remote writes in a temporary directory: polls with the reader's own arguments, a
// rotation to a new file, and the vacuum of the file holding the reader's cursor. Needs journalctl
// and /lib/systemd/systemd-journal-remote (scripts/install-deps); no root, no shared names.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "runner/site/observe/journal_reader.h"

namespace ob = rackchaos::observe;
namespace fs = std::filesystem;

namespace {

constexpr const char* kRemote = "/lib/systemd/systemd-journal-remote";

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/rc-observe-journal-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string Run(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  status = pclose(p);
  return out;
}

// Kernel entries `from`..`to` (every fourth an Xid line) into a new journal file `name` of `dir`.
void Write(const std::string& dir, const std::string& name, int from, int to) {
  std::string input;
  for (int i = from; i <= to; ++i) {
    input += "__REALTIME_TIMESTAMP=" + std::to_string(1795996900000000LL + i * 1000123LL) + "\n";
    input += "__MONOTONIC_TIMESTAMP=" + std::to_string(20000000LL + i * 1000123LL) + "\n";
    input += "_BOOT_ID=4d3c2b1a00ff11ee8a9b0242ac120002\n_TRANSPORT=kernel\n_HOSTNAME=tray07\n";
    input += i % 4 == 2 ? "MESSAGE=NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, line " + std::to_string(i) + "\n\n"
                        : "MESSAGE=kernel line " + std::to_string(i) + "\n\n";
  }
  std::string in = dir + "/" + name + ".export";
  FILE* f = fopen(in.c_str(), "w");
  REQUIRE(f);
  fwrite(input.data(), 1, input.size(), f);
  fclose(f);
  int status = 0;
  Run(std::string(kRemote) + " -o " + dir + "/" + name + " - < " + in + " 2>/dev/null", status);
  REQUIRE(status == 0);
  fs::remove(in);
}

// One poll: journalctl with the reader's arguments (none needs shell quoting: no spaces or quotes).
ob::Observed Poll(ob::JournalReader& r, const std::string& dir) {
  std::string cmd = "journalctl -D " + dir;
  for (const std::string& a : r.NextArgs()) cmd += " '" + a + "'";
  int status = 0;
  std::string out = Run(cmd + " 2>/dev/null", status);
  REQUIRE(status == 0);
  return r.OnOutput(out);
}

std::vector<std::string> Xids(const ob::Observed& o) {
  std::vector<std::string> lines;
  for (const auto& b : o.observations)
    if (const auto* k = std::get_if<rackchaos::cluster::KernelLogLine>(&b)) lines.push_back(k->line.substr(k->line.rfind(' ') + 1));
  return lines;
}

}  // namespace

TEST_CASE("journal reader with the real journalctl: polls, rotation and a vacuumed cursor") {
  REQUIRE_MESSAGE(access(kRemote, X_OK) == 0, "install systemd-journal-remote (scripts/install-deps)");
  TempDir dir;
  Write(dir.path, "system@0001.journal", 0, 4);
  ob::JournalReader r("tray07", 7);
  ob::Observed start = Poll(r, dir.path);  // -n 1: line 4 is the starting point
  CHECK(start.observations.empty());
  CHECK(r.lines_read() == 0);

  Write(dir.path, "system@0002.journal", 5, 9);  // a rotation: new lines land in a new file
  ob::Observed o = Poll(r, dir.path);
  CHECK(o.errors.empty());
  CHECK(Xids(o) == std::vector<std::string>{"6"});
  CHECK(r.lines_read() == 5);
  ob::Observed again = Poll(r, dir.path);  // nothing new: nothing twice
  CHECK(again.observations.empty());
  CHECK(again.errors.empty());

  // The file holding the cursor (line 9) is vacuumed while new lines arrive in another one.
  Write(dir.path, "system.journal", 10, 14);
  fs::remove(dir.path + "/system@0002.journal");
  ob::Observed gap = Poll(r, dir.path);
  REQUIRE(gap.errors.size() == 1);
  CHECK(gap.errors[0].problem == ob::Problem::kGap);
  CHECK(gap.errors[0].what.find("is no longer in the journal") != std::string::npos);
  CHECK(Xids(gap) == std::vector<std::string>{"10", "14"});  // none skipped after the gap
  CHECK(r.lines_read() == 10);
  CHECK(Poll(r, dir.path).errors.empty());
}
