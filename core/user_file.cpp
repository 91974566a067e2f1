#include "core/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/strings.h"

namespace rackchaos {
namespace {

constexpr size_t kBlockBytes = 64 << 10;

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string Shown(const std::string& path) { return path == "-" ? "standard input" : path; }

Status NotRegular(const std::string& path, const FileRules& rules, mode_t mode) {
  return Status::IoError(path + ": is " + KindOf(mode) + ", not a regular file; " + WithArticle(rules.what) +
                         " is read from a regular file" +
                         (rules.stdin_dash ? " (or from standard input: give '-' and pipe it in)" : ""));
}

Status TooLarge(const std::string& path, const FileRules& rules, const std::string& size) {
  return Status::IoError(Shown(path) + ": is " + size + "; " + WithArticle(rules.what) + " is at most " +
                         FormatBytes(rules.max_bytes));
}

Status FromErrno(const std::string& path, const FileRules& rules, int err) {
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound(path + ": no such " + std::string(rules.what) + " file");
  return Status::IoError(Shown(path) + ": cannot read the " + std::string(rules.what) + ": " + std::strerror(err));
}

}  // namespace

UserFile::UserFile(int fd, std::string path, const FileRules& rules, uint64_t size)
    : fd_(fd), owns_fd_(fd != STDIN_FILENO || path != "-"), path_(std::move(path)), what_(rules.what),
      max_bytes_(rules.max_bytes), size_(size) {}

UserFile::UserFile(UserFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      owns_fd_(std::exchange(other.owns_fd_, false)),
      path_(std::move(other.path_)),
      what_(std::move(other.what_)),
      max_bytes_(other.max_bytes_),
      size_(other.size_),
      read_(other.read_) {}

UserFile& UserFile::operator=(UserFile&& other) noexcept {
  if (this != &other) {
    if (owns_fd_) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    owns_fd_ = std::exchange(other.owns_fd_, false);
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    max_bytes_ = other.max_bytes_;
    size_ = other.size_;
    read_ = other.read_;
  }
  return *this;
}

UserFile::~UserFile() {
  if (owns_fd_) ::close(fd_);  // standard input is not ours to close
}

Result<UserFile> UserFile::Open(const std::string& path, const FileRules& rules) {
  if (path.empty()) return Status::Invalid("an empty name was given for " + WithArticle(rules.what) + " file");
  struct stat st {};
  if (path == "-" && rules.stdin_dash) {
    if (::fstat(STDIN_FILENO, &st) != 0) return FromErrno(path, rules, errno);
    if (S_ISDIR(st.st_mode)) return NotRegular("standard input", rules, st.st_mode);
    const uint64_t size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
    if (size > rules.max_bytes) return TooLarge(path, rules, std::to_string(size) + " bytes");
    return UserFile(STDIN_FILENO, path, rules, size);
  }
  // stat first: opening a FIFO would wait for a writer and opening a socket fails with a puzzling ENXIO.
  if (::stat(path.c_str(), &st) != 0) return FromErrno(path, rules, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, rules, st.st_mode);
  if (static_cast<uint64_t>(st.st_size) > rules.max_bytes)
    return TooLarge(path, rules, std::to_string(st.st_size) + " bytes");
  // Non-blocking and checked again after open: the path may have been replaced in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return FromErrno(path, rules, errno);
  UserFile file(fd, path, rules, static_cast<uint64_t>(st.st_size));
  if (::fstat(fd, &st) != 0) return FromErrno(path, rules, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, rules, st.st_mode);
  return file;
}

Result<size_t> UserFile::Read(char* buf, size_t n) {
  ssize_t got = 0;
  do {
    got = ::read(fd_, buf, n);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return FromErrno(path_, {what_, max_bytes_, false}, errno);
  read_ += static_cast<uint64_t>(got);
  if (read_ > max_bytes_) return TooLarge(path_, {what_, max_bytes_, false}, "more than " + FormatBytes(max_bytes_));
  return static_cast<size_t>(got);
}

Status CheckNotSpecialFile(const std::string& path, const FileRules& rules) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    // Missing: the reader says so when it needs it. Anything else (a name too long, a loop of links, no
    // permission) would fail later with a vaguer message, or make a std::filesystem call throw.
    const int err = errno;
    return err == ENOENT || err == ENOTDIR ? Status::Ok() : FromErrno(path, rules, err);
  }
  return S_ISREG(st.st_mode) ? Status::Ok() : NotRegular(path, rules, st.st_mode);
}

Result<std::string> ReadUserFile(const std::string& path, const FileRules& rules) {
  RC_ASSIGN_OR_RETURN(UserFile file, UserFile::Open(path, rules));
  std::string text;
  text.reserve(static_cast<size_t>(file.size()));
  for (;;) {
    const size_t at = text.size();
    text.resize(at + kBlockBytes);
    RC_ASSIGN_OR_RETURN(size_t got, file.Read(text.data() + at, kBlockBytes));
    text.resize(at + got);
    if (got == 0) return text;
  }
}

}  // namespace rackchaos
