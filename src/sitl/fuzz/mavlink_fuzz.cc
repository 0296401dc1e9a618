// libFuzzer target for the MAVLink parser: any byte stream, fed in fuzzer-chosen chunks, must
// never crash, read out of bounds or grow memory; every delivered frame must decode.
#include <cstddef>
#include <cstdint>

#include "sitl/mavlink/codec.h"

using namespace kestrel::sitl::mavlink;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Parser parser;
  std::size_t i = 0;
  while (i < size) {
    // The first byte of each chunk says how long the chunk is (1..64).
    const std::size_t chunk = 1 + (data[i] & 0x3F);
    const std::size_t n = chunk < size - i ? chunk : size - i;
    parser.feed(data + i, n, [](const Frame& f) {
      if (auto m = decode<HilActuatorControls>(f)) (void)m->controls[15];
      if (auto m = decode<Heartbeat>(f)) (void)m->type;
      if (auto m = decode<CommandLong>(f)) (void)m->command;
      if (f.length > 255) __builtin_trap();
    });
    if (parser.buffered() > 2 * kMaxFrameSize) __builtin_trap();
    i += n;
  }
  return 0;
}
