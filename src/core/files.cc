#include "kestrel/core/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kestrel/core/error.h"

namespace kestrel {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::filesystem::path& path, std::uint64_t max_bytes)
    : path_(path.string()) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    problem_ = std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    problem_ = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem_ = fmt::format("is {}, expected a regular file", kind_of(st.st_mode));
  } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    problem_ = fmt::format("is {} bytes, more than the limit of {} bytes", st.st_size, max_bytes);
  } else {
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RegularFile::read(char* out, std::uint64_t n) {
  if (!problem_.empty()) return false;
  while (n > 0) {
    const ssize_t got = ::read(fd_, out, n);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::uint64_t>(got);
  }
  return true;
}

std::string RegularFile::read_all() {
  if (!problem_.empty()) throw Error(path_, problem_);
  std::string bytes(size_, '\0');
  errno = 0;
  if (!read(bytes.data(), size_)) {
    throw Error(path_, fmt::format("cannot read its {} bytes: {}", size_,
                                   errno ? std::strerror(errno) : "it got shorter while read"));
  }
  return bytes;
}

std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  return RegularFile(path, max_bytes).read_all();
}

}  // namespace kestrel
