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

// Lambert shading of one packet's hits, lane by lane in light-major loops the compiler can
// vectorise: lane k is lit by each light in the scene's order, so its sum is the one a
// per-pixel loop would form. Lanes that see nothing have a zero colour.
struct alignas(64) ShadePacket {
  float x[16], y[16], z[16];     // hit point, world
  float dr[16], dg[16], db[16];  // material diffuse
  float cr[16], cg[16], cb[16];  // colour so far (ambient term first)
};

void shade(const std::vector<ShadeLight>& lights, const detail::HitPacket& n, ShadePacket& s) {
  alignas(64) float w[16], ndl[16], cos_a[16];
  for (const auto& l : lights) {
    if (l.type == 0) {
      const float Lx = -l.dir[0], Ly = -l.dir[1], Lz = -l.dir[2];
      for (int k = 0; k < 16; ++k) {
        const float d = n.nx[k] * Lx + n.ny[k] * Ly + n.nz[k] * Lz;
        w[k] = d > 0 ? d : 0.f;
      }
    } else {
      for (int k = 0; k < 16; ++k) {
        const float Lx = l.p[0] - s.x[k], Ly = l.p[1] - s.y[k], Lz = l.p[2] - s.z[k];
        const float dist = std::sqrt(Lx * Lx + Ly * Ly + Lz * Lz);
        const bool reached = (dist <= l.range) & (dist > 0);
        const float dn = reached ? dist : 1.f;
        const float ux = Lx / dn, uy = Ly / dn, uz = Lz / dn;
        const float att = l.c + l.l * dist + l.q * dist * dist;
        const float wa = 1 / (att > 0 ? att : 1.f);  // no attenuation without a positive one
        ndl[k] = n.nx[k] * ux + n.ny[k] * uy + n.nz[k] * uz;
        cos_a[k] = -(ux * l.dir[0] + uy * l.dir[1] + uz * l.dir[2]);  // off a spot's axis
        w[k] = reached ? wa : 0.f;
      }
      if (l.type == 2) {
        const bool soft = l.cos_inner > l.cos_outer;
        for (int k = 0; k < 16; ++k) {
          if (w[k] == 0) continue;
          if (cos_a[k] < l.cos_outer) {
            w[k] = 0;
          } else if (cos_a[k] < l.cos_inner && soft) {
            w[k] *= std::pow((cos_a[k] - l.cos_outer) / (l.cos_inner - l.cos_outer), l.falloff);
          }
        }
      }
      for (int k = 0; k < 16; ++k) {
        const float lit = w[k] * ndl[k];
        w[k] = ndl[k] > 0 ? lit : 0.f;
      }
    }
    for (int k = 0; k < 16; ++k) {
      s.cr[k] += w[k] * l.col[0] * s.dr[k];
      s.cg[k] += w[k] * l.col[1] * s.dg[k];
      s.cb[k] += w[k] * l.col[2] * s.db[k];
    }
  }
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
  const auto& objects = scene.objects();
  // Without distortion or skew a pixel's direction is (1, y(column), z(row)), the values
  // camera_rays gives, from two short arrays instead of the whole table: a 1920x1080 camera's
  // table is 25 MB, read once a frame.
  const bool separable = !m.distorted() && m.skew == 0;
  std::vector<float> column_y, row_z;
  if (separable) {
    column_y.resize(W);
    row_z.resize(H);
    for (std::uint32_t i = 0; i < W; ++i) {
      column_y[i] = static_cast<float>(-((i + 0.5 - m.cx) / m.fx));
    }
    for (std::uint32_t j = 0; j < H; ++j) row_z[j] = static_cast<float>(-((j + 0.5 - m.cy) / m.fy));
  }
  workers.run(bands, [&](std::size_t band) {
    alignas(64) RTCRayHit16 rh;
    alignas(64) int valid[16];
    alignas(64) ShadePacket sp;
    detail::HitPacket hits;
    std::uint32_t pix[16];
    const std::uint32_t j0 = static_cast<std::uint32_t>(band * 4);
    for (int k = 0; k < 16; ++k) {  // what Embree leaves as it is
      rh.ray.org_x[k] = o[0], rh.ray.org_y[k] = o[1], rh.ray.org_z[k] = o[2];
      rh.ray.mask[k] = 0xffffffffu, rh.ray.flags[k] = 0, rh.ray.time[k] = 0;
      rh.ray.id[k] = static_cast<unsigned>(k);
    }
    for (std::uint32_t i0 = 0; i0 < W; i0 += 4) {
      // Lanes past the image's right or bottom edge repeat its last pixel, switched off.
      for (int k = 0; k < 16; ++k) {
        const std::uint32_t i = i0 + static_cast<std::uint32_t>(k & 3);
        const std::uint32_t j = j0 + static_cast<std::uint32_t>(k >> 2);
        valid[k] = i < W && j < H ? -1 : 0;
        const std::uint32_t ic = std::min(i, W - 1), jc = std::min(j, H - 1);
        const std::uint32_t p = jc * W + ic;
        pix[k] = p;
        const float y = separable ? column_y[ic] : rays[3ull * p + 1];  // x is 1
        const float z = separable ? row_z[jc] : rays[3ull * p + 2];
        rh.ray.dir_x[k] = Rf[0] + Rf[1] * y + Rf[2] * z;
        rh.ray.dir_y[k] = Rf[3] + Rf[4] * y + Rf[5] * z;
        rh.ray.dir_z[k] = Rf[6] + Rf[7] * y + Rf[8] * z;
        rh.ray.tnear[k] = depth_mode ? 0.f : near;
        rh.ray.tfar[k] = depth_mode ? far / std::sqrt(1 + y * y + z * z) : far;
      }
      // Embree leaves the directions as they are; only a colour image reads the normals.
      detail::trace16(scene, valid, rh, hits, out.rgb != nullptr);
      bool seen[16];
      for (int k = 0; k < 16; ++k) {
        const std::uint32_t obj = hits.object[k];
        const float t = hits.t[k];
        seen[k] = valid[k] && obj != Hit::kNoObject && (!depth_mode || t >= near);
        if (!valid[k]) continue;
        const std::uint32_t p = pix[k];
        if (out.depth) {
          out.depth[p] = obj == Hit::kNoObject ? std::numeric_limits<float>::infinity()
                         : t < near            ? -std::numeric_limits<float>::infinity()
                                               : t;
        }
        if (out.object) out.object[p] = seen[k] ? obj : Hit::kNoObject;
      }
      if (!out.rgb) continue;
      bool any = false;
      for (int k = 0; k < 16; ++k) any = any || seen[k];
      if (!any) {  // sky only
        for (int k = 0; k < 16; ++k) {
          if (!valid[k]) continue;
          std::uint8_t* px = out.rgb + 3ull * pix[k];
          px[0] = bg[0], px[1] = bg[1], px[2] = bg[2];
        }
        continue;
      }
      for (int k = 0; k < 16; ++k) {
        if (!seen[k]) {
          sp.x[k] = sp.y[k] = sp.z[k] = 0;
          sp.dr[k] = sp.dg[k] = sp.db[k] = sp.cr[k] = sp.cg[k] = sp.cb[k] = 0;
          continue;
        }
        const SceneObject& ob = objects[hits.object[k]];
        const float t = hits.t[k];
        sp.x[k] = o[0] + t * rh.ray.dir_x[k];
        sp.y[k] = o[1] + t * rh.ray.dir_y[k];
        sp.z[k] = o[2] + t * rh.ray.dir_z[k];
        sp.dr[k] = ob.diffuse[0], sp.dg[k] = ob.diffuse[1], sp.db[k] = ob.diffuse[2];
        sp.cr[k] = amb[0] * ob.ambient[0];
        sp.cg[k] = amb[1] * ob.ambient[1];
        sp.cb[k] = amb[2] * ob.ambient[2];
      }
      shade(lights, hits, sp);
      for (int k = 0; k < 16; ++k) {
        if (!valid[k]) continue;
        std::uint8_t* px = out.rgb + 3ull * pix[k];
        if (seen[k]) {
          px[0] = to_byte(sp.cr[k]), px[1] = to_byte(sp.cg[k]), px[2] = to_byte(sp.cb[k]);
        } else {
          px[0] = bg[0], px[1] = bg[1], px[2] = bg[2];
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
    detail::HitPacket hits;
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
      detail::trace16(scene, valid, rh, hits, false);
      for (std::size_t k = 0; k < m; ++k) {
        range[base + k] = hits.t[k];
        if (object) object[base + k] = hits.object[k];
      }
    }
  });
}

}  // namespace kestrel::render
