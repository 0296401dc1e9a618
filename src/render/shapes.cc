#include "render/shapes.h"

#include <cmath>
#include <numbers>
#include <variant>

namespace kestrel::render::detail {
namespace {

namespace c = components;
using ignition::math::Vector3d;

constexpr int kSlices = 32;  // around the axis of round shapes
constexpr int kStacks = 16;  // pole to pole of spheres and ellipsoids

void add_vertex(TriMesh& m, double x, double y, double z) {
  m.vertices.push_back(static_cast<float>(x));
  m.vertices.push_back(static_cast<float>(y));
  m.vertices.push_back(static_cast<float>(z));
}
std::uint32_t vertex_count(const TriMesh& m) {
  return static_cast<std::uint32_t>(m.vertices.size() / 3);
}
void add_triangle(TriMesh& m, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  m.indices.insert(m.indices.end(), {a, b, c});
}

void box(TriMesh& m, const Vector3d& size) {
  const Vector3d h = size / 2;
  for (int i = 0; i < 8; ++i) {
    add_vertex(m, (i & 1) ? h.X() : -h.X(), (i & 2) ? h.Y() : -h.Y(), (i & 4) ? h.Z() : -h.Z());
  }
  static constexpr std::uint32_t kFaces[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1},
                                                 {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
  for (const auto& f : kFaces) {
    add_triangle(m, f[0], f[1], f[2]);
    add_triangle(m, f[0], f[2], f[3]);
  }
}

// A ring of kSlices vertices at height z with radii (rx, ry).
std::uint32_t ring(TriMesh& m, double rx, double ry, double z) {
  const std::uint32_t first = vertex_count(m);
  for (int s = 0; s < kSlices; ++s) {
    const double a = 2 * std::numbers::pi * s / kSlices;
    add_vertex(m, rx * std::cos(a), ry * std::sin(a), z);
  }
  return first;
}
void join_rings(TriMesh& m, std::uint32_t a, std::uint32_t b) {
  for (int s = 0; s < kSlices; ++s) {
    const std::uint32_t s1 = (s + 1) % kSlices;
    add_triangle(m, a + s, a + s1, b + s1);
    add_triangle(m, a + s, b + s1, b + s);
  }
}
void cap(TriMesh& m, std::uint32_t r, double z) {
  const std::uint32_t centre = vertex_count(m);
  add_vertex(m, 0, 0, z);
  for (int s = 0; s < kSlices; ++s) add_triangle(m, centre, r + s, r + (s + 1) % kSlices);
}

// Rings from the south pole to the north pole of an ellipsoid; `split` > 0 opens it at the
// equator by that length along z (a capsule: the equator ring twice, joined by a cylinder).
void round_shape(TriMesh& m, const Vector3d& radii, double split) {
  std::vector<std::uint32_t> rings;
  for (int k = 1; k < kStacks; ++k) {
    const double polar = std::numbers::pi * k / kStacks;  // from the south pole
    const double rx = std::sin(polar) * radii.X(), ry = std::sin(polar) * radii.Y();
    const double z = -std::cos(polar) * radii.Z();
    if (split > 0 && 2 * k == kStacks) {
      rings.push_back(ring(m, rx, ry, z - split / 2));
      rings.push_back(ring(m, rx, ry, z + split / 2));
    } else {
      rings.push_back(ring(m, rx, ry, z + (2 * k < kStacks ? -split / 2 : split / 2)));
    }
  }
  for (std::size_t i = 1; i < rings.size(); ++i) join_rings(m, rings[i - 1], rings[i]);
  cap(m, rings.front(), -radii.Z() - split / 2);
  cap(m, rings.back(), radii.Z() + split / 2);
}

void plane(TriMesh& m, const Vector3d& normal, double sx, double sy) {
  const Vector3d n = normal.Normalized();
  // Two tangents: the plane's x axis is the world x projected on it (or y when n is along x).
  Vector3d tx = std::abs(n.X()) < 0.9 ? Vector3d::UnitX : Vector3d::UnitY;
  tx = (tx - n * n.Dot(tx)).Normalized();
  const Vector3d ty = n.Cross(tx);
  for (int i = 0; i < 4; ++i) {
    const Vector3d p = tx * ((i & 1) ? sx / 2 : -sx / 2) + ty * ((i & 2) ? sy / 2 : -sy / 2);
    add_vertex(m, p.X(), p.Y(), p.Z());
  }
  add_triangle(m, 0, 1, 3);
  add_triangle(m, 0, 3, 2);
}

// Winds every triangle of a shape convex about `centre` counter-clockwise seen from outside:
// (v1 - v0) × (v2 - v0) points away from the centre (a plane's along its normal).
void orient(TriMesh& m, const Vector3d& centre, const Vector3d* plane_normal) {
  auto at = [&](std::uint32_t i) {
    return Vector3d(m.vertices[3 * i], m.vertices[3 * i + 1], m.vertices[3 * i + 2]);
  };
  for (std::size_t t = 0; t + 2 < m.indices.size(); t += 3) {
    const Vector3d a = at(m.indices[t]), b = at(m.indices[t + 1]), c = at(m.indices[t + 2]);
    const Vector3d n = (b - a).Cross(c - a);
    const Vector3d out = plane_normal ? *plane_normal : (a + b + c) / 3 - centre;
    if (n.Dot(out) < 0) std::swap(m.indices[t + 1], m.indices[t + 2]);
  }
}

}  // namespace

std::string tessellate(const c::Geometry& g, bool collision, TriMesh& m) {
  struct V {
    TriMesh& m;
    bool collision;
    std::string operator()(const std::monostate&) { return "it has no geometry"; }
    std::string operator()(const c::BoxShape& b) {
      box(m, b.size);
      return "";
    }
    std::string operator()(const c::SphereShape& s) {
      round_shape(m, Vector3d(s.radius, s.radius, s.radius), 0);
      return "";
    }
    std::string operator()(const c::CylinderShape& s) {
      const std::uint32_t bottom = ring(m, s.radius, s.radius, -s.length / 2);
      const std::uint32_t top = ring(m, s.radius, s.radius, s.length / 2);
      join_rings(m, bottom, top);
      cap(m, bottom, -s.length / 2);
      cap(m, top, s.length / 2);
      return "";
    }
    std::string operator()(const c::CapsuleShape& s) {
      round_shape(m, Vector3d(s.radius, s.radius, s.radius), s.length);
      return "";
    }
    std::string operator()(const c::EllipsoidShape& s) {
      round_shape(m, s.radii, 0);
      return "";
    }
    std::string operator()(const c::PlaneShape& p) {
      // Physics' plane is infinite: the lidar's is 20 km wide, a visual keeps its <size>.
      plane(m, p.normal, collision ? 2e4 : p.size.X(), collision ? 2e4 : p.size.Y());
      return "";
    }
    std::string operator()(const c::MeshShape& s) { return mesh::load(s, s.scale, m); }
    std::string operator()(const c::HeightmapShape&) { return "heightmaps are not rendered yet"; }
  };
  const std::string why = std::visit(V{m, collision}, g.shape);
  if (!why.empty()) return why;
  if (const auto* p = std::get_if<c::PlaneShape>(&g.shape)) {
    const Vector3d n = p->normal.Normalized();
    orient(m, Vector3d::Zero, &n);
  } else if (!std::holds_alternative<c::MeshShape>(g.shape)) {
    orient(m, Vector3d::Zero, nullptr);
  }
  return "";
}

}  // namespace kestrel::render::detail
