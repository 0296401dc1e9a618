#pragma once
// MCAP's serialization (little-endian integers, uint32-length strings) and its opcodes.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kestrel::record::detail {

inline constexpr char kMagic[] = "\x89MCAP0\r\n";  // 8 bytes, at both ends of a file
inline constexpr std::size_t kMagicSize = 8;

enum Op : std::uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kStatistics = 0x0B,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

static_assert(std::endian::native == std::endian::little, "MCAP is little-endian; so is this host");

/// `v` at `p`; returns the byte after it.
template <typename T>
char* put_at(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
  return p + sizeof(T);
}
template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  put_at(b, v);
  out.append(b, sizeof(T));
}
inline void put_string(std::string& out, std::string_view s) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}
/// A record: opcode, uint64 content length, content.
inline void put_record(std::string& out, Op op, std::string_view content) {
  out.push_back(static_cast<char>(op));
  put<std::uint64_t>(out, content.size());
  out.append(content);
}

template <typename T>
T get(const char* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return static_cast<T>(v);
}

}  // namespace kestrel::record::detail
