#pragma once
/// @file MCAP files (src/record/README.md), written and read from the public MCAP
/// specification: magic, Header, Schema and Channel records in the data section, Messages in
/// Chunks (zstd, lz4 or none, each with the CRC32 of its uncompressed records) followed by one
/// Message Index per channel, Data End with the data section's CRC32, and a summary section
/// (Schemas, Channels, Statistics, Chunk Indexes, each group listed by a Summary Offset), Footer
/// with the summary's CRC32, magic. src/record is the only door to zstd and lz4.
///
/// Crash safety: a chunk and its message indexes reach the file in one write, and a chunk never
/// spans more than `chunk_span` of log time, so a process killed without warning leaves a file
/// that streaming readers read up to its last complete chunk. A cut chunk is compressed and
/// written on the writer's own thread while the next one fills (at most one is in hand there:
/// a cut waits for the one before), so a kill loses at most two chunks' spans.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kestrel/core/time.h"

namespace kestrel::record {

enum class Compression { kNone, kZstd, kLz4 };

/// The chunk `compression` string: "", "zstd", "lz4".
const char* compression_name(Compression c);
/// @throws Error naming the accepted values when `name` is none of "zstd", "lz4", "none".
Compression parse_compression(const std::string& name);

struct McapOptions {
  Compression compression = Compression::kZstd;
  Duration chunk_span = std::chrono::seconds(1);  ///< log time one chunk spans at most
  std::size_t chunk_bytes = 4 << 20;  ///< a chunk is cut once its records reached this [bytes]
  /// Cut chunks not yet in the file at most (compressed and written by the writer's thread, in
  /// order); a cut waits while this many are. With the open chunk, a SIGKILL loses at most
  /// (chunks_in_flight + 1) · chunk_span of log time. At least 1.
  std::size_t chunks_in_flight = 1;
  std::string what = "the recording";  ///< names the file in messages ("--record")
  std::string library = "kestrel";     ///< the Header's library field
};

/// Writes one MCAP file. Every write is checked: when the system refuses one (a full disk, a
/// file-size limit) the file is cut back to its last complete chunk and Error says so (the
/// file then has no summary; streaming readers read it up to there); every later call throws
/// the same Error — for a chunk written on the writer's thread, the next call after it failed.
/// Not thread-safe: one thread calls it (its own thread only writes the chunks handed to it).
class McapWriter {
 public:
  /// Creates or truncates `path` and writes the magic and the Header at once.
  /// @throws Error naming the file when it cannot be opened or written.
  McapWriter(const std::filesystem::path& path, McapOptions options);
  /// Closes the file if it is open (an error is logged: call close() to know).
  ~McapWriter();
  McapWriter(const McapWriter&) = delete;
  McapWriter& operator=(const McapWriter&) = delete;

  /// A Schema record (ids 1, 2, ...), written to the data section now. @throws Error as write.
  std::uint16_t add_schema(std::string_view name, std::string_view encoding, std::string_view data);
  /// A Channel record (ids 1, 2, ...; `schema` 0: none) with its metadata map, written to the
  /// data section now.
  std::uint16_t add_channel(std::uint16_t schema, std::string_view topic,
                            std::string_view message_encoding,
                            const std::map<std::string, std::string>& metadata = {});

  /// Cuts the open chunk when `log_time_ns` is `chunk_span` or more after its first message,
  /// so a quiet stretch does not keep a chunk open. @throws Error when a write fails.
  void advance(std::uint64_t log_time_ns);
  /// A Message (publish time = log time; sequence: the channel's message count). Cuts the
  /// chunk first when the message would make it span `chunk_span` or when the chunk has
  /// reached `chunk_bytes`.
  /// @pre `channel` was returned by add_channel. @throws Error when a write fails.
  void write(std::uint16_t channel, std::uint64_t log_time_ns, std::string_view data);
  /// write() of `size` bytes the caller puts at the pointer returned, before its next call:
  /// a message made in place, without a copy.
  char* message(std::uint16_t channel, std::uint64_t log_time_ns, std::size_t size);
  /// What becomes of a channel's messages on the writer's thread, just before their chunk is
  /// compressed: `finish(written, out)` gets the bytes write() was given and puts the message's
  /// bytes into `out` (empty at each call). The caller's thread hands over what is cheap to
  /// make and the writer's thread does the rest (src/record/README.md, "The file"). It
  /// runs on the writer's thread only and must share nothing the caller changes; an Error it
  /// throws fails the file as a failed write does.
  using Finisher = std::function<void(std::string_view written, std::string& out)>;
  /// @pre nothing written to `channel` yet.
  void set_finisher(std::uint16_t channel, Finisher finish);
  /// Writes the open chunk (if it holds messages) and its message indexes, and waits until
  /// every cut chunk is in the file. @throws Error when a write failed.
  void flush();
  /// Writes the open chunk, Data End, the summary, the Footer and the magic: the file is
  /// complete. A write after close() continues the file from its Data End (the summary is
  /// written again at the next close). @throws Error when a write fails.
  void close();

  const std::string& path() const { return path_; }
  /// True after close() until the next write.
  bool closed() const { return closed_; }
  std::uint64_t messages() const { return message_count_; }
  /// Chunks in the file (after waiting for the one in hand).
  std::uint64_t chunks();
  /// Messages per channel id (index 0 unused).
  const std::vector<std::uint64_t>& channel_messages() const { return channel_counts_; }
  /// Bytes in the file (after waiting for the chunk in hand).
  std::uint64_t bytes();

 private:
  struct ChunkIndex {
    std::uint64_t start = 0, end = 0, offset = 0, length = 0;
    std::vector<std::pair<std::uint16_t, std::uint64_t>> message_index_offsets;
    std::uint64_t message_index_length = 0, compressed = 0, uncompressed = 0;
  };
  // A cut chunk, handed to the writer's thread: its records, log-time span, message count and
  // each of its channels' message index (log time, offset in the records), in channel order.
  struct Cut {
    std::string records;
    std::uint64_t start = 0, end = 0, messages = 0;
    std::vector<std::pair<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>>>
        indexes;
  };
  void write_group(const std::string& bytes, const char* what);
  void reopen();
  void cut();                // hands the open chunk to the writer's thread
  void wait();               // until the writer's thread holds no chunk; throws its failure
  void write_chunk(Cut& c);  // on the writer's thread
  void finish(Cut& c);       // on the writer's thread: the finishers' messages in place
  void loop();               // the writer's thread
  void idle();               // until the writer's thread holds no chunk
  void throw_if_failed();    // the failure of a write, on either thread
  void fail(const std::string& why);

  std::string path_;
  McapOptions options_;
  int fd_ = -1;
  // Written by the writer's thread while it holds a chunk, else by the caller's: offset_,
  // data_crc_, chunk_indexes_, written_*, compressed_, zstd_.
  std::uint64_t offset_ = 0;         // bytes in the file
  std::uint32_t data_crc_ = 0;       // CRC32 of the file so far (the data section while open)
  std::string failure_;              // the first failed write, repeated by later calls (mutex_)
  std::atomic<bool> failed_{false};  // failure_ is set
  bool failure_seen_ = false;        // the caller was told (the destructor does not log it)
  bool closed_ = false;
  std::uint64_t data_end_ = 0;  // offset of Data End once closed
  std::uint32_t data_end_crc_ = 0;
  std::vector<std::string> schema_records_, channel_records_;  // for the summary
  std::vector<std::uint64_t> channel_counts_{0};
  // the open chunk
  std::string records_, compressed_;
  std::size_t prefetched_ = 0;  // records_'s bytes before this asked for (message)
  std::uint64_t chunk_start_ = 0, chunk_end_ = 0;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> chunk_index_;  // by channel
  std::vector<std::uint16_t> chunk_channels_;
  std::vector<ChunkIndex> chunk_indexes_;
  std::uint64_t message_count_ = 0, first_time_ = 0, last_time_ = 0;
  std::uint64_t chunk_messages_ = 0, written_messages_ = 0, written_until_ = 0;  // on disk
  void* zstd_ = nullptr;  // ZSTD_CCtx, reused
  std::vector<Finisher> finishers_;  // by channel id (empty: written as given)
  // The writer's thread's: a finished chunk's records, a message's bytes, and where each of
  // the chunk's records moved (offset before, after).
  std::string finished_, piece_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> moved_;
  // The writer's thread and the chunks in its hands, oldest (the one being written) first.
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Cut> in_hand_;
  std::vector<std::string> spares_;  // written chunks' records buffers, reused for the next ones
  bool stop_ = false;
  std::thread thread_;
};

/// What an MCAP file's summary section says (read by `kestrel log info`).
struct McapSummary {
  struct Schema {
    std::uint16_t id = 0;
    std::string name, encoding;
    std::uint64_t bytes = 0;
    std::string data;  ///< the schema itself (bytes long)
  };
  struct Channel {
    std::uint16_t id = 0, schema = 0;
    std::string topic, encoding;
    std::map<std::string, std::string> metadata;
    std::uint64_t messages = 0;
  };
  struct Chunk {
    std::uint64_t start = 0, end = 0, offset = 0, length = 0;
    std::string compression;
    std::uint64_t compressed = 0, uncompressed = 0;
  };
  std::string profile, library;
  std::vector<Schema> schemas;
  std::vector<Channel> channels;
  std::vector<Chunk> chunks;
  std::uint64_t messages = 0, start = 0, end = 0;  ///< log times [ns]
  std::uint64_t file_bytes = 0;
};

/// Reads the Header, the Footer and the summary section, checking the magic at both ends,
/// every record's length, Data End before the summary and the summary's CRC.
/// @throws Error "FILE: at byte N: expected ..., found ..." when the file is truncated or
/// corrupt; for a file without its summary (a killed run) the message says how many complete
/// chunks it holds and up to which log time.
McapSummary read_summary(const std::filesystem::path& path);

/// One message read back.
struct McapMessage {
  std::uint16_t channel = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0, publish_time = 0;
  std::string_view data;
};

/// Reads the data section from the start (Schemas, Channels, Chunks: decompressed and their
/// CRCs checked; the data section's CRC at Data End) and calls `on_message` in file order.
/// `on_channel` receives the Channel records as they come, `on_schema` (if set) the Schemas.
/// @throws Error naming the byte offset when a record is malformed, a CRC differs, or the file
/// ends before Data End (unless `allow_truncated`: then reading stops at the last complete
/// record and returns false).
/// @return true when Data End was reached.
bool read_messages(const std::filesystem::path& path,
                   const std::function<void(const McapSummary::Channel&)>& on_channel,
                   const std::function<void(const McapMessage&)>& on_message,
                   bool allow_truncated = false,
                   const std::function<void(const McapSummary::Schema&)>& on_schema = {});

}  // namespace kestrel::record
