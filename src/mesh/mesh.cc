#include "mesh/mesh.h"

#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cstring>
#include <fstream>
#include <limits>
#include <numbers>

#include "kestrel/core/files.h"

namespace kestrel::mesh {
namespace {

bool ends_with_dae(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".dae";
}

// assimp is told to keep a Collada file's axes as written (AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_
// DIRECTION); a file declaring Y_UP is then turned Z-up here.
bool collada_y_up(const std::string& path) {
  std::ifstream in(path);
  std::string head(8192, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("<up_axis>Y_UP</up_axis>") != std::string::npos;
}

void add_node(const aiScene& s, const aiNode& node, const aiMatrix4x4& parent,
              const std::string& submesh, TriMesh& m, bool& found) {
  const aiMatrix4x4 X = parent * node.mTransformation;
  for (unsigned k = 0; k < node.mNumMeshes; ++k) {
    const aiMesh& mesh = *s.mMeshes[node.mMeshes[k]];
    if (!submesh.empty() && submesh != mesh.mName.C_Str()) continue;
    found = true;
    if (!m.has_color && mesh.mMaterialIndex < s.mNumMaterials) {
      aiColor4D d;
      if (aiGetMaterialColor(s.mMaterials[mesh.mMaterialIndex], AI_MATKEY_COLOR_DIFFUSE, &d) ==
          aiReturn_SUCCESS) {
        m.has_color = true;
        m.diffuse[0] = d.r, m.diffuse[1] = d.g, m.diffuse[2] = d.b;
      }
    }
    const auto first = static_cast<std::uint32_t>(m.vertices.size() / 3);
    for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
      const aiVector3D p = X * mesh.mVertices[v];
      m.vertices.insert(m.vertices.end(), {p.x, p.y, p.z});
    }
    for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
      const aiFace& face = mesh.mFaces[f];
      if (face.mNumIndices != 3) continue;  // points and lines (aiProcess_Triangulate did polygons)
      m.indices.insert(m.indices.end(), {first + face.mIndices[0], first + face.mIndices[1],
                                         first + face.mIndices[2]});
    }
  }
  for (unsigned k = 0; k < node.mNumChildren; ++k) {
    add_node(s, *node.mChildren[k], X, submesh, m, found);
  }
}

}  // namespace

std::string load(const components::MeshShape& shape, const ignition::math::Vector3d& scale,
                 TriMesh& m) {
  if (shape.path.empty()) return "mesh '" + shape.uri + "' was not found";
  // A FIFO, a device or a symlink loop must not block or crash the reader: checked without
  // blocking before assimp opens it.
  if (const RegularFile f(shape.path, kMaxMeshFileBytes); !f.problem().empty()) {
    return "mesh '" + shape.path + "' " + f.problem();
  } else if (f.size() == 0) {
    return "mesh '" + shape.path + "' is empty (0 bytes)";
  }
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  // <unit meter="…">: assimp 5.2 scales the Collada root node by it (mesh_test pins it).
  const aiScene* s = importer.ReadFile(
      shape.path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType);
  if (!s || !s->mRootNode) {
    return "mesh '" + shape.path + "' could not be read: " + importer.GetErrorString();
  }
  aiMatrix4x4 root;
  if (ends_with_dae(shape.path) && collada_y_up(shape.path)) {
    aiMatrix4x4::RotationX(std::numbers::pi_v<float> / 2, root);
  }
  aiMatrix4x4 S;
  aiMatrix4x4::Scaling(aiVector3D(static_cast<float>(scale.X()), static_cast<float>(scale.Y()),
                                  static_cast<float>(scale.Z())),
                       S);
  bool found = false;
  add_node(*s, *s->mRootNode, S * root, shape.submesh, m, found);
  if (!found) return "mesh '" + shape.path + "' has no submesh '" + shape.submesh + "'";
  if (m.indices.empty()) return "mesh '" + shape.path + "' has no triangles";
  return "";
}

Bounds bounds(const TriMesh& m) {
  if (m.vertices.empty()) return {};
  constexpr double inf = std::numeric_limits<double>::infinity();
  Bounds b{{inf, inf, inf}, {-inf, -inf, -inf}};
  for (std::size_t i = 0; i + 2 < m.vertices.size(); i += 3) {
    const ignition::math::Vector3d p(m.vertices[i], m.vertices[i + 1], m.vertices[i + 2]);
    b.min.Min(p);
    b.max.Max(p);
  }
  return b;
}

std::string to_msh(const TriMesh& m) {
  const std::int32_t header[4] = {static_cast<std::int32_t>(m.vertices.size() / 3), 0, 0,
                                  static_cast<std::int32_t>(m.indices.size() / 3)};
  const std::size_t nv = m.vertices.size() * sizeof(float);
  const std::size_t nf = m.indices.size() * sizeof(std::int32_t);
  std::string out(sizeof(header) + nv + nf, '\0');
  std::memcpy(out.data(), header, sizeof(header));
  std::memcpy(out.data() + sizeof(header), m.vertices.data(), nv);
  std::memcpy(out.data() + sizeof(header) + nv, m.indices.data(), nf);  // uint32 → int32 bits
  return out;
}

}  // namespace kestrel::mesh
