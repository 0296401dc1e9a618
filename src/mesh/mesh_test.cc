// The mesh door: Collada units and up axis, <scale>, submeshes, MuJoCo's MSH layout.

#include "mesh/mesh.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace kestrel::mesh {
namespace {

namespace fs = std::filesystem;
using ignition::math::Vector3d;

// A Collada box from -h to +h along each axis (h in file units), as one <geometry> "box".
std::string collada_box(const Vector3d& h, const std::string& unit, const std::string& up) {
  std::string pos;
  for (int i = 0; i < 8; ++i) {
    pos += std::to_string((i & 1) ? h.X() : -h.X()) + " " +
           std::to_string((i & 2) ? h.Y() : -h.Y()) + " " +
           std::to_string((i & 4) ? h.Z() : -h.Z()) + " ";
  }
  return R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>)" +
         unit + "<up_axis>" + up +
         R"(</up_axis></asset>
  <library_geometries>
    <geometry id="box" name="box"><mesh>
      <source id="box-pos"><float_array id="box-pos-array" count="24">)" +
         pos + R"(</float_array>
        <technique_common><accessor source="#box-pos-array" count="8" stride="3">
          <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
        </accessor></technique_common></source>
      <vertices id="box-vtx"><input semantic="POSITION" source="#box-pos"/></vertices>
      <triangles count="12"><input semantic="VERTEX" source="#box-vtx" offset="0"/>
        <p>0 2 3 0 3 1 4 5 7 4 7 6 0 1 5 0 5 4 2 6 7 2 7 3 0 4 6 0 6 2 1 3 7 1 7 5</p>
      </triangles>
    </mesh></geometry>
  </library_geometries>
  <library_visual_scenes><visual_scene id="scene">
    <node id="n" name="n"><instance_geometry url="#box"/></node>
  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
)";
}

components::MeshShape write(const std::string& name, const std::string& text) {
  // One folder per test process, removed when the process ends (not left in the temp folder).
  struct Dir {
    fs::path path;
    ~Dir() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static const Dir folder{fs::temp_directory_path() /
                          ("kestrel_mesh_test_" + std::to_string(::getpid()))};
  const fs::path& dir = folder.path;
  fs::create_directories(dir);
  components::MeshShape s;
  s.path = (dir / name).string();
  s.uri = "model://m/" + name;
  std::ofstream(s.path) << text;
  return s;
}

void expect_size(const TriMesh& m, const Vector3d& size) {
  const Vector3d got = bounds(m).size();
  EXPECT_NEAR(got.X(), size.X(), 1e-6 * size.X());
  EXPECT_NEAR(got.Y(), size.Y(), 1e-6 * size.Y());
  EXPECT_NEAR(got.Z(), size.Z(), 1e-6 * size.Z());
}

TEST(Mesh, ColladaUnitMeterIsApplied) {
  // 400 × 600 × 1000 mm, declared as millimetres: 0.4 × 0.6 × 1 m.
  const auto s = write(
      "mm.dae", collada_box({200, 300, 500}, R"(<unit meter="0.001" name="millimeter"/>)", "Z_UP"));
  TriMesh m;
  ASSERT_EQ(load(s, {1, 1, 1}, m), "");
  EXPECT_EQ(m.indices.size(), 36u);
  expect_size(m, {0.4, 0.6, 1.0});
}

TEST(Mesh, ScaleMultipliesTheMetreSizes) {
  const auto s = write("cm.dae", collada_box({10, 20, 30}, R"(<unit meter="0.01"/>)", "Z_UP"));
  TriMesh m;
  ASSERT_EQ(load(s, {2, 0.5, 1}, m), "");
  expect_size(m, {0.4, 0.2, 0.6});
}

TEST(Mesh, ColladaZUpIsKeptAndYUpTurnedZUp) {
  const auto z = write("z.dae", collada_box({0.1, 0.2, 0.3}, "", "Z_UP"));
  TriMesh mz;
  ASSERT_EQ(load(z, {1, 1, 1}, mz), "");
  expect_size(mz, {0.2, 0.4, 0.6});
  // Y up: the file's y (0.4) is the world's z, its z (0.6) the world's y.
  const auto y = write("y.dae", collada_box({0.1, 0.2, 0.3}, "", "Y_UP"));
  TriMesh my;
  ASSERT_EQ(load(y, {1, 1, 1}, my), "");
  expect_size(my, {0.2, 0.6, 0.4});
}

TEST(Mesh, OtherFormatsAndSubmeshes) {
  const auto s = write("tri.obj",
                       "o first\nv 0 0 0\nv 1 0 0\nv 0 2 0\nf 1 2 3\n"
                       "o second\nv 0 0 0\nv 0 0 3\nv 1 0 0\nf 4 5 6\n");
  TriMesh all;
  ASSERT_EQ(load(s, {1, 1, 1}, all), "");
  EXPECT_EQ(all.indices.size(), 6u);
  expect_size(all, {1, 2, 3});
  auto only = s;
  only.submesh = "second";
  TriMesh one;
  ASSERT_EQ(load(only, {1, 1, 1}, one), "");
  EXPECT_EQ(one.indices.size(), 3u);
  only.submesh = "third";
  TriMesh none;
  EXPECT_THAT(load(only, {1, 1, 1}, none), ::testing::HasSubstr("has no submesh 'third'"));
}

TEST(Mesh, UnreadableFilesSayWhich) {
  components::MeshShape s;
  s.uri = "model://m/missing.dae";
  TriMesh m;
  EXPECT_EQ(load(s, {1, 1, 1}, m), "mesh 'model://m/missing.dae' was not found");
  const auto bad = write("bad.dae", "<COLLADA>not a mesh");
  EXPECT_THAT(load(bad, {1, 1, 1}, m),
              ::testing::HasSubstr("mesh '" + bad.path + "' could not be read"));
  const auto empty = write("empty.stl", "");
  EXPECT_EQ(load(empty, {1, 1, 1}, m), "mesh '" + empty.path + "' is empty (0 bytes)");
}

// A FIFO named as a mesh (a visual the ray caster reads, a collision physics reads) is refused
// at once: assimp's open would wait for a writer forever.
TEST(Mesh, AFifoIsRefusedWithoutBlocking) {
  components::MeshShape s;
  s.path = (fs::path(::testing::TempDir()) / ("mesh_fifo_" + std::to_string(::getpid()) + ".stl"))
               .string();
  fs::remove(s.path);
  ASSERT_EQ(::mkfifo(s.path.c_str(), 0600), 0);
  TriMesh m;
  EXPECT_THAT(load(s, {1, 1, 1}, m), ::testing::HasSubstr("is a FIFO"));
  fs::remove(s.path);
}

TEST(Mesh, MshIsMujocosLayout) {
  TriMesh m;
  m.vertices = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  m.indices = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  const std::string b = to_msh(m);
  ASSERT_EQ(b.size(), 16 + 12 * 4 + 12 * 4u);
  std::int32_t header[4];
  std::memcpy(header, b.data(), sizeof(header));
  EXPECT_EQ(header[0], 4);  // vertices
  EXPECT_EQ(header[1], 0);  // normals
  EXPECT_EQ(header[2], 0);  // texture coordinates
  EXPECT_EQ(header[3], 4);  // faces
  float x1;
  std::memcpy(&x1, b.data() + 16 + 3 * 4, 4);
  EXPECT_EQ(x1, 1.0f);
  std::int32_t last;
  std::memcpy(&last, b.data() + b.size() - 4, 4);
  EXPECT_EQ(last, 3);
}

}  // namespace
}  // namespace kestrel::mesh
