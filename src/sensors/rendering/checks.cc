#include "sensors/rendering/checks.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

namespace kestrel::sensors {

void warn_if_intrinsics_disagree(const CameraParams& p, const char* kind, const std::string& name) {
  if (!p.has_intrinsics) return;
  const auto& m = p.model;
  double fx, fy, cx, cy;
  default_intrinsics(p.horizontal_fov, m.width, m.height, fx, fy, cx, cy);
  const bool agree = std::abs(m.fx - fx) <= 1e-3 * fx && std::abs(m.fy - fy) <= 1e-3 * fy &&
                     std::abs(m.cx - cx) <= 0.5 && std::abs(m.cy - cy) <= 0.5;
  if (agree) return;
  spdlog::warn(
      "{}: {} {}: <lens><intrinsics> (fx {:.6g}, fy {:.6g}, cx {:.6g}, cy {:.6g}) disagree with "
      "<horizontal_fov> {:.6g} rad and the {}x{} image (fx = fy = {:.6g}, cx {:.6g}, cy {:.6g}): "
      "the image is rendered and camera_info published with the <intrinsics>, as Gazebo does; "
      "remove them or make them agree",
      p.where, kind, name, m.fx, m.fy, m.cx, m.cy, p.horizontal_fov, m.width, m.height, fx, cx, cy);
}

namespace {

// Casts `rays` (camera frame, any length) from X_WS with no clipping; returns the hit t.
std::vector<float> probe(const render::Scene& scene, const std::vector<float>& rays,
                         const ignition::math::Pose3d& X_WS) {
  const std::size_t n = rays.size() / 3;
  std::vector<float> o(3 * n), d(3 * n), t0(n, 0.f), t1(n, std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    const auto w = X_WS.Rot().RotateVector({rays[3 * i], rays[3 * i + 1], rays[3 * i + 2]});
    for (int k = 0; k < 3; ++k) {
      o[3 * i + k] = static_cast<float>(X_WS.Pos()[k]);
      d[3 * i + k] = static_cast<float>(w[k]);
    }
  }
  std::vector<render::Hit> hits(n);
  scene.intersect(n, o.data(), d.data(), t0.data(), t1.data(), hits.data());
  std::vector<float> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = hits[i].t;
  return t;
}

}  // namespace

void warn_if_blind_camera(const render::Scene& scene, const CameraParams& p,
                          const std::vector<float>& rays, const ignition::math::Pose3d& X_WS,
                          bool depth, const char* kind, const std::string& name) {
  const auto& m = p.model;
  std::vector<float> grid, len;
  for (std::uint32_t gj = 0; gj < 24; ++gj) {
    for (std::uint32_t gi = 0; gi < 32; ++gi) {
      const std::uint32_t i = (2 * gi + 1) * m.width / 64, j = (2 * gj + 1) * m.height / 48;
      const float* r = &rays[3ull * (std::size_t(j) * m.width + i)];
      grid.insert(grid.end(), r, r + 3);
      len.push_back(std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]));
    }
  }
  const auto t = probe(scene, grid, X_WS);
  std::size_t seen = 0, within = 0;
  float nearest = std::numeric_limits<float>::infinity(), farthest = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t[i])) continue;
    ++seen;
    nearest = std::min(nearest, t[i]);
    farthest = std::max(farthest, t[i] * len[i]);
    within += t[i] >= m.near && t[i] * len[i] <= m.far;
  }
  if (seen == 0) {
    spdlog::warn(
        "{}: {} {} sees nothing from its pose — pointing at the sky? (at {:.3f} {:.3f} "
        "{:.3f} in the world, no visual in view)",
        p.where, kind, name, X_WS.Pos().X(), X_WS.Pos().Y(), X_WS.Pos().Z());
  } else if (depth && within == 0) {
    spdlog::warn(
        "{}: depth camera {}: its clip range [{:.6g}, {:.6g}] m excludes everything it "
        "sees (depth {:.6g} m to range {:.6g} m): every pixel reads ±inf",
        p.where, name, m.near, m.far, nearest, farthest);
  }
}

void warn_if_blind_lidar(const render::Scene& scene, const LidarParams& p,
                         const std::vector<float>& rays, const ignition::math::Pose3d& X_WS,
                         const std::string& where, const std::string& type,
                         const std::string& name) {
  const auto t = probe(scene, rays, X_WS);
  for (float v : t) {
    if (v >= p.range_min && v <= p.range_max) return;
  }
  spdlog::warn(
      "{}: {} {} sees nothing from its pose (no {} within {:.6g}..{:.6g} m) — pointing "
      "at the sky?",
      where, type, name, type == "gpu_lidar" || type == "gpu_ray" ? "visual" : "collision",
      p.range_min, p.range_max);
}

}  // namespace kestrel::sensors
