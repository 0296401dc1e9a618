#pragma once
// Mesh files as triangles: the only door to assimp (src/mesh/README.md). Physics hands the
// triangles of formats MuJoCo 2.2 cannot read to MuJoCo as its binary MSH; a ray-cast scene
// reads the same triangles.

#include <cstdint>
#include <ignition/math/Vector3.hh>
#include <string>
#include <vector>

#include "kestrel/components/model.h"

namespace kestrel::mesh {

struct TriMesh {
  std::vector<float> vertices;         // x y z per vertex [m], in the mesh's frame
  std::vector<std::uint32_t> indices;  // 3 per triangle
  bool has_color = false;              // the file's own diffuse colour (first material)
  float diffuse[3] = {0, 0, 0};
};

// The largest mesh file read [bytes]: 256 MiB (physics holds collision meshes to less).
inline constexpr std::uint64_t kMaxMeshFileBytes = 256ull << 20;

// Reads `shape.path` (any format assimp reads: dae, stl, obj, fbx, 3ds, ply, ...) into `out`,
// every node's transform applied, in metres: a Collada file's <unit meter="…"> is applied and its
// Z-up axis kept (a Y_UP file is turned Z-up), then `scale` (SDF
// <scale>). Only the submesh named `shape.submesh` when it is not empty. Returns an empty
// string, or why the mesh could not be read (naming the file; a file that is no regular file,
// or is empty or larger than kMaxMeshFileBytes, is refused before it is opened for reading).
std::string load(const components::MeshShape& shape, const ignition::math::Vector3d& scale,
                 TriMesh& out);

// The axis-aligned box around the vertices [m] (both zero for an empty mesh).
struct Bounds {
  ignition::math::Vector3d min, max;
  ignition::math::Vector3d size() const { return max - min; }
};
Bounds bounds(const TriMesh& m);

// MuJoCo's binary mesh format (.msh: vertex, normal, texcoord and face counts, then the arrays),
// vertices and faces only.
std::string to_msh(const TriMesh& m);

}  // namespace kestrel::mesh
