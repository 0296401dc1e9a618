// Bounding boxes of a boundingbox_camera frame, as gz-rendering (ign-rendering6,
// Ogre2BoundingBoxCamera) computes them: visible 2D boxes from the pixels each object is seen
// in, full 2D boxes from its vertices projected, 3D boxes from its local box and pose, merged
// per top-level model (src/sensors/rendering/README.md).

#include "sensors/rendering/boxes.h"

#include <algorithm>
#include <cmath>
#include <ignition/math/Matrix3.hh>
#include <ignition/math/eigen3/Util.hh>
#include <limits>
#include <map>
#include <string>

#include "kestrel/components/model.h"

namespace kestrel::sensors {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

namespace {

Pose3d compose(const Pose3d& X_AB, const Pose3d& X_BC) {
  return Pose3d(X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()), X_AB.Rot() * X_BC.Rot());
}

// gz-rendering's background label of the bounding box camera: visuals without a label, or
// labelled 255, have no box.
constexpr int kBackgroundLabel = 255;

bool boxed(const render::SceneObject& o) { return o.label >= 0 && o.label < kBackgroundLabel; }

// The objects seen with a box label, in index order.
std::vector<std::uint32_t> seen_objects(const BoxFrame& f) {
  std::vector<char> seen(f.scene.objects().size(), 0);
  for (std::uint32_t obj : f.seen) {
    if (obj != render::Hit::kNoObject && boxed(f.scene.objects()[obj])) seen[obj] = 1;
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) out.push_back(i);
  }
  return out;
}

// Scoped name of the top-level model above an object (gz-rendering merges the boxes of the
// visuals of one top-level model).
std::string top_model(const ecs::Registry& r, const render::SceneObject& o) {
  ecs::Entity top = o.model;
  for (ecs::Entity p = r.parent(top); p != ecs::kNullEntity && r.has<c::Model>(p);
       p = r.parent(p)) {
    top = p;
  }
  return r.scoped_name(top);
}

// Objects grouped by top-level model, in gz-rendering's output order (names descending).
std::vector<std::vector<std::uint32_t>> by_model(const BoxFrame& f,
                                                 const std::vector<std::uint32_t>& objs) {
  std::map<std::string, std::vector<std::uint32_t>> groups;
  for (std::uint32_t i : objs) groups[top_model(f.r, f.scene.objects()[i])].push_back(i);
  std::vector<std::vector<std::uint32_t>> out;
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) out.push_back(it->second);
  return out;
}

Pose3d world_pose(const BoxFrame& f, const render::SceneObject& o) {
  return compose(f.r.get<c::WorldPose>(o.link).value, o.pose);
}

// gz-rendering's view frame of the camera (x right, y up, z backwards) from Kestrel's camera
// frame (x ahead, y left, z up).
Vector3d view(const Vector3d& p_C) { return Vector3d(-p_C.Y(), p_C.Z(), -p_C.X()); }

c::Box2D union_of(const std::vector<c::Box2D>& boxes) {
  if (boxes.size() == 1) return boxes[0];
  c::Box2D m;
  m.label = boxes[0].label;
  m.min_x = m.min_y = std::numeric_limits<double>::max();
  m.max_x = m.max_y = 0;
  for (const auto& b : boxes) {
    m.min_x = std::min(m.min_x, b.min_x), m.min_y = std::min(m.min_y, b.min_y);
    m.max_x = std::max(m.max_x, b.max_x), m.max_y = std::max(m.max_y, b.max_y);
  }
  return m;
}

// The box of an object's projected vertices, in gz-rendering's screen convention (its
// normalised device coordinates clamped to [-1, 1], then the left and top edges clipped at 0,
// the right one at W - 1 and the top one at H - 1); false when it lies wholly outside.
bool full_box(const BoxFrame& f, const render::SceneObject& o, c::Box2D& box) {
  const auto& m = f.model;
  const Pose3d X_CO = compose(f.X_WC.Inverse(), world_pose(f, o));
  double lo_x = std::numeric_limits<double>::max(), lo_y = lo_x;
  double hi_x = -lo_x, hi_y = -lo_x;
  for (std::size_t k = 0; k + 2 < o.vertices.size(); k += 3) {
    const Vector3d p = X_CO.Pos() + X_CO.Rot().RotateVector(Vector3d(
                                        o.vertices[k], o.vertices[k + 1], o.vertices[k + 2]));
    const double u = m.cx - m.fx * p.Y() / p.X(), v = m.cy - m.fy * p.Z() / p.X();
    const double nx = 2 * u / m.width - 1, ny = 1 - 2 * v / m.height;
    lo_x = std::min(lo_x, nx), hi_x = std::max(hi_x, nx);
    lo_y = std::min(lo_y, ny), hi_y = std::max(hi_y, ny);
  }
  if ((std::abs(lo_x) > 1 && std::abs(hi_x) > 1) || (std::abs(lo_y) > 1 && std::abs(hi_y) > 1)) {
    return false;
  }
  // (float, as gz-rendering's Ogre::Vector3)
  auto clamp1 = [](double x) { return static_cast<float>(std::clamp(x, -1.0, 1.0)); };
  const float W = static_cast<float>(m.width), H = static_cast<float>(m.height);
  const float left = std::max(0.f, (clamp1(lo_x) + 1.f) / 2 * W);
  const float bottom = std::max(0.f, (1.f - clamp1(lo_y)) / 2 * H);
  const float right = std::min((clamp1(hi_x) + 1.f) / 2 * W, W - 1.f);
  const float top = std::min((1.f - clamp1(hi_y)) / 2 * H, H - 1.f);
  box.label = o.label;
  box.min_x = left, box.max_x = right;
  box.min_y = top, box.max_y = bottom;
  return true;
}

}  // namespace

std::vector<c::Box2D> boxes_2d(const BoxFrame& f, BoxType type) {
  const auto& objects = f.scene.objects();
  const std::vector<std::uint32_t> objs = seen_objects(f);
  std::vector<c::Box2D> per_object(objects.size());
  std::vector<char> has(objects.size(), 0);
  if (type == BoxType::kVisible2D) {
    const std::uint32_t w = f.model.width;
    for (std::size_t p = 0; p < f.seen.size(); ++p) {
      const std::uint32_t obj = f.seen[p];
      if (obj == render::Hit::kNoObject || !boxed(objects[obj])) continue;
      const double x = static_cast<double>(p % w), y = static_cast<double>(p / w);
      c::Box2D& b = per_object[obj];
      if (!has[obj]) {
        has[obj] = 1;
        b.label = objects[obj].label;
        b.min_x = b.max_x = x, b.min_y = b.max_y = y;
      }
      b.min_x = std::min(b.min_x, x), b.max_x = std::max(b.max_x, x);
      b.min_y = std::min(b.min_y, y), b.max_y = std::max(b.max_y, y);
    }
  } else {
    for (std::uint32_t i : objs) has[i] = full_box(f, objects[i], per_object[i]) ? 1 : 0;
  }
  std::vector<c::Box2D> out;
  for (const auto& group : by_model(f, objs)) {
    std::vector<c::Box2D> boxes;
    for (std::uint32_t i : group) {
      if (has[i]) boxes.push_back(per_object[i]);
    }
    if (!boxes.empty()) out.push_back(union_of(boxes));
  }
  return out;
}

Quaterniond quaternion_like_ogre(const double R[9]) {
  auto m = [&](int i, int j) { return R[3 * i + j]; };
  const double trace = m(0, 0) + m(1, 1) + m(2, 2);
  double q[4];  // w x y z
  if (trace > 0) {
    double root = std::sqrt(trace + 1);
    q[0] = 0.5 * root;
    root = 0.5 / root;
    q[1] = (m(2, 1) - m(1, 2)) * root;
    q[2] = (m(0, 2) - m(2, 0)) * root;
    q[3] = (m(1, 0) - m(0, 1)) * root;
  } else {
    static constexpr int kNext[3] = {1, 2, 0};
    int i = 0;
    if (m(1, 1) > m(0, 0)) i = 1;
    if (m(2, 2) > m(i, i)) i = 2;
    const int j = kNext[i], k = kNext[j];
    double root = std::sqrt(m(i, i) - m(j, j) - m(k, k) + 1);
    q[1 + i] = 0.5 * root;
    root = 0.5 / root;
    q[0] = (m(k, j) - m(j, k)) * root;
    q[1 + j] = (m(j, i) + m(i, j)) * root;
    q[1 + k] = (m(k, i) + m(i, k)) * root;
  }
  return Quaterniond(q[0], q[1], q[2], q[3]);
}

std::vector<c::Box3D> boxes_3d(const BoxFrame& f) {
  const auto& objects = f.scene.objects();
  const std::vector<std::uint32_t> objs = seen_objects(f);
  // R_VW = R_VC · R_CW, as gz-rendering's view matrix (its sign of the quaternion too).
  const ignition::math::Matrix3d M(f.X_WC.Rot().Inverse());
  const double R_VW[9] = {-M(1, 0), -M(1, 1), -M(1, 2), M(2, 0), M(2, 1),
                          M(2, 2),  -M(0, 0), -M(0, 1), -M(0, 2)};
  const Quaterniond q_VW = quaternion_like_ogre(R_VW);
  const Pose3d X_CW = f.X_WC.Inverse();
  std::vector<c::Box3D> out;
  for (const auto& group : by_model(f, objs)) {
    c::Box3D box;
    box.label = objects[group[0]].label;
    if (group.size() == 1) {
      const auto& o = objects[group[0]];
      Vector3d lo(std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                  std::numeric_limits<double>::max());
      Vector3d hi = -lo;
      for (std::size_t k = 0; k + 2 < o.vertices.size(); k += 3) {
        const Vector3d v(o.vertices[k], o.vertices[k + 1], o.vertices[k + 2]);
        lo.Min(v);
        hi.Max(v);
      }
      const Pose3d X_WO = world_pose(f, o);
      const Vector3d c_W = X_WO.Pos() + X_WO.Rot().RotateVector((lo + hi) / 2);
      box.center = view(X_CW.Pos() + X_CW.Rot().RotateVector(c_W));
      box.size = hi - lo;
      box.orientation = q_VW * X_WO.Rot();
    } else {
      // A model of several visuals: the oriented box of all their vertices (principal axes),
      // in the view frame, as gz-rendering merges them.
      std::vector<Vector3d> vertices;
      for (std::uint32_t i : group) {
        const auto& o = objects[i];
        const Pose3d X_CO = compose(X_CW, world_pose(f, o));
        for (std::size_t k = 0; k + 2 < o.vertices.size(); k += 3) {
          vertices.push_back(
              view(X_CO.Pos() + X_CO.Rot().RotateVector(Vector3d(o.vertices[k], o.vertices[k + 1],
                                                                 o.vertices[k + 2]))));
        }
      }
      const auto merged = ignition::math::eigen3::verticesToOrientedBox(vertices);
      box.center = merged.Pose().Pos();
      box.orientation = merged.Pose().Rot();
      box.size = merged.Size();
    }
    out.push_back(box);
  }
  return out;
}

namespace {

void plot(std::uint8_t* rgb, std::uint32_t w, int x, int y) {
  std::uint8_t* p = rgb + 3 * (std::size_t(y) * w + std::size_t(x));
  p[0] = 0, p[1] = 255, p[2] = 0;
}

// gz-rendering's line: Bresenham along the major axis, the last pixel left out.
void draw_line(std::uint8_t* rgb, std::uint32_t w, int ax, int ay, int bx, int by) {
  if (std::abs(by - ay) < std::abs(bx - ax)) {
    if (ax > bx) std::swap(ax, bx), std::swap(ay, by);
    int dx = bx - ax, dy = by - ay, yi = 1;
    if (dy < 0) yi = -1, dy = -dy;
    int D = 2 * dy - dx, y = ay;
    for (int x = ax; x < bx; ++x) {
      plot(rgb, w, x, y);
      if (D > 0) {
        y += yi;
        D += 2 * (dy - dx);
      } else {
        D += 2 * dy;
      }
    }
  } else {
    if (ay > by) std::swap(ax, bx), std::swap(ay, by);
    int dx = bx - ax, dy = by - ay, xi = 1;
    if (dx < 0) xi = -1, dx = -dx;
    int D = 2 * dx - dy, x = ax;
    for (int y = ay; y < by; ++y) {
      plot(rgb, w, x, y);
      if (D > 0) {
        x += xi;
        D += 2 * (dx - dy);
      } else {
        D += 2 * dx;
      }
    }
  }
}

// Clips segment a–b to [-1, 1]² (Liang–Barsky); false when nothing is left.
bool clip(double& ax, double& ay, double& bx, double& by) {
  double t0 = 0, t1 = 1;
  const double dx = bx - ax, dy = by - ay;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {ax + 1, 1 - ax, ay + 1, 1 - ay};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  const double x0 = ax + t0 * dx, y0 = ay + t0 * dy;
  bx = ax + t1 * dx, by = ay + t1 * dy;
  ax = x0, ay = y0;
  return true;
}

}  // namespace

void draw_boxes(const std::vector<c::Box2D>& boxes, std::uint32_t w, std::uint32_t h,
                std::uint8_t* rgb) {
  for (const auto& b : boxes) {
    const int x0 = static_cast<int>(b.min_x), y0 = static_cast<int>(b.min_y);
    const int x1 = static_cast<int>(b.max_x), y1 = static_cast<int>(b.max_y);
    const int xs[2] = {x0, std::min(static_cast<int>(w) - 1, x1)};
    const int ys[2] = {y0, std::min(static_cast<int>(h) - 1, y1)};
    for (int y = y0; y < y1 && y < static_cast<int>(h); ++y) {
      for (int x : xs) plot(rgb, w, x, y);
    }
    for (int y : ys) {
      for (int x = x0; x < x1 && x < static_cast<int>(w); ++x) plot(rgb, w, x, y);
    }
  }
}

void draw_boxes(const std::vector<c::Box3D>& boxes, const render::CameraModel& m,
                std::uint8_t* rgb) {
  for (const auto& b : boxes) {
    // Corners in the view frame: the top face (+z of the box) 0..3, the bottom one 4..7.
    Vector3d v[8];
    const Vector3d e = b.size / 2;
    const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
    bool behind = false;
    for (int i = 0; i < 8; ++i) {
      const Vector3d local(sx[i % 4] * e.X(), sy[i % 4] * e.Y(), (i < 4 ? 1 : -1) * e.Z());
      v[i] = b.center + b.orientation.RotateVector(local);
      behind = behind || v[i].Z() > 0;
    }
    if (behind) continue;  // gz-rendering draws no box with a corner behind the camera
    double nx[8], ny[8];
    for (int i = 0; i < 8; ++i) {
      const double u = m.cx + m.fx * v[i].X() / -v[i].Z();
      const double vv = m.cy - m.fy * v[i].Y() / -v[i].Z();
      nx[i] = 2 * u / m.width - 1, ny[i] = 1 - 2 * vv / m.height;
    }
    static constexpr int kEdges[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                          {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
    for (const auto& edge : kEdges) {
      double ax = nx[edge[0]], ay = ny[edge[0]], bx = nx[edge[1]], by = ny[edge[1]];
      if (!clip(ax, ay, bx, by)) continue;
      auto sx_ = [&](double x) {
        return static_cast<int>(std::clamp(std::floor((x + 1) / 2 * m.width), 0.0, m.width - 1.0));
      };
      auto sy_ = [&](double y) {
        return static_cast<int>(
            std::clamp(std::floor((1 - y) / 2 * m.height), 0.0, m.height - 1.0));
      };
      draw_line(rgb, m.width, sx_(ax), sy_(ay), sx_(bx), sy_(by));
    }
  }
}

}  // namespace kestrel::sensors
