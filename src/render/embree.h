#pragma once
// Embree, inside src/render only.

#include <embree3/rtcore.h>

#include "kestrel/render/scene.h"

namespace kestrel::render::detail {

/// The process's Embree device.
RTCDevice device();

/// Intersects a packet (lanes with valid[k] = -1) and writes the first m hits. Without
/// `unit_normals` a hit's normal is left unnormalised (it still faces the ray origin): enough
/// for depth and range, which never read it.
void trace16(const Scene& s, const int* valid, RTCRayHit16& rh, Hit* out, std::size_t m,
             bool unit_normals = true);

}  // namespace kestrel::render::detail
