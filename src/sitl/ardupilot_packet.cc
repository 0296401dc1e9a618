#include "sitl/ardupilot_packet.h"

#include "sitl/mavlink/wire.h"

namespace kestrel::sitl {

bool parse_servo_packet(const std::uint8_t* data, std::size_t n, ServoPacket& out,
                        std::string& error) {
  using mavlink::get_le;
  if (n < 8) {
    error = "datagram of " + std::to_string(n) + " bytes, shorter than the 8-byte header";
    return false;
  }
  std::uint16_t magic = 0;
  get_le(data, magic);
  const std::size_t channels = magic == kServoMagic16 ? 16 : magic == kServoMagic32 ? 32 : 0;
  if (channels == 0) {
    error = "magic " + std::to_string(magic) + " (expected 18458 or 29569)";
    return false;
  }
  if (n != 8 + 2 * channels) {
    error = "magic " + std::to_string(magic) + " with " + std::to_string(n) + " bytes (expected " +
            std::to_string(8 + 2 * channels) + ")";
    return false;
  }
  get_le(data + 2, out.frame_rate);
  get_le(data + 4, out.frame_count);
  if (out.frame_rate == 0) {
    error = "frame_rate 0";
    return false;
  }
  out.channels = channels;
  out.pwm.fill(0);
  for (std::size_t i = 0; i < channels; ++i) get_le(data + 8 + 2 * i, out.pwm[i]);
  return true;
}

}  // namespace kestrel::sitl
