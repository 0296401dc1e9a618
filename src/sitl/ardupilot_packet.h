#pragma once
// ArduPilot SITL JSON backend: the binary servo packet ArduPilot sends each physics frame.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kestrel::sitl {

inline constexpr std::uint16_t kServoMagic16 = 18458;  ///< 16 PWM channels (40-byte packet)
inline constexpr std::uint16_t kServoMagic32 = 29569;  ///< 32 PWM channels (72-byte packet)

struct ServoPacket {
  std::uint16_t frame_rate = 0;   ///< physics frames per second of sim time ArduPilot expects
  std::uint32_t frame_count = 0;  ///< increments by one per frame
  std::size_t channels = 0;       ///< 16 or 32
  std::array<std::uint16_t, 32> pwm{};  ///< [µs], channels beyond `channels` are 0
};

/// Parses one datagram. False with `error` set on a wrong size, magic or a frame rate of 0.
bool parse_servo_packet(const std::uint8_t* data, std::size_t n, ServoPacket& out,
                        std::string& error);

}  // namespace kestrel::sitl
