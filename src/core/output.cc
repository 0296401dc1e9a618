#include "kestrel/core/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kestrel/core/error.h"

namespace kestrel {
namespace {
constexpr std::size_t kFlushAt = 64 * 1024;  // bytes of complete records buffered
}

OutputFile::OutputFile(const std::filesystem::path& path, std::string what)
    : path_(path.string()), what_(std::move(what)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd_ < 0) {
    throw Error(path_, fmt::format("cannot open {} for writing: {}", what_, std::strerror(errno)));
  }
}

OutputFile::~OutputFile() {
  if (failure_.empty()) {
    try {
      flush();
    } catch (const Error&) {  // the owner flushes first to know; here nothing can be reported
    }
  }
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(std::string_view bytes) {
  if (!failure_.empty()) throw Error(path_, failure_);
  buffer_.append(bytes);
}

void OutputFile::end_record(bool row) {
  if (!failure_.empty()) throw Error(path_, failure_);
  ends_.emplace_back(buffer_.size(), row);
  if (buffer_.size() >= kFlushAt) flush();
}

void OutputFile::flush() {
  if (!failure_.empty()) throw Error(path_, failure_);
  const std::size_t complete = ends_.empty() ? 0 : ends_.back().first;
  std::size_t done = 0;
  while (done < complete) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, complete - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      // Records wholly written stay; a partial one is cut off.
      std::size_t kept = 0;
      for (const auto& [end, row] : ends_) {
        if (end > done) break;
        kept = end;
        rows_written_ += row ? 1 : 0;
      }
      fail(error, offset_ + kept);
    }
    done += static_cast<std::size_t>(n);
  }
  for (const auto& [end, row] : ends_) rows_written_ += row ? 1 : 0;
  offset_ += complete;
  buffer_.erase(0, complete);
  ends_.clear();
}

void OutputFile::fail(int error, std::uint64_t complete_bytes) {
  // A regular file is cut back to its last complete record (a device such as /dev/full is not).
  if (::ftruncate(fd_, static_cast<off_t>(complete_bytes)) != 0) { /* not a regular file */
  }
  failure_ = fmt::format(
      "writing {} failed after {} rows ({} bytes): {}; the file holds those {} "
      "rows",
      what_, rows_written_, complete_bytes, std::strerror(error), rows_written_);
  buffer_.clear();
  ends_.clear();
  throw Error(path_, failure_);
}

}  // namespace kestrel
