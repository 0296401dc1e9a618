// The ray-cast scene against analytic truth: distances to primitives, instances that follow
// their links, one-sided surfaces, camera rays and thread-count independence.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kestrel/components/model.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"
#include "kestrel/sdf/world_loader.h"

namespace kestrel::render {
namespace {

namespace c = components;
using ignition::math::Pose3d;

// A world of `models` (SDF model elements) with everything loaded; returns the world entity.
ecs::Entity load(ecs::Registry& r, const std::string& models) {
  const ecs::Entity world = r.create();
  const auto d = sdf::load_world_string(
      "<sdf version='1.9'><world name='w'>" + models + "</world></sdf>", r, world);
  for (const auto& f : d.findings.items()) {
    if (f.severity == sdf::Severity::kError) ADD_FAILURE() << f.message;
  }
  return world;
}

std::string box_model(const std::string& name, const std::string& pose, const std::string& size,
                      bool is_static = true) {
  return "<model name='" + name + "'><static>" + (is_static ? "true" : "false") +
         "</static><pose>" + pose + "</pose><link name='l'><visual name='v'><geometry><box><size>" +
         size + "</size></box></geometry></visual><collision name='c'><geometry><box><size>" +
         size + "</size></box></geometry></collision></link></model>";
}

Hit cast(const Scene& s, float ox, float oy, float oz, float dx, float dy, float dz,
         float tnear = 0, float tfar = 1e30f) {
  const float o[3] = {ox, oy, oz}, d[3] = {dx, dy, dz};
  Hit h;
  s.intersect(1, o, d, &tnear, &tfar, &h);
  return h;
}

TEST(RenderScene, DistancesToPrimitives) {
  ecs::Registry r;
  const auto world = load(
      r, box_model("wall", "5 0 0 0 0 0", "1 10 10") +
             "<model name='ball'><static>true</static><pose>0 6 0 0 0 0</pose><link name='l'>"
             "<visual name='v'><geometry><sphere><radius>1</radius></sphere></geometry></visual>"
             "</link></model>"
             "<model name='can'><static>true</static><pose>0 -6 0 0 0 0</pose><link name='l'>"
             "<visual name='v'><geometry><cylinder><radius>0.5</radius><length>2</length>"
             "</cylinder></geometry></visual></link></model>");
  Scene s(r, world, Source::kVisuals);
  EXPECT_EQ(s.objects().size(), 3u);
  const Hit wall = cast(s, 0, 0, 0, 1, 0, 0);
  EXPECT_FLOAT_EQ(wall.t, 4.5f);
  EXPECT_EQ(s.objects()[wall.object].entity, r.find_scoped("w::wall::l::v"));
  EXPECT_NEAR(wall.nx, -1, 1e-6);  // the normal faces the ray
  // A 32-sided sphere: the ray through a vertex row reads the radius within the chord error.
  const Hit ball = cast(s, 0, 0, 0, 0, 1, 0);
  EXPECT_NEAR(ball.t, 5.0, 1 - std::cos(std::numbers::pi / 16) + 1e-6);
  const Hit can = cast(s, 0, -6, 5, 0, 0, -1);  // down onto the cylinder's cap
  EXPECT_FLOAT_EQ(can.t, 4.0f);
  EXPECT_EQ(cast(s, 0, 0, 0, -1, 0, 0).object, Hit::kNoObject);
  EXPECT_TRUE(std::isinf(cast(s, 0, 0, 0, -1, 0, 0).t));
  // tfar limits the ray; tnear skips what is nearer
  EXPECT_EQ(cast(s, 0, 0, 0, 1, 0, 0, 0, 4).object, Hit::kNoObject);
}

TEST(RenderScene, SurfacesAreOneSided) {
  ecs::Registry r;
  const auto world = load(r, box_model("b", "0 0 0 0 0 0", "2 2 2"));
  Scene s(r, world, Source::kVisuals);
  // From inside the box nothing is seen (the rasteriser would cull those back faces).
  EXPECT_EQ(cast(s, 0, 0, 0, 1, 0, 0).object, Hit::kNoObject);
  // From outside, the near face; a ray going through sees only the front face.
  EXPECT_FLOAT_EQ(cast(s, -5, 0, 0, 1, 0, 0).t, 4.0f);
}

TEST(RenderScene, InstancesFollowTheirLinks) {
  ecs::Registry r;
  const auto world = load(r, box_model("m", "5 0 0 0 0 0", "1 1 1", /*is_static=*/false));
  Scene s(r, world, Source::kCollisions);
  EXPECT_FLOAT_EQ(cast(s, 0, 0, 0, 1, 0, 0).t, 4.5f);
  const ecs::Entity link = r.find_scoped("w::m::l");
  r.get<c::WorldPose>(link).value = Pose3d(8, 0, 0, 0, 0, std::numbers::pi / 4);
  s.update(r);
  EXPECT_EQ(s.builds(), 1u);  // moved, not rebuilt
  EXPECT_EQ(s.commits(), 1u);
  // The box turned 45° about z: its corner faces the ray at 8 - √2/2.
  const Hit h = cast(s, 0, 0, 0, 1, 0, 0);
  EXPECT_NEAR(h.t, 8 - std::sqrt(0.5), 1e-5);
  EXPECT_NEAR(h.nx, -std::sqrt(0.5), 1e-5);  // world normal of the rotated face
  s.update(r);
  EXPECT_EQ(s.commits(), 1u);  // nothing moved: no commit
}

TEST(RenderScene, CollisionsAndVisualsAreSeparateScenes) {
  ecs::Registry r;
  const auto world = load(
      r, "<model name='m'><static>true</static><link name='l'><visual name='v'><pose>3 0 0 0 0 0"
         "</pose><geometry><box><size>1 1 1</size></box></geometry></visual>"
         "<collision name='c'><pose>6 0 0 0 0 0</pose><geometry><box><size>1 1 1</size></box>"
         "</geometry></collision></link></model>");
  EXPECT_FLOAT_EQ(cast(Scene(r, world, Source::kVisuals), 0, 0, 0, 1, 0, 0).t, 2.5f);
  EXPECT_FLOAT_EQ(cast(Scene(r, world, Source::kCollisions), 0, 0, 0, 1, 0, 0).t, 5.5f);
}

TEST(RenderCamera, DefaultRaysAreSymmetricAndPlanar) {
  CameraModel m;
  m.width = 4, m.height = 2;
  m.fx = m.fy = 2, m.cx = 2, m.cy = 1;
  const auto d = camera_rays(m);
  // pixel (0, 0) at u = 0.5, v = 0.5: left and up of the axis
  EXPECT_FLOAT_EQ(d[0], 1);
  EXPECT_FLOAT_EQ(d[1], 0.75f);
  EXPECT_FLOAT_EQ(d[2], 0.25f);
  // pixel (3, 1) mirrors it
  EXPECT_FLOAT_EQ(d[3 * 7 + 1], -0.75f);
  EXPECT_FLOAT_EQ(d[3 * 7 + 2], -0.25f);
}

TEST(RenderCamera, DistortionInvertsTheBrownModel) {
  CameraModel m;
  m.width = 64, m.height = 48;
  m.fx = m.fy = 40, m.cx = 32, m.cy = 24;
  m.k1 = -0.25, m.k2 = 0.12, m.k3 = -0.01, m.p1 = 0.002, m.p2 = -0.003;
  const auto d = camera_rays(m);
  // Forward-distorting each ray's undistorted point lands on its pixel centre.
  for (std::uint32_t p : {0u, 100u, 1500u, 64u * 48u - 1u}) {
    const double x = -d[3 * p + 1], y = -d[3 * p + 2];
    const double r2 = x * x + y * y;
    const double radial = 1 + m.k1 * r2 + m.k2 * r2 * r2 + m.k3 * r2 * r2 * r2;
    const double xd = x * radial + 2 * m.p1 * x * y + m.p2 * (r2 + 2 * x * x);
    const double yd = y * radial + m.p1 * (r2 + 2 * y * y) + 2 * m.p2 * x * y;
    EXPECT_NEAR(xd * m.fx + m.cx, p % 64 + 0.5, 1e-4);
    EXPECT_NEAR(yd * m.fy + m.cy, p / 64 + 0.5, 1e-4);
  }
}

TEST(RenderCamera, OutputDoesNotDependOnTheThreadCount) {
  ecs::Registry r;
  const auto world = load(
      r, box_model("a", "4 1 0 0.3 0.2 0.1", "1 1 1") + box_model("b", "6 -1 0.5 0 0 0", "1 2 3") +
             "<light type='point' name='p'><pose>0 0 3 0 0 0</pose><diffuse>1 1 1 1</diffuse>"
             "<attenuation><range>20</range><constant>0.5</constant></attenuation></light>");
  Scene s(r, world, Source::kVisuals);
  CameraModel m;
  m.width = 67, m.height = 45;  // not multiples of the 4x4 tiles
  m.fx = m.fy = 40, m.cx = 33.5, m.cy = 22.5;
  const auto rays = camera_rays(m);
  auto frame = [&](unsigned threads) {
    Workers w(threads);
    std::vector<std::uint8_t> rgb(3 * 67 * 45);
    std::vector<float> depth(67 * 45);
    render_camera(s, m, rays, Pose3d::Zero, {rgb.data(), depth.data(), nullptr}, w);
    return std::make_pair(rgb, depth);
  };
  const auto one = frame(1);
  EXPECT_EQ(one, frame(2));
  EXPECT_EQ(one, frame(5));
  std::size_t hits = 0;
  for (float v : one.second) hits += std::isfinite(v);
  EXPECT_GT(hits, 100u);
}

// A camera without distortion or skew takes its rays from the model, not from camera_rays'
// table (render_camera): its frame is byte for byte the one of the same camera with a distortion
// too small to move a ray (k1 1e-300: 1 + k1·r² is 1), which reads the table.
TEST(RenderCamera, UndistortedDirectionsFromTheModelAreTheTablesOwn) {
  ecs::Registry r;
  const auto world = load(
      r, box_model("a", "4 1 0 0.3 0.2 0.1", "1 1 1") + box_model("b", "6 -1 0.5 0 0 0", "1 2 3") +
             "<light type='point' name='p'><pose>0 0 3 0 0 0</pose><diffuse>1 1 1 1</diffuse>"
             "<attenuation><range>20</range><constant>0.5</constant></attenuation></light>");
  Scene s(r, world, Source::kVisuals);
  CameraModel m;
  m.width = 67, m.height = 45;
  m.fx = 40, m.fy = 41.5, m.cx = 33.1, m.cy = 22.7;
  CameraModel table = m;
  table.k1 = 1e-300;
  ASSERT_TRUE(table.distorted());
  ASSERT_EQ(camera_rays(m), camera_rays(table));
  auto frame = [&](const CameraModel& cm) {
    Workers w(1);
    std::vector<std::uint8_t> rgb(3 * 67 * 45);
    std::vector<float> depth(67 * 45);
    render_camera(s, cm, camera_rays(cm), Pose3d::Zero, {rgb.data(), depth.data(), nullptr}, w);
    return std::make_pair(rgb, depth);
  };
  EXPECT_EQ(frame(m), frame(table));
}

// A camera 3 m above a floor looking straight down: every pixel's planar depth is 3 and its
// colour the ambient term plus, per light, Lambert's law with the light's attenuation and spot
// cone, computed here in double from the lights' parameters.
TEST(RenderCamera, LambertShadingOfEachLightTypeIsTheAnalyticOne) {
  ecs::Registry r;
  const auto world =
      load(r,
           "<scene><ambient>0.2 0.3 0.4 1</ambient></scene>"
           "<model name='floor'><static>true</static><pose>0 0 -0.1 0 0 0</pose><link name='l'>"
           "<visual name='v'><geometry><box><size>30 30 0.2</size></box></geometry><material>"
           "<ambient>0.3 0.2 0.1 1</ambient><diffuse>0.5 0.6 0.7 1</diffuse></material></visual>"
           "</link></model>"
           "<light type='directional' name='sun'><direction>0.3 -0.2 -0.9</direction>"
           "<diffuse>0.4 0.4 0.4 1</diffuse></light>"
           "<light type='point' name='lamp'><pose>1 0.5 1.5 0 0 0</pose><diffuse>0.6 0.5 0.4 1"
           "</diffuse><attenuation><range>2.5</range><constant>0.5</constant><linear>0.2</linear>"
           "<quadratic>0.1</quadratic></attenuation></light>"
           "<light type='spot' name='spot'><pose>-1 0 2 0 0 0</pose><direction>0 0 -1</direction>"
           "<diffuse>0.5 0.5 0.5 1</diffuse><attenuation><range>10</range><constant>1</constant>"
           "<linear>0</linear></attenuation><spot><inner_angle>0.3</inner_angle><outer_angle>0.7</"
           "outer_angle>"
           "<falloff>2</falloff></spot></light>");
  Scene s(r, world, Source::kVisuals);
  CameraModel m;
  m.width = 34, m.height = 26;  // not multiples of the 4x4 tiles
  m.fx = m.fy = 10, m.cx = 17, m.cy = 13;
  const auto rays = camera_rays(m);
  const Pose3d X_WC(0, 0, 3, 0, std::numbers::pi / 2, 0);
  Workers w(1);
  std::vector<std::uint8_t> rgb(3 * 34 * 26);
  std::vector<float> depth(34 * 26);
  render_camera(s, m, rays, X_WC, {rgb.data(), depth.data(), nullptr}, w);

  const double amb[3] = {0.2 * 0.3, 0.3 * 0.2, 0.4 * 0.1}, diffuse[3] = {0.5, 0.6, 0.7};
  const ignition::math::Vector3d sun = -ignition::math::Vector3d(0.3, -0.2, -0.9).Normalized();
  const ignition::math::Vector3d lamp(1, 0.5, 1.5), spot(-1, 0, 2);
  const double cos_inner = std::cos(0.3), cos_outer = std::cos(0.7);
  int beyond_range = 0, penumbra = 0, inner = 0, outside_cone = 0;
  for (std::size_t p = 0; p < depth.size(); ++p) {
    ASSERT_NEAR(depth[p], 3.0, 1e-5) << p;
    const auto d = X_WC.Rot().RotateVector({rays[3 * p], rays[3 * p + 1], rays[3 * p + 2]});
    const auto x = X_WC.Pos() + 3.0 * d;  // on the floor
    ASSERT_NEAR(x.Z(), 0, 1e-9);
    double c[3];
    for (int k = 0; k < 3; ++k) c[k] = amb[k] + sun.Z() * 0.4 * diffuse[k];  // n = +z
    const double lamp_col[3] = {0.6, 0.5, 0.4};
    const auto to_lamp = lamp - x;
    if (to_lamp.Length() <= 2.5) {
      const double dist = to_lamp.Length();
      const double att = 1 / (0.5 + 0.2 * dist + 0.1 * dist * dist);
      for (int k = 0; k < 3; ++k) c[k] += att * (to_lamp.Z() / dist) * lamp_col[k] * diffuse[k];
    } else {
      ++beyond_range;
    }
    const auto to_spot = spot - x;
    const double cos_a = to_spot.Z() / to_spot.Length();  // the axis points down
    double f = 0;
    if (cos_a >= cos_inner) {
      f = 1, ++inner;
    } else if (cos_a >= cos_outer) {
      f = std::pow((cos_a - cos_outer) / (cos_inner - cos_outer), 2), ++penumbra;
    } else {
      ++outside_cone;
    }
    for (int k = 0; k < 3; ++k) c[k] += f * cos_a * 0.5 * diffuse[k];
    for (int k = 0; k < 3; ++k) {
      const double expected = std::clamp(c[k], 0.0, 1.0) * 255;
      EXPECT_NEAR(rgb[3 * p + k], expected, 1.0) << "pixel " << p << " channel " << k;
    }
  }
  // Every branch of the shading was exercised.
  EXPECT_GT(beyond_range, 50);
  EXPECT_GT(penumbra, 20);
  EXPECT_GT(inner, 4);
  EXPECT_GT(outside_cone, 50);
}

}  // namespace
}  // namespace kestrel::render
