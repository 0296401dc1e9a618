#include "sitl/mavlink/codec.h"

#include <algorithm>
#include <cstring>

namespace kestrel::sitl::mavlink {

std::uint16_t crc16_accumulate(const std::uint8_t* data, std::size_t n, std::uint16_t crc) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t t = data[i] ^ static_cast<std::uint8_t>(crc & 0xFF);
    t ^= static_cast<std::uint8_t>(t << 4);
    crc = static_cast<std::uint16_t>((crc >> 8) ^ (t << 8) ^ (t << 3) ^ (t >> 4));
  }
  return crc;
}

const MessageInfo* find_message(std::uint32_t id) {
  const auto* first = std::begin(kMessageInfo);
  const auto* last = std::end(kMessageInfo);
  const auto* it =
      std::lower_bound(first, last, id, [](const MessageInfo& m, std::uint32_t v) { return m.id < v; });
  return (it != last && it->id == id) ? it : nullptr;
}

std::size_t write_frame_v2(std::uint32_t msgid, std::uint8_t crc_extra,
                           const std::uint8_t* payload, std::size_t length, std::uint8_t seq,
                           Endpoint from, std::uint8_t* out) {
  // MAVLink 2 drops trailing zero bytes of the payload; the receiver zero-extends.
  while (length > 1 && payload[length - 1] == 0) --length;
  out[0] = kStxV2;
  out[1] = static_cast<std::uint8_t>(length);
  out[2] = 0;  // incompat flags: unsigned
  out[3] = 0;  // compat flags
  out[4] = seq;
  out[5] = from.sysid;
  out[6] = from.compid;
  out[7] = static_cast<std::uint8_t>(msgid & 0xFF);
  out[8] = static_cast<std::uint8_t>((msgid >> 8) & 0xFF);
  out[9] = static_cast<std::uint8_t>((msgid >> 16) & 0xFF);
  std::memcpy(out + kHeaderV2, payload, length);
  std::uint16_t crc = crc16_accumulate(out + 1, kHeaderV2 - 1 + length);
  crc = crc16_accumulate(&crc_extra, 1, crc);
  put_le(out + kHeaderV2 + length, crc);
  return kHeaderV2 + length + 2;
}

std::size_t write_frame_v1(std::uint8_t msgid, std::uint8_t crc_extra, const std::uint8_t* payload,
                           std::size_t length, std::uint8_t seq, Endpoint from, std::uint8_t* out) {
  out[0] = kStxV1;
  out[1] = static_cast<std::uint8_t>(length);
  out[2] = seq;
  out[3] = from.sysid;
  out[4] = from.compid;
  out[5] = msgid;
  std::memcpy(out + kHeaderV1, payload, length);
  std::uint16_t crc = crc16_accumulate(out + 1, kHeaderV1 - 1 + length);
  crc = crc16_accumulate(&crc_extra, 1, crc);
  put_le(out + kHeaderV1 + length, crc);
  return kHeaderV1 + length + 2;
}

std::size_t Parser::append(const std::uint8_t* data, std::size_t n) {
  if (end_ + n > buf_.size() && begin_ > 0) {  // compact
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  const std::size_t k = std::min(n, buf_.size() - end_);
  std::memcpy(buf_.data() + end_, data, k);
  end_ += k;
  return k;
}

void Parser::skip(std::size_t n) {
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
}

std::optional<Frame> Parser::next() {
  for (;;) {
    // Find a start byte.
    std::size_t i = begin_;
    while (i < end_ && buf_[i] != kStxV2 && buf_[i] != kStxV1) ++i;
    if (i != begin_) {
      stats_.skipped_bytes += i - begin_;
      skip(i - begin_);
    }
    const std::size_t avail = end_ - begin_;
    if (avail < 2) return std::nullopt;
    const std::uint8_t* p = buf_.data() + begin_;
    const bool v2 = p[0] == kStxV2;
    const std::size_t header = v2 ? kHeaderV2 : kHeaderV1;
    if (avail < header) return std::nullopt;
    const std::uint8_t len = p[1];
    std::size_t size = header + len + 2;
    if (v2) {
      if (p[2] & ~kIncompatSigned) {
        ++stats_.bad_flags;
        ++stats_.skipped_bytes;
        skip(1);
        continue;
      }
      if (p[2] & kIncompatSigned) size += kSignatureSize;
    }
    const std::uint32_t msgid =
        v2 ? (std::uint32_t{p[7]} | (std::uint32_t{p[8]} << 8) | (std::uint32_t{p[9]} << 16))
           : p[5];
    const MessageInfo* info = find_message(msgid);
    if (!info) {
      // Without its CRC_EXTRA the frame cannot be checked: treat the start byte as noise.
      ++stats_.unknown_id;
      ++stats_.skipped_bytes;
      skip(1);
      continue;
    }
    // A length this message cannot have: reject before waiting for bytes that may never come
    // (a false start must not hold back the real frames behind it).
    if ((!v2 && len != info->min_length) || (v2 && len > info->max_length)) {
      ++stats_.bad_length;
      ++stats_.skipped_bytes;
      skip(1);
      continue;
    }
    if (avail < size) return std::nullopt;  // wait for the rest
    std::uint16_t crc = crc16_accumulate(p + 1, header - 1 + len);
    crc = crc16_accumulate(&info->crc_extra, 1, crc);
    std::uint16_t wire_crc = 0;
    get_le(p + header + len, wire_crc);
    if (crc != wire_crc) {
      ++stats_.bad_crc;
      ++stats_.skipped_bytes;
      skip(1);
      continue;
    }
    Frame f;
    f.version = v2 ? 2 : 1;
    f.length = len;
    f.msgid = msgid;
    if (v2) {
      f.incompat_flags = p[2];
      f.compat_flags = p[3];
      f.seq = p[4];
      f.sysid = p[5];
      f.compid = p[6];
    } else {
      f.seq = p[2];
      f.sysid = p[3];
      f.compid = p[4];
    }
    std::memcpy(f.payload.data(), p + header, len);  // the rest stays zero
    skip(size);
    ++stats_.frames;
    return f;
  }
}

}  // namespace kestrel::sitl::mavlink
