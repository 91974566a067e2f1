// The one way rackchaos reads a file a user names: every file argument and every path inside a plan or an
// inventory (plans, site inventories, healer policies, GPU maps, incident logs) comes through here.
//
// - Only regular files are read. A directory, a device (/dev/zero), a FIFO or a socket is refused by what
//   it is, before anything waits on it: opening is non-blocking and the file is checked again after open.
// - "-" means standard input where the command documents it (FileRules::stdin_dash); it may be a pipe.
// - A size cap: a regular file larger than max_bytes is refused unread; anything that grows past it while
//   being read (standard input, /proc files that report size 0) is refused once it does.
// - Messages name the file and what is wrong with it, never its content: "PATH: is a FIFO (named pipe), not
//   a regular file; ...", "PATH: is 17179869185 bytes; an incident log is at most 16 GiB".
// Codes: kNotFound (no such file), kIoError (anything else about the file itself: its kind, its size,
// permissions, a read error). Problems in the content are the caller's to report (kInvalidArgument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos {

struct FileRules {
  std::string_view what;    // "plan", "site inventory", "healer policy", "GPU map", "incident log"
  uint64_t max_bytes = 0;   // larger files are refused
  bool stdin_dash = false;  // "-" reads standard input (only where the command's help says so)
};

// Size caps of the files rackchaos reads, documented where each format is.
inline constexpr uint64_t kMaxPlanBytes = 16u << 20;
inline constexpr uint64_t kMaxInventoryBytes = 4u << 20;
inline constexpr uint64_t kMaxPolicyBytes = 1u << 20;
inline constexpr uint64_t kMaxGpuMapBytes = 16u << 20;
inline constexpr uint64_t kMaxIncidentLogBytes = uint64_t{16} << 30;
inline constexpr uint64_t kMaxKnownHostsBytes = 4u << 20;
inline constexpr uint64_t kMaxCatalogueBytes = 1u << 20;

// An open user file, read in blocks (incident logs stream through it). Move-only; closes on destruction
// (standard input is left open). Not thread-safe.
class UserFile {
 public:
  // Opens `path` under `rules`; fails as described above.
  static Result<UserFile> Open(const std::string& path, const FileRules& rules);
  UserFile(UserFile&& other) noexcept;
  UserFile& operator=(UserFile&& other) noexcept;
  UserFile(const UserFile&) = delete;
  UserFile& operator=(const UserFile&) = delete;
  ~UserFile();

  // Reads up to `n` bytes into `buf`; 0 at the end of the file. kIoError on a read error or once more
  // than max_bytes have been read.
  Result<size_t> Read(char* buf, size_t n);
  // The file's size when it is a regular file (0 for standard input).
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  UserFile(int fd, std::string path, const FileRules& rules, uint64_t size);

  int fd_ = -1;
  bool owns_fd_ = false;
  std::string path_;
  std::string what_;
  uint64_t max_bytes_ = 0;
  uint64_t size_ = 0;
  uint64_t read_ = 0;
};

// Reads the whole of `path` under `rules`.
Result<std::string> ReadUserFile(const std::string& path, const FileRules& rules);

// For a path another library reads later (an SSH identity, a known_hosts file): OK when it is a regular
// file or does not exist (yet); the refusal Open() gives when it is a directory, device, FIFO or socket,
// which that library would block on or loop over, or when it cannot be looked at (a name too long, a
// loop of symbolic links, no permission). Reads nothing.
Status CheckNotSpecialFile(const std::string& path, const FileRules& rules);

}  // namespace rackchaos
