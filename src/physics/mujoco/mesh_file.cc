#include "physics/mujoco/mesh_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "kestrel/core/error.h"
#include "kestrel/core/files.h"

namespace kestrel::physics::mujoco {
namespace {

constexpr std::uint64_t kStlHeader = 84;    // 80 bytes of text, then the triangle count
constexpr std::uint64_t kStlTriangle = 50;  // normal, 3 vertices (float32), 2 attribute bytes
constexpr std::uint64_t kStlMaxTriangles = 200'000;  // MuJoCo 2.2's limit for binary STL

bool is_stl(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".stl";
}

// Opened without blocking (a FIFO's open would wait for a writer), a regular file of
// 1 to kMaxMeshBytes bytes. Returns the problem, empty when the file is fit.
std::string problem_of(const RegularFile& f) {
  if (!f.problem().empty()) {
    if (f.problem().starts_with("is ") && f.problem().find("more than") != std::string::npos) {
      return fmt::format(
          "the mesh file {}: Kestrel reads collision meshes up to 64 MiB (MuJoCo 2.2 reads at "
          "most 200,000 STL triangles, 10,000,084 bytes)",
          f.problem());
    }
    return "the mesh file " +
           (f.problem().starts_with("is ") ? f.problem() : "cannot be read: " + f.problem());
  }
  if (f.size() == 0) return "the mesh file is empty (0 bytes)";
  return {};
}

// MuJoCo 2.2's STL rules, checked on the header alone.
std::string stl_problem(const char* header, std::uint64_t size) {
  const bool ascii = size >= 5 && std::strncmp(header, "solid", 5) == 0;
  if (size < kStlHeader && ascii) {
    return "the STL file is ASCII; MuJoCo 2.2 reads binary STL only (convert it, e.g. with "
           "meshlab or admesh)";
  }
  if (size < kStlHeader) {
    return fmt::format("the STL file is {} bytes, shorter than a binary STL header (84 bytes)",
                       size);
  }
  std::uint32_t n = 0;
  std::memcpy(&n, header + 80, 4);  // little-endian, as MuJoCo reads it on this machine
  if (n < 1 || n > kStlMaxTriangles || kStlHeader + kStlTriangle * n != size) {
    if (ascii) {
      return "the STL file is ASCII; MuJoCo 2.2 reads binary STL only (convert it, e.g. with "
             "meshlab or admesh)";
    }
    return fmt::format(
        "the binary STL header says {} triangles ({} bytes), the file has {} bytes; MuJoCo 2.2 "
        "reads 1 to 200,000 triangles",
        n, kStlHeader + kStlTriangle * std::uint64_t{n}, size);
  }
  return {};
}

}  // namespace

std::string mesh_file_problem(const std::string& path) {
  RegularFile f(path, kMaxMeshBytes);
  if (auto p = problem_of(f); !p.empty()) return p;
  if (!is_stl(path)) return {};
  char header[kStlHeader] = {};
  if (!f.read(header, std::min<std::uint64_t>(f.size(), kStlHeader))) {
    return fmt::format("cannot read the mesh file: {}", std::strerror(errno));
  }
  return stl_problem(header, f.size());
}

std::string read_mesh_file(const std::string& path) {
  RegularFile f(path, kMaxMeshBytes);
  if (auto p = problem_of(f); !p.empty()) throw Error(path, p);
  std::string bytes = f.read_all();
  if (is_stl(path)) {
    if (auto p = stl_problem(bytes.data(), bytes.size()); !p.empty()) throw Error(path, p);
  }
  return bytes;
}

}  // namespace kestrel::physics::mujoco
