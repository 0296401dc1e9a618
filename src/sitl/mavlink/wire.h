#pragma once
// Little-endian field access for MAVLink payloads (the wire is little-endian; memcpy keeps it
// free of alignment and aliasing problems).

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kestrel::sitl::mavlink {

template <class T>
inline void put_le(std::uint8_t* p, T v) {
  static_assert(std::is_arithmetic_v<T>);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    std::uint8_t b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    for (std::size_t i = 0; i < sizeof v; ++i) p[i] = b[sizeof v - 1 - i];
  }
}

template <class T>
inline void get_le(const std::uint8_t* p, T& v) {
  static_assert(std::is_arithmetic_v<T>);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof v);
  } else {
    std::uint8_t b[sizeof v];
    for (std::size_t i = 0; i < sizeof v; ++i) b[i] = p[sizeof v - 1 - i];
    std::memcpy(&v, b, sizeof v);
  }
}

}  // namespace kestrel::sitl::mavlink
