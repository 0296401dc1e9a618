#pragma once
/// @file Files Kestrel writes while it runs (the ground-truth CSV): every write checked, never
/// silently short.
///
/// Records (CSV rows) are buffered and written whole. When the system refuses a write (a full
/// disk, /dev/full, a file-size limit) the file is cut back to the last complete record, and
/// the Error says what failed after how many records; every later write throws it again. The
/// owner flushes at the end of a run (sim::RunEnded) so that the last records are checked too.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

class OutputFile {
 public:
  /// Creates or truncates `path`; `what` names it in messages ("--truth-csv"; "rows" counted).
  /// @throws Error naming the file when it cannot be opened for writing.
  OutputFile(const std::filesystem::path& path, std::string what);
  ~OutputFile();  ///< flushes what it can (unchecked: call flush() to know) and closes
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends to the current record. @throws Error if an earlier write failed.
  void write(std::string_view bytes);
  /// Ends the current record (counted as a row when `row`; a header is not). May write.
  /// @throws Error when a write fails: "<what> FILE: writing failed after N rows (B bytes):
  /// <reason>; the file holds those N rows".
  void end_record(bool row = true);
  /// Writes every complete record still buffered. @throws Error as end_record.
  void flush();

  const std::string& path() const { return path_; }
  /// Rows the file holds (written and accepted by the system).
  std::uint64_t rows_written() const { return rows_written_; }

 private:
  void fail(int error, std::uint64_t complete_bytes);

  std::string path_, what_;
  int fd_ = -1;
  std::string buffer_;                              // complete records, then the current one
  std::vector<std::pair<std::size_t, bool>> ends_;  // end offset in buffer_, is a row
  std::uint64_t offset_ = 0;                        // bytes in the file
  std::uint64_t rows_written_ = 0;
  std::string failure_;  // the first failure, repeated by later calls
};

}  // namespace kestrel
