#pragma once
/// @file Pinhole cameras (with Brown–Conrady distortion) and ray fans (lidars) cast into a
/// render::Scene, on a pool of worker threads. Every pixel and every ray is computed on its own
/// (tasks write disjoint outputs), so the output is bit-identical whatever the thread count.
///
/// Camera frame (Gazebo's): the camera looks along +X, +Y is image left, +Z image up. Pixel
/// (i, j) (column i from the left, row j from the top) is centred at image coordinates
/// (u, v) = (i + 0.5, j + 0.5), as a rasteriser samples it: with the default intrinsics
/// cx = W/2, cy = H/2 the image is symmetric about the optical axis. The undistorted ray of
/// (u, v) has camera-frame direction (1, -(x), -(y)) with x = (u - cx - s·y)/fx... see
/// camera.cc; its x component is 1, so a hit's `t` is the planar depth.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <ignition/math/Pose3.hh>
#include <mutex>
#include <thread>
#include <vector>

#include "kestrel/render/scene.h"

namespace kestrel::render {

/// A fixed pool of worker threads; the calling thread works too. `run(n, fn)` calls fn(0..n-1)
/// once each and returns when all are done.
class Workers {
 public:
  /// @param threads total threads including the caller (0 = hardware concurrency)
  explicit Workers(unsigned threads = 0);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  void run(std::size_t n, const std::function<void(std::size_t)>& fn);
  unsigned threads() const { return static_cast<unsigned>(pool_.size()) + 1; }

 private:
  void loop();
  void work();
  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0, next_ = 0, finished_ = 0;
  std::uint64_t generation_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
};

/// Camera intrinsics and lens, as SDF <camera> defines them.
struct CameraModel {
  std::uint32_t width = 320, height = 240;  ///< [px]
  double fx = 0, fy = 0, cx = 0, cy = 0;    ///< [px]
  double skew = 0;                          ///< [px]
  /// Brown–Conrady distortion (<distortion>: k1 k2 k3 p1 p2, centre in image fractions).
  double k1 = 0, k2 = 0, k3 = 0, p1 = 0, p2 = 0;
  double center_u = 0.5, center_v = 0.5;
  double near = 0.1, far = 100;  ///< clip distances [m]
  bool distorted() const { return k1 != 0 || k2 != 0 || k3 != 0 || p1 != 0 || p2 != 0; }
};

/// Camera-frame ray directions of every pixel (x component 1), row-major, 3 floats each.
/// Distortion is inverted per pixel (fixed-point iteration of the forward Brown model).
std::vector<float> camera_rays(const CameraModel& m);

/// Outputs of one camera frame; any may be null. Sizes are width·height (·3 for rgb).
struct CameraOutputs {
  std::uint8_t* rgb = nullptr;      ///< R8G8B8, Lambert-shaded, background where nothing is seen
  float* depth = nullptr;           ///< planar depth [m]: +inf miss or beyond far, -inf nearer
                                    ///< than near (Gazebo's depth camera)
  std::uint32_t* object = nullptr;  ///< Scene::objects() index or Hit::kNoObject
};

/// Renders one frame from camera pose X_WC (world pose of the camera frame).
/// @param rays camera_rays(m)
void render_camera(const Scene& scene, const CameraModel& m, const std::vector<float>& rays,
                   const ignition::math::Pose3d& X_WC, const CameraOutputs& out, Workers& workers);

/// Casts unit-direction rays (sensor frame, 3 floats each) from the origin of X_WS, seeing
/// surfaces between tmin and tmax; writes the hit distance (ray length [m], +inf on a miss)
/// and object (may be null) of each.
void cast_rays(const Scene& scene, const std::vector<float>& dirs,
               const ignition::math::Pose3d& X_WS, float tmin, float tmax, float* range,
               std::uint32_t* object, Workers& workers);

}  // namespace kestrel::render
