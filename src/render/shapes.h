#pragma once
// Triangle meshes of SDF shapes in their own frame (src/render only).

#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/components/model.h"
#include "mesh/mesh.h"

namespace kestrel::render::detail {

// Triangles in the shape's frame [m] and the mesh file's own colour (src/mesh: the one door to
// assimp).
using TriMesh = ::kestrel::mesh::TriMesh;

// Tessellates `g` (a collision plane is 20 km wide; a visual one has its <size>). Meshes are
// read by mesh::load with their <scale> (Collada files keep their Z-up axis; Y-up ones are
// turned Z-up, as Gazebo's loader does; <unit meter> applies). Returns an empty string, or why
// it could not.
std::string tessellate(const components::Geometry& g, bool collision, TriMesh& out);

}  // namespace kestrel::render::detail
