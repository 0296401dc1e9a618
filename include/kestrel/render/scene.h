#pragma once
/// @file The ray-cast scene shared by every camera and lidar of a world (src/render: the only
/// door to Embree and assimp).
///
/// A Scene is built once from the registry: every <visual> (Source::kVisuals: cameras,
/// gpu_lidar) or every <collision> (Source::kCollisions: lidar/ray/cpu_lidar) becomes triangle
/// geometry in its link's frame (boxes, cylinders, spheres, capsules, ellipsoids and planes
/// tessellated; meshes read through assimp with their <scale>). Links of static models are
/// placed in the world once (one instance that never moves); every other link is an instance
/// whose transform `update` moves to
/// the link's WorldPose (a commit only when some link moved). A visual or collision added or
/// removed at run time rebuilds the scene at the next `update`.
///
/// Rendering is read-only and thread-safe: any number of threads may cast rays into one Scene
/// between two `update`s. Frames: world ENU; a camera looks along its +X axis, +Y left, +Z up
/// (Gazebo's camera frame).

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kestrel/ecs/entity.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::render {

enum class Source : std::uint8_t { kVisuals, kCollisions };

/// A world light (SDF <light>) as the shader uses it, world frame.
struct SceneLight {
  enum class Type : std::uint8_t { kDirectional, kPoint, kSpot };
  Type type = Type::kDirectional;
  ignition::math::Vector3d position;               ///< world [m] (point, spot)
  ignition::math::Vector3d direction{0, 0, -1};    ///< unit, world (directional, spot)
  ignition::math::Vector3d diffuse{1, 1, 1};       ///< RGB 0..1, times <intensity>
  double range = 10;                               ///< [m]; no light beyond (point, spot)
  double constant = 1, linear = 0, quadratic = 0;  ///< attenuation 1/(c + l·d + q·d²)
  double spot_inner = 0, spot_outer = 0;           ///< half-angles [rad] (spot)
  double spot_falloff = 1;                         ///< spot falloff exponent
};

/// What a ray hit. `t` is in units of the ray direction's length (planar depth for camera rays,
/// whose direction has a camera-frame x component of 1); +inf when nothing was hit.
struct Hit {
  float t = std::numeric_limits<float>::infinity();
  std::uint32_t object = kNoObject;  ///< index into Scene::objects(); kNoObject on a miss
  float nx = 0, ny = 0, nz = 0;      ///< unit world normal facing the ray origin
  static constexpr std::uint32_t kNoObject = 0xffffffffu;
};

/// One visual or collision of the scene.
struct SceneObject {
  ecs::Entity entity = ecs::kNullEntity;  ///< the visual or collision
  ecs::Entity link = ecs::kNullEntity;    ///< the link it belongs to
  ecs::Entity model = ecs::kNullEntity;   ///< the model directly above the link
  float diffuse[3] = {0.7f, 0.7f, 0.7f};  ///< material diffuse RGB 0..1 (SDF default grey)
  float ambient[3] = {0.7f, 0.7f, 0.7f};  ///< material ambient RGB 0..1
  std::uint32_t triangles = 0;
  int label = -1;               ///< components::SemanticLabel of the visual; -1: none (background)
  ignition::math::Pose3d pose;  ///< X_LO: the visual's (collision's) pose in its link
  bool heat_source = false;     ///< has a components::Temperature (thermal cameras)
  double temperature = 0;       ///< that temperature [K]
  /// Vertices of its triangles in its own frame (scale applied), xyz: what bounding-box
  /// cameras project (src/sensors/rendering/boxes.cc).
  std::vector<float> vertices;
};

/// A problem met while building (a mesh that could not be read, an empty shape): the object is
/// left out and the finding says which and why.
struct SceneFinding {
  ecs::Entity entity = ecs::kNullEntity;
  std::string message;
};

class Scene {
 public:
  /// Builds the scene of `world` from the registry's current state.
  Scene(const ecs::Registry& r, ecs::Entity world, Source source);
  ~Scene();
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  /// Moves every instance to its link's WorldPose (lights attached to links too); commits only
  /// when some transform changed. Rebuilds when visuals/collisions were added or removed.
  void update(const ecs::Registry& r);

  /// Intersects n rays (origins o, directions d, world frame, each 3 floats) with the scene;
  /// hits beyond tfar[i] (or before tnear[i]) are ignored. Uses Embree's packets of 16.
  void intersect(std::size_t n, const float* o, const float* d, const float* tnear,
                 const float* tfar, Hit* hits) const;

  /// The same, one rtcIntersect1 per ray (no packets, two-sided): the reference of the
  /// benchmarks (bench/render_bench.cc), never used by the sensors.
  void intersect_single(std::size_t n, const float* o, const float* d, const float* tnear,
                        const float* tfar, Hit* hits) const;

  const std::vector<SceneObject>& objects() const { return objects_; }
  const std::vector<SceneLight>& lights() const { return lights_; }
  const std::vector<SceneFinding>& findings() const { return findings_; }
  /// Overrides the world's <scene> ambient light and background colour (RGB 0..1).
  void set_lighting(const ignition::math::Vector3d& ambient,
                    const ignition::math::Vector3d& background) {
    ambient_ = ambient;
    background_ = background;
  }
  ignition::math::Vector3d ambient() const { return ambient_; }
  ignition::math::Vector3d background() const { return background_; }
  Source source() const { return source_; }
  /// Number of rebuilds and of commits after moves since construction (tests, benchmarks).
  std::uint64_t builds() const { return builds_; }
  std::uint64_t commits() const { return commits_; }

  struct Impl;
  const Impl& impl() const { return *impl_; }  ///< Embree's side (src/render only)

 private:
  void build(const ecs::Registry& r);
  void update_lights(const ecs::Registry& r);

  ecs::Entity world_;
  Source source_;
  std::unique_ptr<Impl> impl_;
  std::vector<SceneObject> objects_;
  std::vector<SceneLight> lights_;
  std::vector<SceneFinding> findings_;
  ignition::math::Vector3d ambient_{0.4, 0.4, 0.4}, background_{0.7, 0.7, 0.7};
  std::uint64_t builds_ = 0, commits_ = 0;
};

}  // namespace kestrel::render
