// Reading MCAP files back (include/kestrel/record/mcap.h): the summary for `kestrel log info`,
// the messages for `kestrel log to-csv` and the tests. Every length is checked against the
// record and the file, and every error names the byte offset and what was expected there.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kestrel/core/error.h"
#include "kestrel/core/text.h"
#include "kestrel/record/mcap.h"
#include "record/bytes.h"
#include "record/compress.h"

namespace kestrel::record {

using namespace detail;  // NOLINT: the serialization helpers of this module

namespace {

const char* op_name(std::uint8_t op) {
  static const char* names[] = {"?",          "Header",           "Footer",
                                "Schema",     "Channel",          "Message",
                                "Chunk",      "Message Index",    "Chunk Index",
                                "Attachment", "Attachment Index", "Statistics",
                                "Metadata",   "Metadata Index",   "Summary Offset",
                                "Data End"};
  return op >= 1 && op <= 0x0F ? names[op] : "an unknown opcode";
}

// Fields of one record's content, bounds-checked; `base` is the content's offset in the file.
struct Fields {
  const std::string& file;
  std::string_view s;
  std::uint64_t base;
  std::size_t pos = 0;

  void need(std::size_t n, const char* what) const {
    if (s.size() - pos < n) {
      throw Error(file, fmt::format("at byte {}: expected {} ({} bytes), found the end of its "
                                    "record ({} bytes left): the record is malformed",
                                    base + pos, what, n, s.size() - pos));
    }
  }
  template <typename T>
  T num(const char* what) {
    need(sizeof(T), what);
    const T v = get<T>(s.data() + pos);
    pos += sizeof(T);
    return v;
  }
  std::string_view bytes(std::size_t n, const char* what) {
    need(n, what);
    const std::string_view v = s.substr(pos, n);
    pos += n;
    return v;
  }
  std::string_view str(const char* what) { return bytes(num<std::uint32_t>(what), what); }
};

McapSummary::Schema parse_schema(Fields f) {
  McapSummary::Schema s;
  s.id = f.num<std::uint16_t>("a schema id");
  s.name = f.str("a schema name");
  s.encoding = f.str("a schema encoding");
  s.data = f.str("the schema's data");
  s.bytes = s.data.size();
  return s;
}

McapSummary::Channel parse_channel(Fields f) {
  McapSummary::Channel c;
  c.id = f.num<std::uint16_t>("a channel id");
  c.schema = f.num<std::uint16_t>("the channel's schema id");
  c.topic = f.str("a topic");
  c.encoding = f.str("a message encoding");
  const std::string_view m = f.str("the channel's metadata");
  Fields map{f.file, m, f.base + f.pos - m.size()};
  while (map.pos < map.s.size()) {
    std::string key(map.str("a metadata key"));
    c.metadata[key] = map.str("a metadata value");
  }
  return c;
}

// The file's bytes [at, at + n) through pread. @throws Error on a read error.
std::string read_at(int fd, const std::string& path, std::uint64_t at, std::size_t n) {
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw Error(path, fmt::format("reading at byte {}: {}", at + done, std::strerror(errno)));
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  out.resize(done);
  return out;
}

struct File {
  int fd = -1;
  std::string path;
  std::uint64_t size = 0;
  explicit File(const std::filesystem::path& p) : path(p.string()) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path, fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error(path, "not a regular file");
    }
    size = static_cast<std::uint64_t>(st.st_size);
  }
  ~File() { ::close(fd); }
  std::string at(std::uint64_t offset, std::size_t n) const { return read_at(fd, path, offset, n); }
};

void check_magic(const File& f, std::uint64_t at, const char* where) {
  const std::string m = f.at(at, kMagicSize);
  if (m != std::string_view(kMagic, kMagicSize)) {
    throw Error(f.path, fmt::format("at byte {}: expected the MCAP magic {} (\\x89MCAP0\\r\\n), "
                                    "found {}: not an MCAP file, or {}",
                                    at, where,
                                    m.size() < kMagicSize ? "the end of the file" : "other bytes",
                                    at == 0 ? "not one at all" : "truncated or corrupt"));
  }
}

// A file without its summary: the complete records from the start, for the error's message.
std::string scan_complete(const File& f) {
  std::uint64_t at = kMagicSize, chunks = 0, chunk_bytes_end = at, last_time = 0;
  while (at + 9 <= f.size) {
    const std::string h = f.at(at, 9);
    const auto op = static_cast<std::uint8_t>(h[0]);
    const auto len = get<std::uint64_t>(h.data() + 1);
    if (op == 0 || len > f.size - at - 9) break;
    if (op == kChunk && len >= 16) {
      const std::string t = f.at(at + 9 + 8, 8);
      last_time = std::max(last_time, get<std::uint64_t>(t.data()));
      ++chunks;
    }
    at += 9 + len;
    if (op == kChunk || op == kMessageIndex) chunk_bytes_end = at;
  }
  return fmt::format(
      "its complete records end at byte {} of {}: {} (streaming MCAP readers read those; a run "
      "killed before it closed its recording leaves such a file)",
      at, f.size,
      chunks ? fmt::format(
                   "{} up to log time {} s, the last ending at byte {}", counted(chunks, "chunk"),
                   exact_seconds(Duration(static_cast<std::int64_t>(last_time))), chunk_bytes_end)
             : "no chunk");
}

}  // namespace

McapSummary read_summary(const std::filesystem::path& path) {
  const File f(path);
  McapSummary out;
  out.file_bytes = f.size;
  check_magic(f, 0, "that starts a file");
  {
    const std::string h = f.at(kMagicSize, 9);
    if (h.size() < 9 || h[0] != kHeader) {
      throw Error(f.path,
                  fmt::format("at byte {}: expected the Header record (opcode 0x01), "
                              "found {}",
                              kMagicSize, h.size() < 9 ? "the end of the file" : op_name(h[0])));
    }
    const auto len = get<std::uint64_t>(h.data() + 1);
    if (len > f.size - kMagicSize - 9) {
      throw Error(f.path, fmt::format("at byte {}: the Header says {} bytes, the file has {} "
                                      "after it: truncated",
                                      kMagicSize + 1, len, f.size - kMagicSize - 9));
    }
    const std::string content = f.at(kMagicSize + 9, len);
    Fields fields{f.path, content, kMagicSize + 9};
    out.profile = fields.str("the profile");
    out.library = fields.str("the library");
  }
  // Footer (29 bytes) and the closing magic.
  constexpr std::uint64_t kFooterSize = 1 + 8 + 8 + 8 + 4;
  const std::uint64_t footer_at =
      f.size >= kFooterSize + kMagicSize ? f.size - kFooterSize - kMagicSize : 0;
  const std::string tail = f.size >= kFooterSize + kMagicSize + kMagicSize
                               ? f.at(footer_at, kFooterSize + kMagicSize)
                               : std::string();
  if (tail.size() != kFooterSize + kMagicSize ||
      std::string_view(tail).substr(kFooterSize) != std::string_view(kMagic, kMagicSize) ||
      tail[0] != kFooter || get<std::uint64_t>(tail.data() + 1) != 20) {
    throw Error(f.path, fmt::format("at byte {}: expected the Footer record (opcode 0x02, 20 "
                                    "bytes) and the closing magic, found other bytes: the file "
                                    "is truncated or was not closed; {}",
                                    footer_at, scan_complete(f)));
  }
  const auto summary_start = get<std::uint64_t>(tail.data() + 9);
  const auto summary_crc = get<std::uint32_t>(tail.data() + 25);
  if (summary_start == 0) {
    throw Error(f.path, fmt::format("at byte {}: the Footer says the file has no summary section; "
                                    "Kestrel's recordings always have one",
                                    footer_at + 9));
  }
  if (summary_start < kMagicSize + 9 + 13 || summary_start > footer_at) {
    throw Error(f.path, fmt::format("at byte {}: the Footer's summary start {} is outside the "
                                    "file's data ({} to {})",
                                    footer_at + 9, summary_start, kMagicSize + 9, footer_at));
  }
  const std::string data_end = f.at(summary_start - 13, 13);
  if (data_end[0] != kDataEnd || get<std::uint64_t>(data_end.data() + 1) != 4) {
    throw Error(f.path, fmt::format("at byte {}: expected the Data End record (opcode 0x0F) "
                                    "right before the summary, found {}",
                                    summary_start - 13, op_name(data_end[0])));
  }
  const std::string summary = f.at(summary_start, footer_at - summary_start);
  if (summary_crc != 0) {
    const std::uint32_t crc =
        crc32(crc32(0, summary), std::string_view(tail).substr(0, 1 + 8 + 8 + 8));
    if (crc != summary_crc) {
      throw Error(f.path, fmt::format("at byte {}: the summary's CRC32 is {:#010x}, the Footer "
                                      "says {:#010x}: the summary (bytes {} to {}) is corrupt",
                                      footer_at + 25, crc, summary_crc, summary_start, footer_at));
    }
  }
  std::map<std::uint16_t, std::uint64_t> counts;
  bool have_stats = false;
  for (std::size_t pos = 0; pos < summary.size();) {
    const std::uint64_t at = summary_start + pos;
    if (summary.size() - pos < 9) {
      throw Error(f.path, fmt::format("at byte {}: expected a record (opcode and length), found "
                                      "{} bytes before the Footer",
                                      at, summary.size() - pos));
    }
    const auto op = static_cast<std::uint8_t>(summary[pos]);
    const auto len = get<std::uint64_t>(summary.data() + pos + 1);
    if (len > summary.size() - pos - 9) {
      throw Error(f.path, fmt::format("at byte {}: a {} record of {} bytes runs past the Footer "
                                      "at byte {}",
                                      at, op_name(op), len, footer_at));
    }
    Fields r{f.path, std::string_view(summary).substr(pos + 9, len), at + 9};
    switch (op) {
      case kSchema:
        out.schemas.push_back(parse_schema(r));
        break;
      case kChannel:
        out.channels.push_back(parse_channel(r));
        break;
      case kStatistics: {
        have_stats = true;
        out.messages = r.num<std::uint64_t>("the message count");
        r.bytes(2 + 4 + 4 + 4 + 4, "the schema, channel, attachment, metadata and chunk counts");
        out.start = r.num<std::uint64_t>("the first log time");
        out.end = r.num<std::uint64_t>("the last log time");
        Fields m{f.path, r.str("the channel message counts"), 0};
        m.base = r.base + r.pos - m.s.size();
        while (m.pos < m.s.size()) {
          const auto ch = m.num<std::uint16_t>("a channel id");
          counts[ch] = m.num<std::uint64_t>("a message count");
        }
        break;
      }
      case kChunkIndex: {
        McapSummary::Chunk c;
        c.start = r.num<std::uint64_t>("the chunk's first log time");
        c.end = r.num<std::uint64_t>("the chunk's last log time");
        c.offset = r.num<std::uint64_t>("the chunk's offset");
        c.length = r.num<std::uint64_t>("the chunk's length");
        r.str("the message index offsets");
        r.num<std::uint64_t>("the message index length");
        c.compression = r.str("the compression");
        c.compressed = r.num<std::uint64_t>("the compressed size");
        c.uncompressed = r.num<std::uint64_t>("the uncompressed size");
        if (c.offset + c.length > summary_start) {
          throw Error(f.path, fmt::format("at byte {}: a Chunk Index points at bytes {} to {}, "
                                          "past the data section (it ends at {})",
                                          at, c.offset, c.offset + c.length, summary_start - 13));
        }
        out.chunks.push_back(std::move(c));
        break;
      }
      default:
        break;  // Summary Offsets, and records Kestrel does not write
    }
    pos += 9 + len;
  }
  if (!have_stats) {
    throw Error(f.path, fmt::format("the summary (bytes {} to {}) has no Statistics record; "
                                    "Kestrel's recordings always have one",
                                    summary_start, footer_at));
  }
  for (auto& c : out.channels) c.messages = counts.count(c.id) ? counts[c.id] : 0;
  return out;
}

bool read_messages(const std::filesystem::path& path,
                   const std::function<void(const McapSummary::Channel&)>& on_channel,
                   const std::function<void(const McapMessage&)>& on_message,
                   bool allow_truncated,
                   const std::function<void(const McapSummary::Schema&)>& on_schema) {
  const File f(path);
  const std::string all = f.at(0, f.size);
  check_magic(f, 0, "that starts a file");
  std::string records;
  // Records of one section: the file's data section, or a chunk's decompressed records.
  auto each = [&](std::string_view s, std::uint64_t base, bool in_chunk, auto&& visit) -> bool {
    for (std::size_t pos = 0; pos < s.size();) {
      if (s.size() - pos < 9 || get<std::uint64_t>(s.data() + pos + 1) > s.size() - pos - 9) {
        if (!in_chunk && allow_truncated) return false;
        throw Error(f.path,
                    fmt::format("at byte {}{}: expected a complete record, found {} "
                                "bytes {}",
                                base + pos, in_chunk ? " of a chunk's records" : "", s.size() - pos,
                                in_chunk ? "before the chunk's end"
                                         : "before the end of the file: truncated"));
      }
      const auto op = static_cast<std::uint8_t>(s[pos]);
      const auto len = get<std::uint64_t>(s.data() + pos + 1);
      if (visit(op, Fields{f.path, s.substr(pos + 9, len), base + pos + 9}, base + pos)) {
        return true;
      }
      pos += 9 + len;
    }
    return false;
  };
  auto inner = [&](std::uint8_t op, Fields r, std::uint64_t) {
    if (op == kSchema && on_schema) {
      on_schema(parse_schema(r));
    } else if (op == kChannel) {
      on_channel(parse_channel(r));
    } else if (op == kMessage) {
      McapMessage m;
      m.channel = r.num<std::uint16_t>("a channel id");
      m.sequence = r.num<std::uint32_t>("a sequence");
      m.log_time = r.num<std::uint64_t>("a log time");
      m.publish_time = r.num<std::uint64_t>("a publish time");
      m.data = r.s.substr(r.pos);
      on_message(m);
    }
    return false;
  };
  auto outer = [&](std::uint8_t op, Fields r, std::uint64_t at) {
    if (op == kDataEnd) {
      const auto crc = r.num<std::uint32_t>("the data section's CRC32");
      const std::uint32_t actual = crc32(0, std::string_view(all).substr(0, at));
      if (crc != 0 && crc != actual) {
        throw Error(f.path, fmt::format("at byte {}: the data section's CRC32 is {:#010x}, Data "
                                        "End says {:#010x}: the data section is corrupt",
                                        r.base, actual, crc));
      }
      return true;
    }
    if (op == kChunk) {
      r.bytes(16, "the chunk's log times");
      const auto size = r.num<std::uint64_t>("the uncompressed size");
      const auto crc = r.num<std::uint32_t>("the uncompressed CRC32");
      const std::string_view compression = r.str("the compression");
      const auto n = r.num<std::uint64_t>("the records' length");
      const std::uint64_t data_at = r.base + r.pos;
      const std::string_view data = r.bytes(n, "the chunk's records");
      const std::string why = decompress(compression, data, size, records);
      if (!why.empty()) {
        throw Error(f.path, fmt::format("at byte {}: the chunk's records do not decompress: {}",
                                        data_at, why));
      }
      if (crc != 0 && crc32(0, records) != crc) {
        throw Error(f.path, fmt::format("at byte {}: the chunk's uncompressed CRC32 is {:#010x}, "
                                        "its record says {:#010x}: the chunk is corrupt",
                                        data_at, crc32(0, records), crc));
      }
      const std::string chunk = records;  // `records` is reused by nothing inside
      each(chunk, 0, true, inner);
      return false;
    }
    return inner(op, r, at);
  };
  if (f.size < kMagicSize + 9 || all[kMagicSize] != kHeader) {
    throw Error(f.path,
                fmt::format("at byte {}: expected the Header record (opcode 0x01)", kMagicSize));
  }
  const bool ended = each(std::string_view(all).substr(kMagicSize), kMagicSize, false, outer);
  if (!ended && !allow_truncated) {
    throw Error(f.path, fmt::format("at byte {}: expected the Data End record, found the end "
                                    "of the file: truncated",
                                    f.size));
  }
  return ended;
}

}  // namespace kestrel::record
