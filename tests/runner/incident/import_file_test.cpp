// How the importer reads a log file (core/user_file.h): regular files only, binary files and files with
// nothing any parser understands refused with one line that quotes none of the content.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "runner/incident/importer.h"

namespace ri = rackchaos::incident;
using rackchaos::StatusCode;

namespace {

// `text` in a fresh temp file, removed when the struct goes.
struct TempLog {
  std::string path;
  explicit TempLog(const std::string& text) {
    char name[] = "/tmp/rackchaos-import-file-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempLog() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("incident import: a log file is read when some line is understood, and an empty one is no error") {
  TempLog log("Nov 30 21:14:02 node07 kernel: mlx5_core 0000:23:00.0 enp35s0f0np0: Link down\nnoise\n");
  ri::IncidentImporter importer;
  REQUIRE(importer.ImportFile(log.path).ok());
  CHECK(importer.Finish().events.size() == 1);
  TempLog empty("");
  CHECK(ri::IncidentImporter().ImportFile(empty.path).ok());
}

TEST_CASE("incident import: a binary file is refused at its first NUL byte") {
  TempLog gz(std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8) + "compressed");
  auto s = ri::IncidentImporter().ImportFile(gz.path);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == gz.path + ":1:4: byte 0x00 is not text; an incident log is text (is this a binary or "
                                 "compressed file? decompress it first)");
}

TEST_CASE("incident import: a file none of whose lines is understood is refused without quoting it") {
  TempLog shadow("root:$6$SECRET:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n");
  auto s = ri::IncidentImporter().ImportFile(shadow.path);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().rfind(shadow.path + ": none of its 2 line(s) is in a format rackchaos reads", 0) == 0);
  CHECK(s.message().find("SECRET") == std::string::npos);
}

TEST_CASE("incident import: directories and devices are refused by what they are, before any read") {
  auto dir = ri::IncidentImporter().ImportFile(std::filesystem::temp_directory_path().string());
  CHECK(dir.code() == StatusCode::kIoError);
  CHECK(dir.message().find("is a directory, not a regular file") != std::string::npos);
  auto zero = ri::IncidentImporter().ImportFile("/dev/zero");
  CHECK(zero.code() == StatusCode::kIoError);
  CHECK(zero.message().find("is a character device") != std::string::npos);
}

// Issue 26: every number a log line gives is bounded; the first one out of range is named with its file
// and line, the line makes no event, and the lines around it import as before.
TEST_CASE("import: a number out of range in a log line is refused at FILE:LINE with its range") {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {"[99999999999.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
       "the time 99999999999.5 s is out of range; expected 0 to 3155760000 s"},
      {"[ 12.5] NVRM: Xid (PCI:0000:3b:00): 123456, pid=1, GPU has fallen off the bus.",
       "the Xid code 123456 is out of range; expected 0 to 99999"},
      {"[ 12.5] NVRM: Xid (PCI:0000:3b:00): 74, pid=1, NVLink: fatal error detected on link 5000(0x0, 0x0)",
       "the NVLink number 5000 is out of range; expected 0 to 1023"},
      {"[ 12.5] mlx5_core 0000:08:00.0 mlx5_0: Port: 256 Link DOWN", "the NIC port 256 is out of range; expected 0 to 255"},
      {"{\"time\": -1, \"event\": \"gpu_fail\", \"component\": \"r01.tray01.gpu0\"}", "the time -1 s is out of range"},
      {"[2026-01-02T03:11:00.000] update_node: node gpu[0-4096] state set to DOWN",
       "the hostlist 'gpu[0-4096]' names 4097 nodes; expected 1 to 4096 on one line"},
      {"[2026-01-02T03:11:00.000] update_node: node gpu[2-1] state set to DOWN", "the hostlist range '2-1' runs backwards"},
      {"[2026-01-02T03:11:02.000] Requeuing JobId=4294967295", "the Slurm job id 4294967295 is out of range"},
      {"[rank3]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 1073741824] Watchdog caught collective "
       "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds",
       "the NCCL rank 1073741824 is out of range; expected 0 to 1073741823"},
      {"host1:1:2 [4096] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion with error 12",
       "the CUDA device 4096 is out of range; expected 0 to 4095"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    ri::IncidentImporter importer;
    importer.ImportText(std::string("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n") +
                            c.line + "\n",
                        "bad.log");
    REQUIRE_FALSE(importer.status().ok());
    CHECK(importer.status().message().rfind(std::string("bad.log:2: ") + c.message, 0) == 0);
    const ri::Incident incident = importer.Finish();
    CHECK(incident.events.size() == 1);  // line 1's Xid; line 2 made none
  }
  // At the bounds: accepted.
  ri::IncidentImporter importer;
  importer.ImportText("[3155760000] NVRM: Xid (PCI:0000:3b:00): 99999, pid=1, x\n"
                      "[ 1.0] mlx5_core 0000:08:00.0 mlx5_0: Port: 255 Link DOWN\n"
                      "[2026-01-02T03:11:00.000] update_node: node gpu[1-4096] state set to DOWN\n"
                      "[2026-01-02T03:11:02.000] Requeuing JobId=4294967294\n",
                      "edge.log");
  CHECK(importer.status().ok());
  CHECK(importer.Finish().events.size() == 1 + 1 + 4096 + 1);
}

// docs/replay.md's "Numbers out of range" table says the bounds incident.h holds (a changed bound fails here
// until the page says it too).
TEST_CASE("import: docs/replay.md's table of log-number bounds matches runner/incident/incident.h") {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/docs/replay.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto row = [&](const std::string& start, const std::string& valid) {
    CAPTURE(start);
    const size_t at = doc.find("\n| " + start);
    REQUIRE(at != std::string::npos);
    const std::string line = doc.substr(at + 1, doc.find('\n', at + 1) - at - 1);
    CHECK(line.ends_with("| " + valid + " |"));
  };
  auto n = [](double v) { return std::to_string(static_cast<int64_t>(v)); };
  row("a relative time", "0 to " + n(ri::kMaxRelativeSeconds) + " s (100 years)");
  CHECK(ri::kMaxRelativeSeconds == 100 * 365.25 * 86400);
  row("a wall-clock time", "1970-01-01 to 9999-12-31");
  CHECK(ri::kMaxWallSeconds == 253402300799.0);  // 9999-12-31T23:59:59Z
  row("an Xid or SXid code", "0 to " + n(ri::kMaxXidCode));
  row("an NVLink number", "0 to " + n(ri::kMaxLink));
  row("a NIC port", "0 to " + n(ri::kMaxNicPort));
  row("an NCCL rank", "0 to " + n(ri::kMaxNcclRank));
  row("a CUDA device", "0 to " + n(ri::kMaxNcclDevice));
  row("a Slurm job id", "1 to " + n(static_cast<double>(ri::kMaxSlurmJobId)));
  row("a hostlist", "1 to " + n(ri::kMaxNodesPerLine) + " nodes on one line, each range LOW-HIGH with LOW <= HIGH");
}
