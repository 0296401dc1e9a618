// The MCAP writer (include/kestrel/record/mcap.h, src/record/README.md).
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kestrel/core/error.h"
#include "kestrel/core/text.h"
#include "kestrel/record/mcap.h"
#include "record/bytes.h"
#include "record/compress.h"

namespace kestrel::record {

using namespace detail;  // NOLINT: the serialization helpers of this module

// A Message record: opcode, uint64 length, then channel (2), sequence (4), log and publish time
// (8 each): 31 bytes before its data.
constexpr std::size_t kMessageHead = 1 + 8 + 2 + 4 + 8 + 8;

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::kZstd:
      return "zstd";
    case Compression::kLz4:
      return "lz4";
    case Compression::kNone:
      break;
  }
  return "";
}

Compression parse_compression(const std::string& name) {
  if (name == "zstd") return Compression::kZstd;
  if (name == "lz4") return Compression::kLz4;
  if (name == "none") return Compression::kNone;
  throw Error(fmt::format("compression '{}': expected zstd, lz4 or none", name));
}

McapWriter::McapWriter(const std::filesystem::path& path, McapOptions options)
    : path_(path.string()), options_(std::move(options)) {
  KESTREL_DEMAND(options_.chunks_in_flight >= 1);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd_ < 0) {
    throw Error(path_,
                fmt::format("cannot open {} for writing: {}", options_.what, std::strerror(errno)));
  }
  std::string header;
  put_string(header, "");  // profile: none of the well-known ones (ros1, ros2)
  put_string(header, options_.library);
  std::string g(kMagic, kMagicSize);
  put_record(g, kHeader, header);
  try {
    write_group(g, "its header");
  } catch (const Error&) {
    ::close(fd_);
    throw;
  }
  thread_ = std::thread([this] { loop(); });
}

McapWriter::~McapWriter() {
  if (!closed_) {
    try {
      close();
    } catch (const Error& e) {
      if (!failure_seen_) spdlog::error("{}", e.what());
    }
  }
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  free_zstd_context(zstd_);
  if (fd_ >= 0) ::close(fd_);
}

void McapWriter::fail(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!failed_) failure_ = why;
  failed_ = true;
}

void McapWriter::throw_if_failed() {
  if (!failed_) return;
  std::string why;
  {
    std::lock_guard lock(mutex_);
    why = failure_;
  }
  if (std::this_thread::get_id() != thread_.get_id()) failure_seen_ = true;
  throw Error(path_, why);
}

// The writer's thread: writes the chunks handed to it, oldest first, until told to stop with
// none in hand. After a failed write it drops what it is handed (the file stays cut back).
void McapWriter::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !in_hand_.empty(); });
    if (in_hand_.empty()) return;  // stop_
    Cut& c = in_hand_.front();  // stays put while the caller appends (a deque's elements do)
    lock.unlock();
    if (!failed_) {
      try {
        write_chunk(c);
      } catch (const Error& e) {
        fail(e.what());  // the first failure's text stays (write_group set it)
      }
    }
    lock.lock();
    spares_.push_back(std::move(c.records));
    spares_.back().clear();
    in_hand_.pop_front();
    done_.notify_all();
  }
}

void McapWriter::idle() {
  std::unique_lock lock(mutex_);
  if (in_hand_.empty()) return;
  wake_.notify_one();  // it may hold one chunk unwoken (cut)
  done_.wait(lock, [&] { return in_hand_.empty(); });
}

void McapWriter::wait() {
  idle();
  throw_if_failed();
}

std::uint64_t McapWriter::chunks() {
  idle();
  return chunk_indexes_.size();
}

std::uint64_t McapWriter::bytes() {
  idle();
  return offset_;
}

// Writes `bytes` whole at the end of the file; on failure cuts the file back to where it was
// (the last complete chunk) and throws.
void McapWriter::write_group(const std::string& bytes, const char* what) {
  throw_if_failed();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      if (::ftruncate(fd_, static_cast<off_t>(offset_)) != 0) { /* not a regular file */
      }
      fail(fmt::format(
          "writing {} failed at {}: {}; the file holds {} bytes: {} in {}{}", options_.what, what,
          std::strerror(error), offset_, counted(written_messages_, "message"),
          counted(chunk_indexes_.size(), "chunk"),
          chunk_indexes_.empty()
              ? ""
              : fmt::format(" up to log time {} s, without its summary (streaming MCAP readers "
                            "read it)",
                            exact_seconds(Duration(static_cast<std::int64_t>(written_until_))))));
      throw_if_failed();
    }
    done += static_cast<std::size_t>(n);
  }
  data_crc_ = crc32(data_crc_, bytes);
  offset_ += bytes.size();
}

void McapWriter::reopen() {
  // Continue the data section: cut off Data End and the summary, the CRC as it was there.
  if (::ftruncate(fd_, static_cast<off_t>(data_end_)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(data_end_), SEEK_SET) < 0) {
    fail(fmt::format("reopening {} after its close failed: {}", options_.what,
                     std::strerror(errno)));
    throw_if_failed();
  }
  offset_ = data_end_;
  data_crc_ = data_end_crc_;
  closed_ = false;
}

std::uint16_t McapWriter::add_schema(std::string_view name, std::string_view encoding,
                                     std::string_view data) {
  wait();  // the file's end is the caller's again
  if (closed_) reopen();
  const auto id = static_cast<std::uint16_t>(schema_records_.size() + 1);
  KESTREL_DEMAND(schema_records_.size() < 65535);
  std::string s;
  put<std::uint16_t>(s, id);
  put_string(s, name);
  put_string(s, encoding);
  put_string(s, data);
  std::string r;
  put_record(r, kSchema, s);
  write_group(r, "a schema");
  schema_records_.push_back(std::move(r));
  return id;
}

std::uint16_t McapWriter::add_channel(std::uint16_t schema, std::string_view topic,
                                      std::string_view message_encoding,
                                      const std::map<std::string, std::string>& metadata) {
  wait();
  if (closed_) reopen();
  KESTREL_DEMAND(schema <= schema_records_.size() && channel_records_.size() < 65535);
  const auto id = static_cast<std::uint16_t>(channel_records_.size() + 1);
  std::string c;
  put<std::uint16_t>(c, id);
  put<std::uint16_t>(c, schema);
  put_string(c, topic);
  put_string(c, message_encoding);
  std::string map;  // Map<string, string>: its byte length, then key and value strings
  for (const auto& [key, value] : metadata) {
    put_string(map, key);
    put_string(map, value);
  }
  put_string(c, map);
  std::string r;
  put_record(r, kChannel, c);
  write_group(r, "a channel");
  channel_records_.push_back(std::move(r));
  channel_counts_.push_back(0);
  chunk_index_.emplace_back();
  return id;
}

void McapWriter::set_finisher(std::uint16_t channel, Finisher finish) {
  KESTREL_DEMAND(channel >= 1 && channel < channel_counts_.size() && channel_counts_[channel] == 0);
  idle();  // the writer's thread reads finishers_ only while it holds a chunk
  if (finishers_.size() <= channel) finishers_.resize(channel + 1);
  finishers_[channel] = std::move(finish);
}

void McapWriter::advance(std::uint64_t log_time_ns) {
  if (!records_.empty() &&
      log_time_ns >= chunk_start_ + static_cast<std::uint64_t>(options_.chunk_span.count())) {
    cut();
  }
}

void McapWriter::write(std::uint16_t channel, std::uint64_t log_time_ns, std::string_view data) {
  std::memcpy(message(channel, log_time_ns, data.size()), data.data(), data.size());
}

char* McapWriter::message(std::uint16_t channel, std::uint64_t log_time_ns, std::size_t size) {
  throw_if_failed();
  if (closed_) reopen();
  KESTREL_DEMAND(channel >= 1 && channel < channel_counts_.size());
  advance(log_time_ns);
  if (records_.size() >= options_.chunk_bytes) cut();
  if (records_.empty()) chunk_start_ = chunk_end_ = log_time_ns;
  chunk_start_ = std::min(chunk_start_, log_time_ns);
  chunk_end_ = std::max(chunk_end_, log_time_ns);
  auto& index = chunk_index_[channel - 1];
  if (index.empty()) chunk_channels_.push_back(channel);
  index.emplace_back(log_time_ns, records_.size());
  // Opcode, length, channel, sequence, log and publish time, then room for the data: one
  // resize (a message a step).
  const std::size_t at = records_.size();
  records_.resize(at + kMessageHead + size);
  char* h = records_.data() + at;
  *h++ = static_cast<char>(kMessage);
  h = put_at(h, static_cast<std::uint64_t>(kMessageHead - 9 + size));
  h = put_at(h, channel);
  h = put_at(h, static_cast<std::uint32_t>(channel_counts_[channel]));
  h = put_at(h, log_time_ns);
  h = put_at(h, log_time_ns);
  if (message_count_ == 0) first_time_ = last_time_ = log_time_ns;
  first_time_ = std::min(first_time_, log_time_ns);
  last_time_ = std::max(last_time_, log_time_ns);
  ++message_count_;
  ++chunk_messages_;
  ++channel_counts_[channel];
  // The next 2 KiB of the buffer asked for now, for writing: the next step's messages then
  // find their cache lines at hand rather than each waiting for its line (a step's state sample
  // is ~1 KiB of lines last touched chunks ago). Each line is asked for once.
  const std::size_t ahead =
      std::min(records_.capacity(), records_.size() + 2048) & ~std::size_t{63};
  for (prefetched_ = std::max(prefetched_, records_.size() & ~std::size_t{63}); prefetched_ < ahead;
       prefetched_ += 64) {
    __builtin_prefetch(records_.data() + prefetched_, 1);
  }
  return h;
}

void McapWriter::flush() {
  cut();
  wait();
}

// Waits while chunks_in_flight chunks are in the writer thread's hands, then hands it the open
// one with its message indexes.
void McapWriter::cut() {
  if (records_.empty()) return;
  Cut c;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return in_hand_.size() < options_.chunks_in_flight; });
    if (!spares_.empty()) {
      c.records.swap(spares_.back());
      spares_.pop_back();
    }
  }
  throw_if_failed();
  c.records.swap(records_);
  prefetched_ = 0;
  // Room for a chunk like this one, so the next does not grow by copies (no spare yet).
  records_.reserve(c.records.size());
  c.start = chunk_start_;
  c.end = chunk_end_;
  c.messages = chunk_messages_;
  std::sort(chunk_channels_.begin(), chunk_channels_.end());
  for (std::uint16_t ch : chunk_channels_) {
    // Copied, not moved: the open chunk's index keeps its capacity (a move left it to grow
    // again from nothing in every chunk).
    c.indexes.emplace_back(ch, chunk_index_[ch - 1]);
    chunk_index_[ch - 1].clear();
  }
  chunk_channels_.clear();
  chunk_messages_ = 0;
  std::size_t held = 0;
  {
    std::lock_guard lock(mutex_);
    in_hand_.push_back(std::move(c));
    held = in_hand_.size();
  }
  // The writer's thread is woken when it holds two chunks, not at each: a wake is a system call
  // and an interrupt to the other core, ~17 µs of the caller's time each on a VM (about 1 % of
  // the X3 demo's recorded run when every chunk woke it: docs/performance.md, "Recording").
  // A chunk in hand is still written before the caller waits on it (idle) or may hand over
  // more than chunks_in_flight allow (held reaches it only through 2).
  if (held >= std::min<std::size_t>(2, options_.chunks_in_flight)) wake_.notify_one();
}

void McapWriter::finish(Cut& c) {
  const bool any = std::any_of(c.indexes.begin(), c.indexes.end(), [&](const auto& index) {
    return index.first < finishers_.size() && finishers_[index.first];
  });
  if (!any) return;
  finished_.clear();
  moved_.clear();
  const std::string_view in = c.records;
  for (std::size_t at = 0; at < in.size();) {
    KESTREL_DEMAND(in[at] == static_cast<char>(kMessage));  // a chunk holds only messages
    const std::size_t end = at + 9 + get<std::uint64_t>(in.data() + at + 1);
    const auto channel = get<std::uint16_t>(in.data() + at + 9);
    moved_.emplace_back(at, finished_.size());
    if (channel < finishers_.size() && finishers_[channel]) {
      piece_.clear();
      finishers_[channel](in.substr(at + kMessageHead, end - at - kMessageHead), piece_);
      finished_.push_back(static_cast<char>(kMessage));
      put<std::uint64_t>(finished_, kMessageHead - 9 + piece_.size());
      finished_.append(in.substr(at + 9, kMessageHead - 9));
      finished_.append(piece_);
    } else {
      finished_.append(in.substr(at, end - at));
    }
    at = end;
  }
  // The message indexes' offsets, to where their records are now.
  for (auto& [channel, index] : c.indexes) {
    for (auto& [time, offset] : index) {
      offset = std::lower_bound(moved_.begin(), moved_.end(),
                                std::pair<std::uint64_t, std::uint64_t>(offset, 0))
                   ->second;
    }
  }
  c.records.swap(finished_);
}

void McapWriter::write_chunk(Cut& c) {
  finish(c);
  compress(options_.compression, c.records, compressed_, zstd_);
  ChunkIndex ci;
  ci.start = c.start;
  ci.end = c.end;
  ci.offset = offset_;
  ci.compressed = compressed_.size();
  ci.uncompressed = c.records.size();
  std::string g;
  g.reserve(compressed_.size() + 64);
  const std::string_view compression = compression_name(options_.compression);
  g.push_back(static_cast<char>(kChunk));
  put<std::uint64_t>(g, 8 + 8 + 8 + 4 + 4 + compression.size() + 8 + compressed_.size());
  put<std::uint64_t>(g, c.start);
  put<std::uint64_t>(g, c.end);
  put<std::uint64_t>(g, c.records.size());
  put<std::uint32_t>(g, crc32(0, c.records));
  put_string(g, compression);
  put<std::uint64_t>(g, compressed_.size());
  g.append(compressed_);
  ci.length = g.size();
  // One Message Index per channel in the chunk, in channel order.
  for (const auto& [ch, index] : c.indexes) {
    ci.message_index_offsets.emplace_back(ch, offset_ + g.size());
    g.push_back(static_cast<char>(kMessageIndex));
    put<std::uint64_t>(g, 2 + 4 + 16 * index.size());
    put<std::uint16_t>(g, ch);
    put<std::uint32_t>(g, static_cast<std::uint32_t>(16 * index.size()));
    for (const auto& [t, at] : index) {
      put<std::uint64_t>(g, t);
      put<std::uint64_t>(g, at);
    }
  }
  ci.message_index_length = g.size() - ci.length;
  write_group(g, "a chunk");
  written_messages_ += c.messages;
  written_until_ = std::max(written_until_, ci.end);
  chunk_indexes_.push_back(std::move(ci));
}

void McapWriter::close() {
  throw_if_failed();
  if (closed_) return;
  flush();
  data_end_ = offset_;
  data_end_crc_ = data_crc_;
  std::string g;
  std::string c;
  put<std::uint32_t>(c, data_crc_);
  put_record(g, kDataEnd, c);
  const std::uint64_t summary_start = offset_ + g.size();
  // The summary, grouped by opcode; each group's place for the Summary Offsets.
  std::vector<std::tuple<Op, std::uint64_t, std::uint64_t>> groups;
  auto group = [&](Op op, const auto& fill) {
    const std::uint64_t at = offset_ + g.size();
    fill();
    if (offset_ + g.size() > at) groups.emplace_back(op, at, offset_ + g.size() - at);
  };
  group(kSchema, [&] {
    for (const auto& r : schema_records_) g.append(r);
  });
  group(kChannel, [&] {
    for (const auto& r : channel_records_) g.append(r);
  });
  group(kStatistics, [&] {
    std::string s;
    put<std::uint64_t>(s, message_count_);
    put<std::uint16_t>(s, static_cast<std::uint16_t>(schema_records_.size()));
    put<std::uint32_t>(s, static_cast<std::uint32_t>(channel_records_.size()));
    put<std::uint32_t>(s, 0);  // attachments
    put<std::uint32_t>(s, 0);  // metadata
    put<std::uint32_t>(s, static_cast<std::uint32_t>(chunk_indexes_.size()));
    put<std::uint64_t>(s, message_count_ ? first_time_ : 0);
    put<std::uint64_t>(s, message_count_ ? last_time_ : 0);
    put<std::uint32_t>(s, static_cast<std::uint32_t>(10 * (channel_counts_.size() - 1)));
    for (std::size_t ch = 1; ch < channel_counts_.size(); ++ch) {
      put<std::uint16_t>(s, static_cast<std::uint16_t>(ch));
      put<std::uint64_t>(s, channel_counts_[ch]);
    }
    put_record(g, kStatistics, s);
  });
  group(kChunkIndex, [&] {
    const std::string_view compression = compression_name(options_.compression);
    for (const auto& ci : chunk_indexes_) {
      std::string s;
      put<std::uint64_t>(s, ci.start);
      put<std::uint64_t>(s, ci.end);
      put<std::uint64_t>(s, ci.offset);
      put<std::uint64_t>(s, ci.length);
      put<std::uint32_t>(s, static_cast<std::uint32_t>(10 * ci.message_index_offsets.size()));
      for (const auto& [ch, at] : ci.message_index_offsets) {
        put<std::uint16_t>(s, ch);
        put<std::uint64_t>(s, at);
      }
      put<std::uint64_t>(s, ci.message_index_length);
      put_string(s, compression);
      put<std::uint64_t>(s, ci.compressed);
      put<std::uint64_t>(s, ci.uncompressed);
      put_record(g, kChunkIndex, s);
    }
  });
  const std::uint64_t summary_offset_start = offset_ + g.size();
  for (const auto& [op, at, length] : groups) {
    std::string s;
    put<std::uint8_t>(s, op);
    put<std::uint64_t>(s, at);
    put<std::uint64_t>(s, length);
    put_record(g, kSummaryOffset, s);
  }
  g.push_back(static_cast<char>(kFooter));
  put<std::uint64_t>(g, 8 + 8 + 4);
  put<std::uint64_t>(g, summary_start);
  put<std::uint64_t>(g, summary_offset_start);
  // From the summary's first byte up through the footer's summary_offset_start.
  const std::size_t from = summary_start - offset_;
  put<std::uint32_t>(g, crc32(0, std::string_view(g).substr(from)));
  g.append(kMagic, kMagicSize);
  write_group(g, "its summary");
  closed_ = true;
}

}  // namespace kestrel::record
