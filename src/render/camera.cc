// Cameras and ray fans: rays generated per 4x4 tile (one Embree packet of 16), shaded with
// Lambert's law from the world's lights (no shadows), on the worker pool.

#include "kestrel/render/camera.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "render/embree.h"

namespace kestrel::render {

using detail::B16;
using detail::F16;
using detail::I16;
using detail::load16;
using detail::store16;
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

// to_byte of each lane.
[[gnu::always_inline]] inline B16 to_bytes(F16 v) {
  const F16 c = v < 0 ? F16{} : v > 1 ? F16{} + 1 : v;
  return __builtin_convertvector(__builtin_convertvector(c * 255.f + 0.5f, I16), B16);
}

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

// One frame's constants, shared read-only by the bands.
struct Frame {
  const Scene* scene;
  const std::vector<SceneObject>* objects;
  const std::vector<ShadeLight>* lights;
  const std::vector<float>* rays;  // camera_rays(m) when not separable
  const float* lane_y;             // separable: lane k of the tile at column i0: 16 i0 / 4 + k
  const float* lane_dir[3];        // separable: R (1, y, 0) of those lanes, world
  const float* row_z;              // row directions (separable)
  CameraOutputs out;
  float R[9], o[3], amb[3];
  std::uint8_t bg[3];
  float near, far, tnear;
  std::uint32_t W, H;
  bool depth_mode, separable;
};

// The 4 rows of pixels from row 4 * band, tile by tile: one Embree packet of 16 each. Its lane
// loops vectorise to the widest vectors the machine has (KESTREL_SIMD_CLONES).
KESTREL_SIMD_CLONES void render_band(const Frame& f, std::size_t band) {
  alignas(64) RTCRayHit16 rh;
  alignas(64) ShadePacket sp;
  alignas(64) float ly_table[16], lz_table[16], depth[16];
  alignas(64) std::uint32_t object[16];
  alignas(64) int seen[16];
  B16 r8, g8, b8;
  detail::HitPacket hits;
  const float R[9] = {f.R[0], f.R[1], f.R[2], f.R[3], f.R[4], f.R[5], f.R[6], f.R[7], f.R[8]};
  const float o[3] = {f.o[0], f.o[1], f.o[2]};
  const std::uint32_t W = f.W, H = f.H;
  const bool depth_mode = f.depth_mode;
  const float near = f.near, far = f.far, tnear = f.tnear;
  const auto& objects = *f.objects;
  const std::uint32_t j0 = static_cast<std::uint32_t>(band * 4);
  const std::uint32_t rows = std::min(4u, H - j0);
  // Lane k is pixel (i0 + k % 4, j0 + k / 4); lanes past the image's right or bottom edge
  // repeat its last pixel, switched off. Every lane array the packet loops read as vectors is
  // written here or per frame, long before: a vector load of what scalar stores have just
  // written waits for them (store forwarding fails).
  alignas(64) int valid_inner[16], valid_last[16];
  alignas(64) float lz_band[16], zx[16], zy[16], zz[16];
  const std::uint32_t last_cols = W - (W - 1) / 4 * 4;
  for (int k = 0; k < 16; ++k) {
    const auto c = static_cast<std::uint32_t>(k & 3), r = static_cast<std::uint32_t>(k >> 2);
    valid_inner[k] = r < rows ? -1 : 0;
    valid_last[k] = c < last_cols && r < rows ? -1 : 0;
    lz_band[k] = f.separable ? f.row_z[std::min(j0 + r, H - 1)] : 0.f;
    zx[k] = R[2] * lz_band[k];
    zy[k] = R[5] * lz_band[k];
    zz[k] = R[8] * lz_band[k];
  }
  for (int k = 0; k < 16; ++k) {  // what Embree leaves as it is
    rh.ray.org_x[k] = o[0], rh.ray.org_y[k] = o[1], rh.ray.org_z[k] = o[2];
    rh.ray.mask[k] = 0xffffffffu, rh.ray.flags[k] = 0, rh.ray.time[k] = 0;
    rh.ray.id[k] = static_cast<unsigned>(k);
  }
  for (std::uint32_t i0 = 0; i0 < W; i0 += 4) {
    const std::uint32_t cols = std::min(4u, W - i0);
    const int* valid = i0 + 4 < W ? valid_inner : valid_last;
    const float* ly;
    const float* lz;
    if (f.separable) {
      ly = f.lane_y + 4 * i0;  // 16 lanes a tile
      lz = lz_band;
      const float* ax = f.lane_dir[0] + 4 * i0;
      const float* ay = f.lane_dir[1] + 4 * i0;
      const float* az = f.lane_dir[2] + 4 * i0;
      // The sums in the order of the table's case below.
      store16(rh.ray.dir_x, load16<F16>(ax) + load16<F16>(zx));
      store16(rh.ray.dir_y, load16<F16>(ay) + load16<F16>(zy));
      store16(rh.ray.dir_z, load16<F16>(az) + load16<F16>(zz));
      store16(rh.ray.tnear, F16{} + tnear);
    } else {
      for (int k = 0; k < 16; ++k) {
        const auto c = static_cast<std::uint32_t>(k & 3), r = static_cast<std::uint32_t>(k >> 2);
        const std::size_t p = std::size_t(std::min(j0 + r, H - 1)) * W + std::min(i0 + c, W - 1);
        ly_table[k] = (*f.rays)[3 * p + 1];  // x is 1
        lz_table[k] = (*f.rays)[3 * p + 2];
      }
      ly = ly_table, lz = lz_table;
      for (int k = 0; k < 16; ++k) {
        const float y = ly[k], z = lz[k];
        rh.ray.dir_x[k] = R[0] + R[1] * y + R[2] * z;
        rh.ray.dir_y[k] = R[3] + R[4] * y + R[5] * z;
        rh.ray.dir_z[k] = R[6] + R[7] * y + R[8] * z;
        rh.ray.tnear[k] = tnear;
      }
    }
    if (depth_mode) {
      for (int k = 0; k < 16; ++k) {
        rh.ray.tfar[k] = far / std::sqrt(1 + ly[k] * ly[k] + lz[k] * lz[k]);
      }
    } else {
      store16(rh.ray.tfar, F16{} + far);
    }
    // Embree leaves the directions as they are; only a colour image reads the normals.
    detail::trace16(*f.scene, valid, rh, hits, f.out.rgb != nullptr);
    // Lanes switched off come back as misses.
    constexpr float inf = std::numeric_limits<float>::infinity();
    int any = 0;
    for (int k = 0; k < 16; ++k) {
      const bool miss = hits.object[k] == Hit::kNoObject;
      const bool close = depth_mode && hits.t[k] < near;
      depth[k] = miss ? inf : close ? -inf : hits.t[k];
      seen[k] = miss || close ? 0 : -1;
      object[k] = seen[k] ? hits.object[k] : Hit::kNoObject;
      any |= seen[k];
    }
    const std::size_t p0 = std::size_t(j0) * W + i0;
    for (std::uint32_t r = 0; r < rows; ++r) {
      if (f.out.depth) std::copy_n(depth + 4 * r, cols, f.out.depth + p0 + std::size_t(r) * W);
      if (f.out.object) std::copy_n(object + 4 * r, cols, f.out.object + p0 + std::size_t(r) * W);
    }
    if (!f.out.rgb) continue;
    if (any) {
      for (int k = 0; k < 16; ++k) {
        const SceneObject& ob = objects[seen[k] ? hits.object[k] : 0];  // a hit: not empty
        const float on = seen[k] ? 1.f : 0.f;
        sp.dr[k] = on * ob.diffuse[0], sp.dg[k] = on * ob.diffuse[1], sp.db[k] = on * ob.diffuse[2];
        sp.cr[k] = on * (f.amb[0] * ob.ambient[0]);
        sp.cg[k] = on * (f.amb[1] * ob.ambient[1]);
        sp.cb[k] = on * (f.amb[2] * ob.ambient[2]);
      }
      for (int k = 0; k < 16; ++k) {
        const float t = seen[k] ? hits.t[k] : 0.f;
        sp.x[k] = o[0] + t * rh.ray.dir_x[k];
        sp.y[k] = o[1] + t * rh.ray.dir_y[k];
        sp.z[k] = o[2] + t * rh.ray.dir_z[k];
      }
      shade(*f.lights, hits, sp);
      const I16 on = load16<I16>(seen);
      const B16 lit = __builtin_convertvector(on, B16);  // 0xff where seen
      r8 = lit ? to_bytes(load16<F16>(sp.cr)) : B16{} + f.bg[0];
      g8 = lit ? to_bytes(load16<F16>(sp.cg)) : B16{} + f.bg[1];
      b8 = lit ? to_bytes(load16<F16>(sp.cb)) : B16{} + f.bg[2];
    } else {  // sky only
      r8 = B16{} + f.bg[0], g8 = B16{} + f.bg[1], b8 = B16{} + f.bg[2];
    }
    for (std::uint32_t r = 0; r < rows; ++r) {
      std::uint8_t* px = f.out.rgb + 3 * (p0 + std::size_t(r) * W);
      for (std::uint32_t c = 0; c < cols; ++c) {
        const std::uint32_t k = 4 * r + c;
        px[3 * c] = r8[k], px[3 * c + 1] = g8[k], px[3 * c + 2] = b8[k];
      }
    }
  }
}

}  // namespace

void render_camera(const Scene& scene, const CameraModel& m, const std::vector<float>& rays,
                   const Pose3d& X_WC, const CameraOutputs& out, Workers& workers) {
  Frame f{};
  f.scene = &scene;
  f.objects = &scene.objects();
  const auto lights = shade_lights(scene);
  f.lights = &lights;
  f.rays = &rays;
  f.out = out;
  const auto R = ignition::math::Matrix3d(X_WC.Rot());
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) f.R[a * 3 + b] = static_cast<float>(R(a, b));
    f.o[a] = static_cast<float>(X_WC.Pos()[a]);
    f.amb[a] = static_cast<float>(scene.ambient()[a]);
    f.bg[a] = to_byte(static_cast<float>(scene.background()[a]));
  }
  // With a depth output, rays start at the camera (nearer hits read -inf) and end at the far
  // distance along the ray, as Gazebo's depth camera; a colour-only camera clips planes.
  f.depth_mode = out.depth != nullptr;
  f.near = static_cast<float>(m.near), f.far = static_cast<float>(m.far);
  f.tnear = f.depth_mode ? 0.f : f.near;
  f.W = m.width, f.H = m.height;
  // Without distortion or skew a pixel's direction is (1, y(column), z(row)), the values
  // camera_rays gives, from two short arrays instead of the whole table: a 1920x1080 camera's
  // table is 25 MB, read once a frame. The columns are laid out as the packets' lanes read
  // them: each tile's 4 columns 4 times (past the right edge, the last column).
  f.separable = !m.distorted() && m.skew == 0;
  std::vector<float> lane_y, lane_dir[3], row_z;
  if (f.separable) {
    lane_y.resize((f.W + 3) / 4 * 16);
    for (auto& d : lane_dir) d.resize(lane_y.size());
    row_z.resize(f.H);
    for (std::uint32_t n = 0; n < lane_y.size(); ++n) {
      const std::uint32_t i = std::min(n / 16 * 4 + n % 4, f.W - 1);
      const float y = static_cast<float>(-((i + 0.5 - m.cx) / m.fx));
      lane_y[n] = y;
      for (int a = 0; a < 3; ++a) lane_dir[a][n] = f.R[3 * a] + f.R[3 * a + 1] * y;
    }
    for (std::uint32_t j = 0; j < f.H; ++j) {
      row_z[j] = static_cast<float>(-((j + 0.5 - m.cy) / m.fy));
    }
  }
  f.lane_y = lane_y.data(), f.row_z = row_z.data();
  for (int a = 0; a < 3; ++a) f.lane_dir[a] = lane_dir[a].data();
  workers.run((f.H + 3) / 4, [&f](std::size_t band) { render_band(f, band); });
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
