#pragma once
// Embree, inside src/render only.

#include <embree3/rtcore.h>

#include <cstdint>
#include <cstring>

#include "kestrel/render/scene.h"

// The per-packet lane loops, compiled once per x86-64 level and chosen at load time by the CPU
// (GCC's target_clones): AVX-512 vectors on a machine that has them, SSE2 on any. Every clone
// computes the same values (src/render/CMakeLists.txt: no contraction into FMAs).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KESTREL_SIMD_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KESTREL_SIMD_CLONES
#endif

namespace kestrel::render::detail {

// A packet's 16 lanes as one value (GCC's vector extensions): each clone lowers it to the
// vectors its machine has (4 SSE, 2 AVX or 1 AVX-512), and no loop is left to the vectoriser's
// judgement. Only in always-inlined code: never passed between functions.
using F16 = float __attribute__((vector_size(64)));
using I16 = std::int32_t __attribute__((vector_size(64)));
using B16 = std::uint8_t __attribute__((vector_size(16)));
template <class V, class T>
[[gnu::always_inline]] inline V load16(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T, class V>
[[gnu::always_inline]] inline void store16(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

/// The process's Embree device.
RTCDevice device();

/// The hits of one packet of 16 rays, lane by lane (a miss: t = +inf, Hit::kNoObject).
struct alignas(64) HitPacket {
  float t[16];
  std::uint32_t object[16];
  float nx[16], ny[16], nz[16];  ///< world normal facing the ray origin
};

/// Intersects a packet (lanes with valid[k] = -1). Without `unit_normals` a hit's normal is
/// left unnormalised (it still faces the ray origin): enough for depth and range, which never
/// read it, and for a caller that normalises the packet at once.
/// Its definition is KESTREL_SIMD_CLONES; callers go through the clone the CPU chose.
void trace16(const Scene& s, const int* valid, RTCRayHit16& rh, HitPacket& out, bool unit_normals);

}  // namespace kestrel::render::detail
