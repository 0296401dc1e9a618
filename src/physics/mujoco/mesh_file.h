#pragma once
// Collision mesh files, checked before MuJoCo sees them (private to src/physics/mujoco).
//
// MuJoCo 2.2 reads binary STL with 1 to 200,000 triangles and OBJ; Kestrel hands it the bytes
// through its VFS, whose sizes are C ints. A file that is not a regular file (a FIFO, a device,
// /proc), empty, larger than kMaxMeshBytes or an STL MuJoCo would refuse is reported by Kestrel
// with the file's name, before anything is read or allocated.

#include <cstdint>
#include <string>

namespace kestrel::physics::mujoco {

/// The largest mesh file Kestrel reads [bytes]: 64 MiB. A binary STL at MuJoCo 2.2's limit of
/// 200,000 triangles is 10,000,084 bytes; an OBJ of that many triangles ~15 MB.
inline constexpr std::uint64_t kMaxMeshBytes = 64ull << 20;

/// What is wrong with the mesh file at `path` for MuJoCo 2.2, empty if nothing. Reads at most
/// the 84-byte STL header; never blocks on a FIFO or a device (opened non-blocking).
std::string mesh_file_problem(const std::string& path);

/// The whole file, after the same checks. @throws Error naming the file.
std::string read_mesh_file(const std::string& path);

}  // namespace kestrel::physics::mujoco
