// Cameras and ray fans: rays generated per 4x4 tile (one Embree packet of 16), shaded with
// Lambert's law from the world's lights (no shadows), on the worker pool.

#include "kestrel/render/camera.h"

#include <algorithm>
#include <cmath>

#include "render/embree.h"

namespace kestrel::render {

using ignition::math::Pose3d;
using ignition::math::Vector3d;

// ---- workers ---------------------------------------------------------------------------------

Workers::Workers(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) pool_.emplace_back([this] { loop(); });
}

Workers::~Workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : pool_) t.join();
}

void Workers::work() {
  // Called with mutex_ held; takes tasks until none is left.
  while (next_ < n_) {
    const std::size_t i = next_++;
    const auto* fn = fn_;
    mutex_.unlock();
    (*fn)(i);
    mutex_.lock();
    ++finished_;
  }
}

void Workers::loop() {
  std::unique_lock lock(mutex_);
  std::uint64_t seen = 0;
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    ++busy_;
    work();
    --busy_;
    if (finished_ == n_) done_.notify_all();
  }
}

void Workers::run(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  if (pool_.empty() || n == 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::unique_lock lock(mutex_);
  fn_ = &fn;
  n_ = n;
  next_ = 0;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  work();
  done_.wait(lock, [&] { return finished_ == n_ && busy_ == 0; });
  fn_ = nullptr;
  n_ = 0;
}

// ---- camera rays -------------------------------------------------------------------------------

std::vector<float> camera_rays(const CameraModel& m) {
  std::vector<float> d(3ull * m.width * m.height);
  const double cu = m.center_u * m.width, cv = m.center_v * m.height;  // distortion centre [px]
  for (std::uint32_t j = 0; j < m.height; ++j) {
    for (std::uint32_t i = 0; i < m.width; ++i) {
      const double u = i + 0.5, v = j + 0.5;
      // Normalised image coordinates (right, down) of the pixel as seen through the lens.
      double yd = (v - m.cy) / m.fy;
      double xd = (u - m.cx - m.skew * yd) / m.fx;
      double x = xd, y = yd;
      if (m.distorted()) {
        // The forward Brown model maps undistorted (x, y) about the distortion centre to
        // distorted; this pixel is the distorted point: invert by fixed-point iteration.
        const double ox = (cu - m.cx) / m.fx, oy = (cv - m.cy) / m.fy;
        const double dx = xd - ox, dy = yd - oy;
        double ux = dx, uy = dy;
        for (int it = 0; it < 20; ++it) {
          const double r2 = ux * ux + uy * uy;
          const double radial = 1 + m.k1 * r2 + m.k2 * r2 * r2 + m.k3 * r2 * r2 * r2;
          const double tx = 2 * m.p1 * ux * uy + m.p2 * (r2 + 2 * ux * ux);
          const double ty = m.p1 * (r2 + 2 * uy * uy) + 2 * m.p2 * ux * uy;
          ux = (dx - tx) / radial;
          uy = (dy - ty) / radial;
        }
        x = ux + ox, y = uy + oy;
      }
      float* out = &d[3ull * (std::size_t(j) * m.width + i)];
      out[0] = 1.f;
      out[1] = static_cast<float>(-x);
      out[2] = static_cast<float>(-y);
    }
  }
  return d;
}

namespace {

struct ShadeLight {
  int type;  // 0 directional, 1 point, 2 spot
  float p[3], dir[3], col[3];
  float range, c, l, q, cos_inner, cos_outer, falloff;
};

std::vector<ShadeLight> shade_lights(const Scene& s) {
  std::vector<ShadeLight> out;
  for (const auto& l : s.lights()) {
    ShadeLight x{};
    x.type = l.type == SceneLight::Type::kDirectional ? 0
             : l.type == SceneLight::Type::kPoint     ? 1
                                                      : 2;
    for (int k = 0; k < 3; ++k) {
      x.p[k] = static_cast<float>(l.position[k]);
      x.dir[k] = static_cast<float>(l.direction[k]);
      x.col[k] = static_cast<float>(l.diffuse[k]);
    }
    x.range = static_cast<float>(l.range);
    x.c = static_cast<float>(l.constant);
    x.l = static_cast<float>(l.linear);
    x.q = static_cast<float>(l.quadratic);
    x.cos_inner = static_cast<float>(std::cos(l.spot_inner));
    x.cos_outer = static_cast<float>(std::cos(l.spot_outer));
    x.falloff = static_cast<float>(l.spot_falloff);
    out.push_back(x);
  }
  return out;
}

std::uint8_t to_byte(float v) {
  return static_cast<std::uint8_t>(std::clamp(v, 0.f, 1.f) * 255.f + 0.5f);
}

// Lambert shading of a hit at p with normal n.
void shade(const Scene& s, const std::vector<ShadeLight>& lights, const float amb[3], const Hit& h,
           const float p[3], std::uint8_t* rgb) {
  const SceneObject& o = s.objects()[h.object];
  float c[3] = {amb[0] * o.ambient[0], amb[1] * o.ambient[1], amb[2] * o.ambient[2]};
  for (const auto& l : lights) {
    float L[3], w = 1;
    if (l.type == 0) {
      L[0] = -l.dir[0], L[1] = -l.dir[1], L[2] = -l.dir[2];
    } else {
      L[0] = l.p[0] - p[0], L[1] = l.p[1] - p[1], L[2] = l.p[2] - p[2];
      const float dist = std::sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
      if (dist > l.range || dist <= 0) continue;
      L[0] /= dist, L[1] /= dist, L[2] /= dist;
      const float att = l.c + l.l * dist + l.q * dist * dist;
      w = att > 0 ? 1 / att : 1;
      if (l.type == 2) {
        const float cos_a = -(L[0] * l.dir[0] + L[1] * l.dir[1] + L[2] * l.dir[2]);
        if (cos_a < l.cos_outer) continue;
        if (cos_a < l.cos_inner && l.cos_inner > l.cos_outer) {
          w *= std::pow((cos_a - l.cos_outer) / (l.cos_inner - l.cos_outer), l.falloff);
        }
      }
    }
    const float ndl = h.nx * L[0] + h.ny * L[1] + h.nz * L[2];
    if (ndl <= 0) continue;
    for (int k = 0; k < 3; ++k) c[k] += w * ndl * l.col[k] * o.diffuse[k];
  }
  rgb[0] = to_byte(c[0]), rgb[1] = to_byte(c[1]), rgb[2] = to_byte(c[2]);
}

}  // namespace

void render_camera(const Scene& scene, const CameraModel& m, const std::vector<float>& rays,
                   const Pose3d& X_WC, const CameraOutputs& out, Workers& workers) {
  const auto R = ignition::math::Matrix3d(X_WC.Rot());
  float Rf[9];
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) Rf[a * 3 + b] = static_cast<float>(R(a, b));
  }
  const float o[3] = {static_cast<float>(X_WC.Pos().X()), static_cast<float>(X_WC.Pos().Y()),
                      static_cast<float>(X_WC.Pos().Z())};
  const auto lights = shade_lights(scene);
  const float amb[3] = {static_cast<float>(scene.ambient().X()),
                        static_cast<float>(scene.ambient().Y()),
                        static_cast<float>(scene.ambient().Z())};
  std::uint8_t bg[3];
  for (int k = 0; k < 3; ++k) bg[k] = to_byte(static_cast<float>(scene.background()[k]));
  // With a depth output, rays start at the camera (nearer hits read -inf) and end at the far
  // distance along the ray, as Gazebo's depth camera; a colour-only camera clips planes.
  const bool depth_mode = out.depth != nullptr;
  const float near = static_cast<float>(m.near), far = static_cast<float>(m.far);
  const std::uint32_t W = m.width, H = m.height;
  const std::size_t bands = (H + 3) / 4;
  workers.run(bands, [&](std::size_t band) {
    alignas(64) RTCRayHit16 rh;
    alignas(64) int valid[16];
    Hit hits[16];
    std::uint32_t pix[16];
    for (std::uint32_t i0 = 0; i0 < W; i0 += 4) {
      int n = 0;
      for (std::uint32_t dj = 0; dj < 4; ++dj) {
        for (std::uint32_t di = 0; di < 4; ++di) {
          const std::uint32_t i = i0 + di, j = static_cast<std::uint32_t>(band * 4 + dj);
          const int k = static_cast<int>(dj * 4 + di);
          if (i >= W || j >= H) {
            valid[k] = 0;
            rh.ray.org_x[k] = o[0], rh.ray.org_y[k] = o[1], rh.ray.org_z[k] = o[2];
            rh.ray.dir_x[k] = 1, rh.ray.dir_y[k] = 0, rh.ray.dir_z[k] = 0;
            rh.ray.tnear[k] = 0, rh.ray.tfar[k] = 0;
            rh.ray.mask[k] = 0, rh.ray.flags[k] = 0, rh.ray.time[k] = 0, rh.ray.id[k] = 0;
            pix[k] = 0xffffffffu;
            continue;
          }
          ++n;
          const std::uint32_t p = j * W + i;
          pix[k] = p;
          const float* dc = &rays[3ull * p];
          const float dx = Rf[0] * dc[0] + Rf[1] * dc[1] + Rf[2] * dc[2];
          const float dy = Rf[3] * dc[0] + Rf[4] * dc[1] + Rf[5] * dc[2];
          const float dz = Rf[6] * dc[0] + Rf[7] * dc[1] + Rf[8] * dc[2];
          valid[k] = -1;
          rh.ray.org_x[k] = o[0], rh.ray.org_y[k] = o[1], rh.ray.org_z[k] = o[2];
          rh.ray.dir_x[k] = dx, rh.ray.dir_y[k] = dy, rh.ray.dir_z[k] = dz;
          if (depth_mode) {
            rh.ray.tnear[k] = 0.f;
            rh.ray.tfar[k] = far / std::sqrt(dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2]);
          } else {
            rh.ray.tnear[k] = near;
            rh.ray.tfar[k] = far;
          }
          rh.ray.mask[k] = 0xffffffffu, rh.ray.flags[k] = 0, rh.ray.time[k] = 0;
          rh.ray.id[k] = static_cast<unsigned>(k);
        }
      }
      if (n == 0) continue;
      // Embree leaves the directions as they are; only a colour image reads the normals.
      detail::trace16(scene, valid, rh, hits, 16, out.rgb != nullptr);
      for (int k = 0; k < 16; ++k) {
        if (!valid[k]) continue;
        const std::uint32_t p = pix[k];
        const Hit& h = hits[k];
        const bool seen = h.object != Hit::kNoObject && (!depth_mode || h.t >= near);
        if (out.depth) {
          out.depth[p] = h.object == Hit::kNoObject ? std::numeric_limits<float>::infinity()
                         : h.t < near               ? -std::numeric_limits<float>::infinity()
                                                    : h.t;
        }
        if (out.object) out.object[p] = seen ? h.object : Hit::kNoObject;
        if (out.rgb) {
          std::uint8_t* px = out.rgb + 3ull * p;
          if (!seen) {
            px[0] = bg[0], px[1] = bg[1], px[2] = bg[2];
          } else {
            const float hp[3] = {o[0] + h.t * rh.ray.dir_x[k], o[1] + h.t * rh.ray.dir_y[k],
                                 o[2] + h.t * rh.ray.dir_z[k]};
            shade(scene, lights, amb, h, hp, px);
          }
        }
      }
    }
  });
}

void cast_rays(const Scene& scene, const std::vector<float>& dirs, const Pose3d& X_WS, float tmin,
               float tmax, float* range, std::uint32_t* object, Workers& workers) {
  const auto R = ignition::math::Matrix3d(X_WS.Rot());
  float Rf[9];
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) Rf[a * 3 + b] = static_cast<float>(R(a, b));
  }
  const float o[3] = {static_cast<float>(X_WS.Pos().X()), static_cast<float>(X_WS.Pos().Y()),
                      static_cast<float>(X_WS.Pos().Z())};
  const std::size_t n = dirs.size() / 3;
  constexpr std::size_t kPerTask = 512;
  workers.run((n + kPerTask - 1) / kPerTask, [&](std::size_t task) {
    alignas(64) RTCRayHit16 rh;
    alignas(64) int valid[16];
    Hit hits[16];
    const std::size_t end = std::min(n, (task + 1) * kPerTask);
    for (std::size_t base = task * kPerTask; base < end; base += 16) {
      const std::size_t m = std::min<std::size_t>(16, end - base);
      for (std::size_t k = 0; k < 16; ++k) {
        const std::size_t i = base + std::min(k, m - 1);
        const float* d = &dirs[3 * i];
        valid[k] = k < m ? -1 : 0;
        rh.ray.org_x[k] = o[0], rh.ray.org_y[k] = o[1], rh.ray.org_z[k] = o[2];
        rh.ray.dir_x[k] = Rf[0] * d[0] + Rf[1] * d[1] + Rf[2] * d[2];
        rh.ray.dir_y[k] = Rf[3] * d[0] + Rf[4] * d[1] + Rf[5] * d[2];
        rh.ray.dir_z[k] = Rf[6] * d[0] + Rf[7] * d[1] + Rf[8] * d[2];
        rh.ray.tnear[k] = tmin, rh.ray.tfar[k] = tmax;
        rh.ray.mask[k] = 0xffffffffu, rh.ray.flags[k] = 0, rh.ray.time[k] = 0;
        rh.ray.id[k] = static_cast<unsigned>(k);
      }
      detail::trace16(scene, valid, rh, hits, m, false);
      for (std::size_t k = 0; k < m; ++k) {
        range[base + k] = hits[k].t;
        if (object) object[base + k] = hits[k].object;
      }
    }
  });
}

}  // namespace kestrel::render
