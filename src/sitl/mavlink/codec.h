#pragma once
/// @file MAVLink framing: CRC-16/MCRF4XX, v2 frame encoding (trailing-zero payload trimming) and
/// a streaming parser for v2 and v1 frames that survives garbage, truncated frames and bad
/// lengths. Message layouts come from the generated messages.h (src/sitl/gen/mavgen_kestrel.py).
///
/// Only src/sitl speaks MAVLink (one door per wire format); nothing here is public API.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "sitl/mavlink/messages.h"

namespace kestrel::sitl::mavlink {

inline constexpr std::uint8_t kStxV1 = 0xFE;
inline constexpr std::uint8_t kStxV2 = 0xFD;
inline constexpr std::size_t kHeaderV1 = 6;   ///< STX len seq sys comp msgid
inline constexpr std::size_t kHeaderV2 = 10;  ///< STX len incompat compat seq sys comp msgid×3
inline constexpr std::size_t kSignatureSize = 13;
inline constexpr std::uint8_t kIncompatSigned = 0x01;
/// The largest frame on the wire: v2 header, 255 payload bytes, CRC, signature.
inline constexpr std::size_t kMaxFrameSize = kHeaderV2 + 255 + 2 + kSignatureSize;

/// CRC-16/MCRF4XX (MAVLink's "X.25" checksum): poly 0x1021 reflected, init 0xFFFF, no final xor.
std::uint16_t crc16_accumulate(const std::uint8_t* data, std::size_t n, std::uint16_t crc = 0xFFFF);

/// The dialect table entry for a message id, or nullptr if the dialect does not define it.
const MessageInfo* find_message(std::uint32_t id);

/// Who sends a frame.
struct Endpoint {
  std::uint8_t sysid = 1;
  std::uint8_t compid = 1;
};

/// Writes one v2 frame (unsigned) around `payload` (its full, untrimmed length `length`), trimming
/// trailing zero bytes (at least one byte stays). Returns the frame size.
/// @pre out holds kMaxFrameSize bytes; length ≤ 255.
std::size_t write_frame_v2(std::uint32_t msgid, std::uint8_t crc_extra,
                           const std::uint8_t* payload, std::size_t length, std::uint8_t seq,
                           Endpoint from, std::uint8_t* out);
/// Writes one v1 frame (no trimming; msgid < 256). Kestrel never sends v1; tests and the fuzz
/// seeds use it. Returns the frame size.
std::size_t write_frame_v1(std::uint8_t msgid, std::uint8_t crc_extra, const std::uint8_t* payload,
                           std::size_t length, std::uint8_t seq, Endpoint from, std::uint8_t* out);

/// Encodes message `m` as a v2 frame into `out` (kMaxFrameSize bytes). Returns the frame size.
template <class M>
std::size_t encode(const M& m, std::uint8_t seq, Endpoint from, std::uint8_t* out) {
  std::array<std::uint8_t, M::kMaxLength> payload{};
  m.encode(payload.data());
  return write_frame_v2(M::kId, M::kCrcExtra, payload.data(), payload.size(), seq, from, out);
}

/// A frame whose CRC checked out, with its payload zero-extended to 255 bytes.
struct Frame {
  int version = 2;  ///< 1 or 2
  std::uint8_t seq = 0;
  std::uint8_t sysid = 0;
  std::uint8_t compid = 0;
  std::uint8_t incompat_flags = 0;
  std::uint8_t compat_flags = 0;
  std::uint32_t msgid = 0;
  std::uint8_t length = 0;  ///< payload bytes on the wire (after trimming)
  std::array<std::uint8_t, 255> payload{};
};

/// The message in `f` if it is an M.
template <class M>
std::optional<M> decode(const Frame& f) {
  if (f.msgid != M::kId) return std::nullopt;
  return M::decode(f.payload.data());
}

/// Streaming parser: feed bytes as they arrive, get each valid frame once. Bytes that do not
/// start a frame, frames with a bad CRC, unknown message ids (their CRC cannot be checked),
/// unsupported incompatibility flags or a v1 length that does not match the message are
/// skipped by resynchronising one byte further, and counted. Memory is bounded (two frames).
class Parser {
 public:
  struct Stats {
    std::uint64_t frames = 0;          ///< valid frames delivered
    std::uint64_t bad_crc = 0;         ///< a frame-shaped sequence whose CRC failed
    std::uint64_t bad_length = 0;      ///< CRC ok but a length the message cannot have
    std::uint64_t unknown_id = 0;      ///< a message id this dialect does not define
    std::uint64_t bad_flags = 0;       ///< v2 incompatibility flags other than "signed"
    std::uint64_t skipped_bytes = 0;   ///< bytes dropped while resynchronising
  };

  /// Consumes n bytes; calls on_frame(const Frame&) for every valid frame completed by them.
  template <class F>
  void feed(const std::uint8_t* data, std::size_t n, F&& on_frame) {
    while (n > 0) {
      const std::size_t k = append(data, n);
      data += k;
      n -= k;
      while (auto f = next()) on_frame(*f);
    }
  }
  const Stats& stats() const { return stats_; }
  /// Bytes held waiting for the rest of a frame.
  std::size_t buffered() const { return end_ - begin_; }
  void clear() { begin_ = end_ = 0; }

 private:
  std::size_t append(const std::uint8_t* data, std::size_t n);
  std::optional<Frame> next();
  void skip(std::size_t n);

  std::array<std::uint8_t, 2 * kMaxFrameSize> buf_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  Stats stats_;
};

}  // namespace kestrel::sitl::mavlink
