// libFuzzer target for the ArduPilot servo packet parser (sitl::parse_servo_packet): any datagram
// must be parsed or refused with a reason, never read out of bounds; a packet it accepts must
// say exactly what its bytes say (re-encoded, it is the datagram).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sitl/ardupilot_packet.h"

using namespace kestrel::sitl;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An exact-size copy: a read past the datagram is an AddressSanitizer report.
  const std::vector<std::uint8_t> datagram(data, data + size);
  ServoPacket p;
  std::string error;
  if (!parse_servo_packet(datagram.data(), datagram.size(), p, error)) {
    if (error.empty()) __builtin_trap();  // refused without a reason
    return 0;
  }
  if ((p.channels != 16 && p.channels != 32) || p.frame_rate == 0) __builtin_trap();
  std::vector<std::uint8_t> again;
  auto put16 = [&](std::uint16_t v) {
    again.push_back(static_cast<std::uint8_t>(v & 0xff));
    again.push_back(static_cast<std::uint8_t>(v >> 8));
  };
  put16(p.channels == 16 ? kServoMagic16 : kServoMagic32);
  put16(p.frame_rate);
  put16(static_cast<std::uint16_t>(p.frame_count & 0xffff));
  put16(static_cast<std::uint16_t>(p.frame_count >> 16));
  for (std::size_t i = 0; i < p.channels; ++i) put16(p.pwm[i]);
  if (again != datagram) __builtin_trap();
  for (std::size_t i = p.channels; i < p.pwm.size(); ++i) {
    if (p.pwm[i] != 0) __builtin_trap();
  }
  return 0;
}
