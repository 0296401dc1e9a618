// Rendering sensors on one core: a 640x480 depth frame, a 640x480 shaded RGB frame and a
// 16x1800 lidar scan, each against the reference measured in the same run: the same rays cast
// one at a time (rtcIntersect1 in a loop, Scene::intersect_single) over the same scene.
// Figures and the command: docs/performance.md ("Rendering sensors").

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "kestrel/ecs/registry.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"
#include "kestrel/sdf/world_loader.h"

namespace {

using namespace kestrel;
using ignition::math::Pose3d;

// A 40 m square yard with walls, a ground plane, 40 boxes, 12 spheres, 8 cylinders, a sun and a
// point light: about 14k triangles, what a robot world holds around a vehicle.
std::string yard() {
  std::string s =
      "<sdf version='1.9'><world name='yard'>"
      "<light type='directional' name='sun'><direction>-0.5 0.1 -0.9</direction>"
      "<diffuse>0.8 0.8 0.8 1</diffuse></light>"
      "<light type='point' name='lamp'><pose>3 2 4 0 0 0</pose><diffuse>1 0.9 0.8 1"
      "</diffuse><attenuation><range>30</range><constant>0.5</constant><linear>0.05"
      "</linear></attenuation></light>"
      "<model name='ground'><static>true</static><link name='l'><visual name='v'>"
      "<geometry><plane><normal>0 0 1</normal><size>100 100</size></plane>"
      "</geometry></visual></link></model>";
  auto box = [&](const std::string& name, double x, double y, double z, double yaw,
                 const std::string& size) {
    s += "<model name='" + name + "'><static>true</static><pose>" + std::to_string(x) + " " +
         std::to_string(y) + " " + std::to_string(z) + " 0 0 " + std::to_string(yaw) +
         "</pose><link name='l'><visual name='v'><geometry><box><size>" + size +
         "</size></box></geometry><material><diffuse>0.6 0.5 0.4 1</diffuse></material></visual>"
         "</link></model>";
  };
  box("wall_n", 0, 20, 1.5, 0, "40 0.3 3");
  box("wall_s", 0, -20, 1.5, 0, "40 0.3 3");
  box("wall_e", 20, 0, 1.5, 0, "0.3 40 3");
  box("wall_w", -20, 0, 1.5, 0, "0.3 40 3");
  for (int i = 0; i < 40; ++i) {
    box("box" + std::to_string(i), -17 + (i * 7919 % 34), -17 + (i * 104729 % 34), 0.5, i * 0.37,
        "1 1.5 1");
  }
  for (int i = 0; i < 12; ++i) {
    s += "<model name='ball" + std::to_string(i) + "'><static>true</static><pose>" +
         std::to_string(-15 + 2.5 * i) + " " + std::to_string(5 - (i % 4) * 3) +
         " 0.6 0 0 0</pose><link name='l'><visual name='v'><geometry><sphere><radius>0.6"
         "</radius></sphere></geometry></visual></link></model>";
  }
  for (int i = 0; i < 8; ++i) {
    s += "<model name='can" + std::to_string(i) + "'><static>true</static><pose>" +
         std::to_string(6 + 1.5 * i) + " " + std::to_string(-6 + i) +
         " 1 0 0 0</pose><link name='l'><visual name='v'><geometry><cylinder><radius>0.3"
         "</radius><length>2</length></cylinder></geometry></visual></link></model>";
  }
  return s + "</world></sdf>";
}

struct Fixture {
  Fixture() {
    const ecs::Entity world = registry.create();
    sdf::load_world_string(yard(), registry, world);
    scene = std::make_unique<render::Scene>(registry, world, render::Source::kVisuals);
    model.width = 640, model.height = 480;
    model.fx = model.fy = 320 / std::tan(1.047 / 2);
    model.cx = 320, model.cy = 240;
    model.near = 0.1, model.far = 100;
    rays = render::camera_rays(model);
    // Lidar: 16 rings from -15° to +15°, 1800 rays around.
    for (int j = 0; j < 16; ++j) {
      const double el = (-15 + 2 * j) * std::numbers::pi / 180;
      for (int i = 0; i < 1800; ++i) {
        const double az = -std::numbers::pi + i * 2 * std::numbers::pi / 1799;
        lidar.push_back(static_cast<float>(std::cos(el) * std::cos(az)));
        lidar.push_back(static_cast<float>(std::cos(el) * std::sin(az)));
        lidar.push_back(static_cast<float>(std::sin(el)));
      }
    }
  }
  // World-frame rays of the camera (or lidar) for the single-ray reference.
  void world_rays(const std::vector<float>& dirs, const Pose3d& X, bool planar) {
    const std::size_t n = dirs.size() / 3;
    o.assign(3 * n, 0), d.assign(3 * n, 0), t0.assign(n, 0), t1.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto w = X.Rot().RotateVector({dirs[3 * i], dirs[3 * i + 1], dirs[3 * i + 2]});
      for (int k = 0; k < 3; ++k) {
        o[3 * i + k] = static_cast<float>(X.Pos()[k]);
        d[3 * i + k] = static_cast<float>(w[k]);
      }
      const double len = planar ? w.Length() : 1;
      t1[i] = static_cast<float>(100 / len);
    }
    hits.resize(n);
  }
  ecs::Registry registry;
  std::unique_ptr<render::Scene> scene;
  render::CameraModel model;
  std::vector<float> rays, lidar, o, d, t0, t1;
  std::vector<render::Hit> hits;
  const Pose3d camera{0, 0, 1.5, 0, 0.15, 0.3};
  const Pose3d lidar_pose{0, 0, 1.0, 0, 0, 0};
};

// FNV-1a of a frame's bytes: a change to the renderer that must not change its output is checked
// by this label before and after (docs/performance.md, "Rendering sensors").
template <class T>
std::string fnv(const std::vector<T>& v) {
  std::uint32_t h = 2166136261u;
  const auto* b = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(T); ++i) h = (h ^ b[i]) * 16777619u;
  char text[16];
  std::snprintf(text, sizeof text, "fnv %08x", h);
  return text;
}

Fixture& fixture() {
  static Fixture f;
  return f;
}

// The reference: the same rays one rtcIntersect1 at a time.
void single_ray_loop(benchmark::State& state, const std::vector<float>& dirs, const Pose3d& X,
                     bool planar) {
  auto& f = fixture();
  f.world_rays(dirs, X, planar);
  for (auto _ : state) {
    f.scene->intersect_single(f.hits.size(), f.o.data(), f.d.data(), f.t0.data(), f.t1.data(),
                              f.hits.data());
    benchmark::DoNotOptimize(f.hits.data());
  }
  state.counters["rays/s"] = benchmark::Counter(static_cast<double>(f.hits.size()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SingleRayLoopCamera(benchmark::State& state) {
  single_ray_loop(state, fixture().rays, fixture().camera, true);
}
BENCHMARK(BM_SingleRayLoopCamera)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_DepthFrame640x480(benchmark::State& state) {
  auto& f = fixture();
  render::Workers one(1);
  std::vector<float> depth(640 * 480);
  for (auto _ : state) {
    render::render_camera(*f.scene, f.model, f.rays, f.camera, {nullptr, depth.data(), nullptr},
                          one);
    benchmark::DoNotOptimize(depth.data());
  }
  state.SetLabel(fnv(depth));
  state.counters["rays/s"] =
      benchmark::Counter(640.0 * 480, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DepthFrame640x480)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_RgbFrame640x480(benchmark::State& state) {
  auto& f = fixture();
  render::Workers one(1);
  std::vector<std::uint8_t> rgb(3 * 640 * 480);
  for (auto _ : state) {
    render::render_camera(*f.scene, f.model, f.rays, f.camera, {rgb.data(), nullptr, nullptr}, one);
    benchmark::DoNotOptimize(rgb.data());
  }
  state.SetLabel(fnv(rgb));
  state.counters["rays/s"] =
      benchmark::Counter(640.0 * 480, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_RgbFrame640x480)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_SingleRayLoopLidar(benchmark::State& state) {
  single_ray_loop(state, fixture().lidar, fixture().lidar_pose, false);
}
BENCHMARK(BM_SingleRayLoopLidar)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_LidarScan16x1800(benchmark::State& state) {
  auto& f = fixture();
  render::Workers one(1);
  std::vector<float> range(16 * 1800);
  for (auto _ : state) {
    render::cast_rays(*f.scene, f.lidar, f.lidar_pose, 0.1f, 100.f, range.data(), nullptr, one);
    benchmark::DoNotOptimize(range.data());
  }
  state.SetLabel(fnv(range));
  state.counters["rays/s"] =
      benchmark::Counter(16.0 * 1800, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LidarScan16x1800)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
