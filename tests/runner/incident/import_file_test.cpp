// How the importer reads a log file (core/user_file.h): regular files only, binary files and files with
// nothing any parser understands refused with one line that quotes none of the content.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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
