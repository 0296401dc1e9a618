#pragma once
/// @file Reading files a user named without blocking and without surprises: a FIFO, a device,
/// /proc, a symlink loop, an over-long name or a huge file is refused with the reason, never
/// waited on (open is non-blocking, only regular files are read) and never read whole.

#include <cstdint>
#include <filesystem>
#include <string>

namespace kestrel {

/// A file opened for reading with O_NONBLOCK, checked to be a regular file of at most
/// `max_bytes` (on the open descriptor, so a file swapped after a check is still caught).
class RegularFile {
 public:
  RegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  /// Why it cannot be read ("is a FIFO, expected a regular file", "Too many levels of symbolic
  /// links"), empty when it can.
  const std::string& problem() const { return problem_; }
  std::uint64_t size() const { return size_; }
  /// Reads the next `n` bytes into `out`. False on an error or a file that got shorter.
  bool read(char* out, std::uint64_t n);
  /// The whole file (size() bytes). @throws Error(path, …) on problem() or a failed read.
  std::string read_all();

 private:
  std::string path_;
  std::string problem_;
  std::uint64_t size_ = 0;
  int fd_ = -1;
};

/// RegularFile(path, max_bytes).read_all(). @throws Error naming the file and the reason.
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes);

}  // namespace kestrel
