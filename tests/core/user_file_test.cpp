// Reading a user's file (core/user_file.h): regular files only, refused by what they are before anything
// waits on them, with a size cap, and messages that never quote the content.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/user_file.h"

using namespace rackchaos;

namespace {

// A fresh directory under the temp dir, removed at the end of the test.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string t = (std::filesystem::temp_directory_path() / "rackchaos_user_file_XXXXXX").string();
    REQUIRE(mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = (path / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
};

const FileRules kPlanRules{"plan", 1024};

}  // namespace

TEST_CASE("user file: a regular file is read whole") {
  ScratchDir dir;
  const std::string file = dir.Write("plan.yaml", "name: x\n");
  auto text = ReadUserFile(file, kPlanRules);
  REQUIRE(text.ok());
  CHECK(*text == "name: x\n");
  CHECK(ReadUserFile(dir.Write("empty.yaml", ""), kPlanRules).value().empty());
}

TEST_CASE("user file: a missing file is kNotFound naming what was expected") {
  ScratchDir dir;
  auto missing = ReadUserFile((dir.path / "nope.yaml").string(), kPlanRules);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() == (dir.path / "nope.yaml").string() + ": no such plan file");
  CHECK(ReadUserFile((dir.path / "nope" / "x.yaml").string(), kPlanRules).status().code() == StatusCode::kNotFound);
}

TEST_CASE("user file: directories, devices, FIFOs and sockets are refused by what they are") {
  ScratchDir dir;
  auto d = ReadUserFile(dir.path.string(), kPlanRules);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == StatusCode::kIoError);
  CHECK(d.status().message() == dir.path.string() + ": is a directory, not a regular file; a plan is read from a regular file");
  CHECK(ReadUserFile("/dev/zero", kPlanRules).status().message().find("is a character device") != std::string::npos);
  // A FIFO nobody writes: a blocking open would wait forever; this must return at once.
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ReadUserFile(fifo, kPlanRules).status().message().find("is a FIFO (named pipe)") != std::string::npos);
  const std::string sock = (dir.path / "sock").string();
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  sock.copy(addr.sun_path, sizeof addr.sun_path - 1);
  REQUIRE(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  CHECK(ReadUserFile(sock, kPlanRules).status().message().find("is a socket") != std::string::npos);
  close(fd);
  // "-" is standard input only where the rules allow it; elsewhere it is a file named "-".
  CHECK(ReadUserFile("-", kPlanRules).status().code() == StatusCode::kNotFound);
  CHECK(ReadUserFile("", kPlanRules).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("user file: the size cap refuses a larger file unread, and a file that reports no size once it passes it") {
  ScratchDir dir;
  auto big = ReadUserFile(dir.Write("big.yaml", std::string(1025, 'x')), kPlanRules);
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().code() == StatusCode::kIoError);
  CHECK(big.status().message() == (dir.path / "big.yaml").string() + ": is 1025 bytes; a plan is at most 1 KiB");
  CHECK(ReadUserFile(dir.Write("edge.yaml", std::string(1024, 'x')), kPlanRules).ok());
  // /proc files are regular files that report size 0: the cap applies while reading.
  auto proc = ReadUserFile("/proc/self/maps", {"GPU map", 16});
  REQUIRE_FALSE(proc.ok());
  CHECK(proc.status().message() == "/proc/self/maps: is more than 16 bytes; a GPU map is at most 16 bytes");
}

TEST_CASE("user file: a path read later by another library may be missing, but not special") {
  ScratchDir dir;
  const FileRules rules{"identity_file", 0};
  CHECK(CheckNotSpecialFile((dir.path / "not-yet").string(), rules).ok());
  CHECK(CheckNotSpecialFile(dir.Write("key", "secret"), rules).ok());
  const Status zero = CheckNotSpecialFile("/dev/zero", rules);
  CHECK(zero.code() == StatusCode::kIoError);
  CHECK(zero.message() == "/dev/zero: is a character device, not a regular file; an identity_file is read from a regular file");
}

TEST_CASE("user file: a streamed file reads in blocks up to its end") {
  ScratchDir dir;
  auto file = UserFile::Open(dir.Write("log", "line 1\nline 2\n"), {"incident log", 1 << 20, true});
  REQUIRE(file.ok());
  CHECK(file->size() == 14);
  char buf[4];
  std::string all;
  for (;;) {
    auto n = file->Read(buf, sizeof buf);
    REQUIRE(n.ok());
    if (*n == 0) break;
    all.append(buf, *n);
  }
  CHECK(all == "line 1\nline 2\n");
}
