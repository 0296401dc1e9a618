// The one export model (src/export/README.md): channels built from the registry at construction,
// messages of changed channels each step. Foxglove's schemas in protobuf (proto/foxglove), small
// scalar channels in JSON with a JSON Schema.
#include "kestrel/export/export.h"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "export/json_channels.h"
#include "export/proto/foxglove/schemas.pb.h"
#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "mesh/mesh.h"

namespace kestrel::exports {
namespace {

namespace c = kestrel::components;
namespace fg = ::foxglove;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

// Every file the message's file depends on first, then the file itself (readers resolve
// imports in order).
std::string descriptor_set(const google::protobuf::Descriptor* d) {
  google::protobuf::FileDescriptorSet set;
  std::set<std::string> seen;
  std::function<void(const google::protobuf::FileDescriptor*)> add =
      [&](const google::protobuf::FileDescriptor* f) {
        if (!seen.insert(f->name()).second) return;
        for (int i = 0; i < f->dependency_count(); ++i) add(f->dependency(i));
        f->CopyTo(set.add_file());
      };
  add(d->file());
  return set.SerializeAsString();
}

void stamp(google::protobuf::Timestamp* ts, Duration t) {
  const std::int64_t ns = t.count();
  const std::int64_t sec = ns >= 0 ? ns / 1'000'000'000 : (ns - 999'999'999) / 1'000'000'000;
  ts->set_seconds(sec);
  ts->set_nanos(static_cast<std::int32_t>(ns - sec * 1'000'000'000));
}

void vec(const Vector3d& v, fg::Vector3* m) {
  m->set_x(v.X());
  m->set_y(v.Y());
  m->set_z(v.Z());
}

void quat(const Quaterniond& q, fg::Quaternion* m) {
  m->set_x(q.X());
  m->set_y(q.Y());
  m->set_z(q.Z());
  m->set_w(q.W());
}

void pose(const Pose3d& p, fg::Pose* m) {
  vec(p.Pos(), m->mutable_position());
  quat(p.Rot(), m->mutable_orientation());
}

void color(const c::Material* mat, fg::Color* m) {
  // SDF's default material is grey; a visual without one is drawn that way.
  const Vector3d rgb = mat ? mat->diffuse : Vector3d(0.7, 0.7, 0.7);
  m->set_r(rgb.X());
  m->set_g(rgb.Y());
  m->set_b(rgb.Z());
  m->set_a(mat ? 1.0 - mat->transparency : 1.0);
}

const char* kStatsSchema = R"({
  "title": "kestrel.Stats",
  "description": "World statistics and the viewer's counters",
  "type": "object",
  "properties": {
    "sim_time": {"type": "number", "description": "sim time [s]"},
    "real_time": {"type": "number", "description": "wall time the world has run [s]"},
    "rtf": {"type": "number", "description": "real-time factor over the last ~1 s of wall time"},
    "iterations": {"type": "integer"},
    "paused": {"type": "boolean"},
    "clients": {"type": "integer", "description": "viewer clients connected"},
    "dropped": {"type": "integer", "description": "messages replaced by newer ones before a slow client took them"},
    "refused": {"type": "integer", "description": "bad client messages and connections refused"}
  }
})";

const char* kClockSchema = R"({
  "title": "kestrel.Clock",
  "description": "Sim time",
  "type": "object",
  "properties": {
    "sim_time": {"type": "number", "description": "sim time [s]"},
    "sec": {"type": "integer"},
    "nsec": {"type": "integer"}
  }
})";

// Exactly equal (ignition-math's == has a tolerance of 1e-6, which hides slow motion).
bool same(const Pose3d& a, const Pose3d& b) {
  return a.Pos().X() == b.Pos().X() && a.Pos().Y() == b.Pos().Y() && a.Pos().Z() == b.Pos().Z() &&
         a.Rot().W() == b.Rot().W() && a.Rot().X() == b.Rot().X() && a.Rot().Y() == b.Rot().Y() &&
         a.Rot().Z() == b.Rot().Z();
}

const char* image_encoding(c::PixelFormat f) {
  switch (f) {
    case c::PixelFormat::kRgbInt8:
      return "rgb8";
    case c::PixelFormat::kLInt8:
      return "mono8";
    case c::PixelFormat::kLInt16:
      return "mono16";
    case c::PixelFormat::kRFloat32:
      return "32FC1";
  }
  return "";
}

std::string raw_image(const c::CameraReading& r, const c::Image& image) {
  fg::RawImage m;
  stamp(m.mutable_timestamp(), r.stamp);
  m.set_frame_id(r.frame_id);
  m.set_width(image.width);
  m.set_height(image.height);
  m.set_encoding(image_encoding(image.format));
  m.set_step(image.width * c::bytes_per_pixel(image.format));
  m.set_data(image.data.data(), image.data.size());
  return m.SerializeAsString();
}

std::string calibration(const c::CameraReading& r) {
  const auto& i = r.info;
  fg::CameraCalibration m;
  stamp(m.mutable_timestamp(), r.stamp);
  m.set_frame_id(r.frame_id);
  m.set_width(i.width);
  m.set_height(i.height);
  m.set_distortion_model("plumb_bob");
  for (double d : {i.k1, i.k2, i.p1, i.p2, i.k3}) m.add_d(d);
  for (double k : {i.fx, i.skew, i.cx, 0.0, i.fy, i.cy, 0.0, 0.0, 1.0}) m.add_k(k);
  for (double x : {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0}) m.add_r(x);
  for (double p : {i.projection_fx, 0.0, i.projection_cx, i.tx, 0.0, i.projection_fy,
                   i.projection_cy, i.ty, 0.0, 0.0, 1.0, 0.0}) {
    m.add_p(p);
  }
  return m.SerializeAsString();
}

// The lidar's ring nearest the horizontal (the only one of a single-ring lidar): a LaserScan is
// planar, so a multi-ring lidar's scan is that ring; every ring is in its point cloud.
std::uint32_t scan_ring(const c::LidarReading& r) {
  std::uint32_t best = 0;
  for (std::uint32_t j = 1; j < r.vertical_count; ++j) {
    const double el = r.vertical_angle_min + j * r.vertical_angle_step;
    const double el_best = r.vertical_angle_min + best * r.vertical_angle_step;
    if (std::abs(el) < std::abs(el_best)) best = j;
  }
  return best;
}

std::string laser_scan(const c::LidarReading& r) {
  fg::LaserScan m;
  stamp(m.mutable_timestamp(), r.stamp);
  m.set_frame_id(r.frame_id);
  pose(Pose3d::Zero, m.mutable_pose());
  m.set_start_angle(r.angle_min);
  m.set_end_angle(r.angle_min + (r.count > 1 ? (r.count - 1) * r.angle_step : 0.0));
  const std::size_t first = std::size_t(scan_ring(r)) * r.count;
  if (first + r.count > r.ranges.size()) return m.SerializeAsString();
  for (std::uint32_t i = 0; i < r.count; ++i) m.add_ranges(r.ranges[first + i]);
  if (first + r.count <= r.intensities.size()) {
    for (std::uint32_t i = 0; i < r.count; ++i) m.add_intensities(r.intensities[first + i]);
  }
  return m.SerializeAsString();
}

// A PointCloud of packed float32 fields (x, y, z, and intensity when `with_intensity`) in the
// sensor frame; `point(i, v)` fills point i's fields and says whether it is a point (finite).
template <class Point>
std::string point_cloud(Duration t, const std::string& frame, std::size_t n, bool with_intensity,
                        Point point) {
  fg::PointCloud m;
  stamp(m.mutable_timestamp(), t);
  m.set_frame_id(frame);
  pose(Pose3d::Zero, m.mutable_pose());
  const int fields = with_intensity ? 4 : 3;
  const char* names[] = {"x", "y", "z", "intensity"};
  for (int f = 0; f < fields; ++f) {
    auto* field = m.add_fields();
    field->set_name(names[f]);
    field->set_offset(4 * f);
    field->set_type(fg::PackedElementField::FLOAT32);
  }
  const std::size_t stride = 4 * fields;
  m.set_point_stride(static_cast<std::uint32_t>(stride));
  std::string* data = m.mutable_data();
  data->resize(n * stride);
  std::size_t kept = 0;
  float v[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    if (!point(i, v)) continue;
    std::memcpy(data->data() + kept * stride, v, stride);
    ++kept;
  }
  data->resize(kept * stride);
  return m.SerializeAsString();
}

// Every finite range along its ray: r (cos el cos az, cos el sin az, sin el), with intensity.
std::string lidar_cloud(const c::LidarReading& r) {
  const std::size_t n = std::min(std::size_t(r.count) * r.vertical_count, r.ranges.size());
  return point_cloud(r.stamp, r.frame_id, n, true, [&](std::size_t k, float* v) {
    const double range = r.ranges[k];
    if (!std::isfinite(range)) return false;
    const double el = r.vertical_angle_min + double(k / r.count) * r.vertical_angle_step;
    const double az = r.angle_min + double(k % r.count) * r.angle_step;
    v[0] = static_cast<float>(range * std::cos(el) * std::cos(az));
    v[1] = static_cast<float>(range * std::cos(el) * std::sin(az));
    v[2] = static_cast<float>(range * std::sin(el));
    v[3] = k < r.intensities.size() ? static_cast<float>(r.intensities[k]) : 0.f;
    return true;
  });
}

// A depth or RGBD camera's points (the reading's, camera frame), the finite ones.
std::string camera_cloud(const c::CameraReading& r) {
  return point_cloud(r.stamp, r.frame_id, r.points.size() / 3, false, [&](std::size_t i, float* v) {
    const float* p = &r.points[3 * i];
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) return false;
    std::memcpy(v, p, 12);
    return true;
  });
}

}  // namespace

struct ExportModel::Impl {
  std::string world_prefix;  // "W::", stripped from scoped names
  bool raw_numbers = false;  // the text feeds' numbers left as doubles (finish_json)
  std::uint32_t tf = 0, scene = 0, stats = 0, clock = 0;
  std::set<std::uint32_t> forced;

  // transforms: links and their last exported world poses
  std::uint64_t epoch = ~0ull;
  std::vector<ecs::Entity> links;
  std::unordered_map<ecs::Entity, std::string> names;
  std::vector<Pose3d> sent;
  fg::FrameTransforms tf_msg;
  std::vector<ecs::Entity> tf_named;  // the link whose names tf_msg's transform i holds
  bool tf_changed = true;

  // scene: rebuilt when the set of visuals changes
  std::uint64_t scene_signature = 0;
  std::size_t scene_count = ~std::size_t{0};
  bool scene_changed = true;
  Message last_scene;
  std::map<std::string, std::shared_ptr<mesh::TriMesh>> meshes;  // by path and scale

  Duration last_time{-1};

  // A channel fed by a sensor's reading: a message when the reading's sequence moved.
  struct Feed {
    std::uint32_t channel = 0;  // 0: the sensor has no such topic
    std::uint64_t seq = 0;      // the sequence last sent (0: none)
  };
  struct Camera {
    ecs::Entity entity = ecs::kNullEntity;
    Feed image, info;    // RawImage, CameraCalibration
    Feed depth, points;  // RGBD cameras' depth RawImage; depth and RGBD cameras' PointCloud
    Feed labels;         // segmentation cameras' labels map RawImage
  };
  struct Lidar {
    ecs::Entity entity = ecs::kNullEntity;
    Feed scan, points;  // LaserScan, PointCloud
  };
  std::vector<Camera> cameras;
  std::vector<Lidar> lidars;
  std::vector<detail::JsonFeed> json;  // the other sensors and the vehicles' state

  const std::string& name(const ecs::Registry& reg, ecs::Entity e) {
    auto it = names.find(e);
    if (it != names.end()) return it->second;
    std::string n = reg.scoped_name(e);
    if (n.starts_with(world_prefix)) n.erase(0, world_prefix.size());
    return names.emplace(e, std::move(n)).first->second;
  }

  void refresh_structure(const ecs::Registry& reg) {
    if (reg.layout_epoch() == epoch) return;
    epoch = reg.layout_epoch();
    for (auto& f : json) {
      if (f.locate) f.reading = f.locate(reg, f.entity);
    }
    std::vector<ecs::Entity> now;
    reg.each<c::Link, c::WorldPose>(
        [&](ecs::Entity e, const c::Link&, const c::WorldPose&) { now.push_back(e); });
    if (now != links) {
      links = std::move(now);
      sent.clear();
      tf_changed = true;
      std::unordered_map<ecs::Entity, std::string> kept;
      for (ecs::Entity e : links) {
        auto it = names.find(e);
        if (it != names.end()) kept.emplace(e, std::move(it->second));
      }
      names = std::move(kept);
    }
    std::uint64_t sig = 0;
    std::size_t count = 0;
    reg.each<c::Visual>([&](ecs::Entity e, const c::Visual&) {
      sig = sig * 1000003u + e;
      ++count;
    });
    if (sig != scene_signature || count != scene_count) {
      scene_signature = sig;
      scene_count = count;
      scene_changed = true;
    }
  }

  bool links_moved(const ecs::Registry& reg) {
    if (sent.size() != links.size()) return true;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const auto* p = reg.try_get<c::WorldPose>(links[i]);
      if (p && !same(p->value, sent[i])) return true;
    }
    return false;
  }

  // The message is kept between calls so that its transforms and frame names are reused, not
  // allocated again every step.
  std::string transforms(const ecs::Registry& reg, Duration t) {
    sent.resize(links.size());
    int n = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const auto* p = reg.try_get<c::WorldPose>(links[i]);
      if (!p) continue;
      sent[i] = p->value;
      auto* tr =
          n < tf_msg.transforms_size() ? tf_msg.mutable_transforms(n) : tf_msg.add_transforms();
      stamp(tr->mutable_timestamp(), t);
      if (tf_named.size() <= static_cast<std::size_t>(n)) tf_named.resize(n + 1, ecs::kNullEntity);
      if (tf_named[n] != links[i]) {  // the frame names stay while the transform's link does
        tr->set_parent_frame_id("world");
        tr->set_child_frame_id(name(reg, links[i]));
        tf_named[n] = links[i];
      }
      ++n;
      vec(p->value.Pos(), tr->mutable_translation());
      quat(p->value.Rot(), tr->mutable_rotation());
    }
    while (tf_msg.transforms_size() > n) tf_msg.mutable_transforms()->RemoveLast();
    tf_named.resize(n);  // a transform added again is cleared: named again
    return tf_msg.SerializeAsString();
  }

  std::shared_ptr<mesh::TriMesh> load_mesh(const c::MeshShape& m, ecs::Entity visual,
                                           const ecs::Registry& reg) {
    const std::string key = m.path + "|" + std::to_string(m.scale.X()) + "," +
                            std::to_string(m.scale.Y()) + "," + std::to_string(m.scale.Z()) + "|" +
                            m.submesh;
    auto it = meshes.find(key);
    if (it != meshes.end()) return it->second;
    auto tri = std::make_shared<mesh::TriMesh>();
    const std::string why = m.path.empty() ? "its file could not be resolved (" + m.uri + ")"
                                           : mesh::load(m, m.scale, *tri);
    if (!why.empty()) {
      // The world loaded without it (the visual is drawn by nothing else): say so once.
      spdlog::warn("export: {}: its mesh is left out of the viewer's scene: {}",
                   reg.describe(visual), why);
      tri.reset();
    }
    meshes.emplace(key, tri);
    return tri;
  }

  // One entity per link that has visuals (frame_locked to the link's frame), primitives in
  // the link frame; every message replaces the whole scene (deletion ALL first), so a reader
  // that only keeps the newest message still has all of it.
  std::string scene_update(const ecs::Registry& reg, Duration t) {
    fg::SceneUpdate msg;
    auto* del = msg.add_deletions();
    stamp(del->mutable_timestamp(), t);
    del->set_type(fg::SceneEntityDeletion::ALL);
    std::map<ecs::Entity, fg::SceneEntity*> by_link;
    reg.each<c::Visual, c::Geometry, c::Pose>(
        [&](ecs::Entity v, const c::Visual&, const c::Geometry& g, const c::Pose& X_LV) {
          const ecs::Entity link = reg.parent(v);
          if (link == ecs::kNullEntity || !reg.has<c::Link>(link)) return;
          auto& ent = by_link[link];
          if (!ent) {
            ent = msg.add_entities();
            stamp(ent->mutable_timestamp(), t);
            ent->set_frame_id(name(reg, link));
            ent->set_id(name(reg, link));
            ent->set_frame_locked(true);
          }
          const auto* mat = reg.try_get<c::Material>(v);
          const Pose3d& P = X_LV.value;
          auto sphere = [&](const Pose3d& at, const Vector3d& size) {
            auto* sp = ent->add_spheres();
            pose(at, sp->mutable_pose());
            vec(size, sp->mutable_size());
            color(mat, sp->mutable_color());
          };
          auto cylinder = [&](const Pose3d& at, double radius, double length) {
            auto* cy = ent->add_cylinders();
            pose(at, cy->mutable_pose());
            vec(Vector3d(2 * radius, 2 * radius, length), cy->mutable_size());
            cy->set_bottom_scale(1);
            cy->set_top_scale(1);
            color(mat, cy->mutable_color());
          };
          std::visit(
              [&](const auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, c::BoxShape>) {
                  auto* cube = ent->add_cubes();
                  pose(P, cube->mutable_pose());
                  vec(s.size, cube->mutable_size());
                  color(mat, cube->mutable_color());
                } else if constexpr (std::is_same_v<S, c::SphereShape>) {
                  sphere(P, Vector3d(2, 2, 2) * s.radius);
                } else if constexpr (std::is_same_v<S, c::EllipsoidShape>) {
                  sphere(P, s.radii * 2);
                } else if constexpr (std::is_same_v<S, c::CylinderShape>) {
                  cylinder(P, s.radius, s.length);
                } else if constexpr (std::is_same_v<S, c::CapsuleShape>) {
                  // A cylinder and a sphere at each end.
                  cylinder(P, s.radius, s.length);
                  for (double end : {-0.5, 0.5}) {
                    sphere(P * Pose3d(0, 0, end * s.length, 0, 0, 0), Vector3d(2, 2, 2) * s.radius);
                  }
                } else if constexpr (std::is_same_v<S, c::PlaneShape>) {
                  // A thin box with its top face on the plane, turned from +z to the normal.
                  auto* cube = ent->add_cubes();
                  Quaterniond q;
                  q.From2Axes(Vector3d::UnitZ, s.normal.Normalized());
                  const double thick = 0.01;
                  pose(P * Pose3d(q * Vector3d(0, 0, -thick / 2), q), cube->mutable_pose());
                  vec(Vector3d(s.size.X(), s.size.Y(), thick), cube->mutable_size());
                  color(mat, cube->mutable_color());
                } else if constexpr (std::is_same_v<S, c::MeshShape>) {
                  auto tri = load_mesh(s, v, reg);
                  if (!tri) return;
                  auto* tl = ent->add_triangles();
                  pose(P, tl->mutable_pose());
                  if (mat) {
                    color(mat, tl->mutable_color());
                  } else if (tri->has_color) {
                    auto* col = tl->mutable_color();
                    col->set_r(tri->diffuse[0]);
                    col->set_g(tri->diffuse[1]);
                    col->set_b(tri->diffuse[2]);
                    col->set_a(1);
                  } else {
                    color(nullptr, tl->mutable_color());
                  }
                  for (std::size_t i = 0; i + 2 < tri->vertices.size(); i += 3) {
                    auto* pt = tl->add_points();
                    pt->set_x(tri->vertices[i]);
                    pt->set_y(tri->vertices[i + 1]);
                    pt->set_z(tri->vertices[i + 2]);
                  }
                  for (std::uint32_t idx : tri->indices) tl->add_indices(idx);
                }
                // Heightmaps are not in the scene yet (README).
              },
              g.shape);
        });
    return msg.SerializeAsString();
  }
};

ExportModel::ExportModel(const ecs::Registry& reg, std::string world_name, bool raw_numbers)
    : impl_(new Impl) {
  impl_->world_prefix = world_name + "::";
  impl_->raw_numbers = raw_numbers;
  auto add = [&](std::string topic, std::string encoding, std::string schema_name,
                 std::string schema_encoding, std::string schema, bool latched) {
    Channel ch;
    ch.id = static_cast<std::uint32_t>(channels_.size() + 1);
    ch.topic = std::move(topic);
    ch.encoding = std::move(encoding);
    ch.schema_name = std::move(schema_name);
    ch.schema_encoding = std::move(schema_encoding);
    ch.schema = std::move(schema);
    ch.latched = latched;
    channels_.push_back(std::move(ch));
    return channels_.back().id;
  };
  impl_->tf = add("/tf", "protobuf", "foxglove.FrameTransforms", "protobuf",
                  descriptor_set(fg::FrameTransforms::descriptor()), false);
  impl_->scene = add("/scene", "protobuf", "foxglove.SceneUpdate", "protobuf",
                     descriptor_set(fg::SceneUpdate::descriptor()), true);
  const std::string w = "/world/" + world_name;
  impl_->stats = add(w + "/stats", "json", "kestrel.Stats", "jsonschema", kStatsSchema, false);
  impl_->clock = add(w + "/clock", "json", "kestrel.Clock", "jsonschema", kClockSchema, false);
  channels_[impl_->stats - 1].status = channels_[impl_->clock - 1].status = true;
  // The sensor systems set the topics at configure; readings appear with the first sample.
  // Topics are absolute, as ignition-transport makes them ("cam/image" is "/cam/image").
  auto absolute = [](const std::string& t) { return t.starts_with("/") ? t : "/" + t; };
  auto proto = [&](const std::string& topic, const google::protobuf::Descriptor* d) {
    const std::uint32_t id =
        add(absolute(topic), "protobuf", d->full_name(), "protobuf", descriptor_set(d), false);
    channels_[id - 1].samples = true;  // the cameras' and lidars' frames
    return id;
  };
  reg.each<c::CameraTopics>([&](ecs::Entity e, const c::CameraTopics& t) {
    if (t.image.empty()) return;
    Impl::Camera cam;
    cam.entity = e;
    cam.image.channel = proto(t.image, fg::RawImage::descriptor());
    if (!t.camera_info.empty()) {
      cam.info.channel = proto(t.camera_info, fg::CameraCalibration::descriptor());
    }
    if (!t.depth_image.empty()) {
      cam.depth.channel = proto(t.depth_image, fg::RawImage::descriptor());
    }
    if (!t.points.empty()) cam.points.channel = proto(t.points, fg::PointCloud::descriptor());
    if (!t.labels_map.empty()) {
      cam.labels.channel = proto(t.labels_map, fg::RawImage::descriptor());
    }
    impl_->cameras.push_back(cam);
  });
  reg.each<c::LidarTopics>([&](ecs::Entity e, const c::LidarTopics& t) {
    Impl::Lidar lidar;
    lidar.entity = e;
    if (!t.scan.empty()) lidar.scan.channel = proto(t.scan, fg::LaserScan::descriptor());
    if (!t.points.empty()) lidar.points.channel = proto(t.points, fg::PointCloud::descriptor());
    impl_->lidars.push_back(lidar);
  });
  impl_->json = detail::json_feeds(
      reg, world_name,
      [&](const std::string& topic, const std::string& schema_name, const std::string& schema) {
        return add(topic, "json", schema_name, "jsonschema", schema, false);
      });
  for (const auto& f : impl_->json) {
    channels_[f.channel - 1].samples = bool(f.sequence);
    channels_[f.channel - 1].raw_numbers = raw_numbers && bool(f.text);
  }
  impl_->refresh_structure(reg);
}

ExportModel::~ExportModel() { delete impl_; }

const Channel* ExportModel::find(const std::string& topic) const {
  for (const auto& ch : channels_) {
    if (ch.topic == topic) return &ch;
  }
  return nullptr;
}

void ExportModel::force(std::uint32_t channel) { impl_->forced.insert(channel); }

const Message* ExportModel::last(std::uint32_t channel) const {
  if (channel == impl_->scene && !impl_->last_scene.data.empty()) return &impl_->last_scene;
  return nullptr;
}

bool ExportModel::news(const ecs::Registry& reg,
                       const std::function<bool(std::uint32_t)>& wanted) const {
  const Impl& m = *impl_;
  if (reg.layout_epoch() != m.epoch || m.scene_changed || !m.forced.empty()) return true;
  // A new reading: what step() sends (its sequence moved) if its channel is wanted.
  auto moved = [&](const Impl::Feed& f, std::uint64_t seq) {
    return f.channel && seq != f.seq && wanted(f.channel);
  };
  for (const auto& cam : m.cameras) {
    const auto* r = reg.try_get<c::CameraReading>(cam.entity);
    if (!r || r->sequence == 0) continue;
    if (moved(cam.image, r->sequence) || moved(cam.info, r->sequence) ||
        moved(cam.depth, r->sequence) || moved(cam.points, r->sequence) ||
        moved(cam.labels, r->sequence)) {
      return true;
    }
  }
  for (const auto& lidar : m.lidars) {
    const auto* r = reg.try_get<c::LidarReading>(lidar.entity);
    if (!r || r->sequence == 0) continue;
    if (moved(lidar.scan, r->sequence) || moved(lidar.points, r->sequence)) return true;
  }
  for (const auto& f : m.json) {
    if (!f.sequence) continue;  // a state component's: sent when wanted and its text changed
    Duration t;
    const std::uint64_t seq = f.sequence_at ? (f.reading ? f.sequence_at(f.reading, t) : 0)
                                            : f.sequence(reg, f.entity, t);
    if (seq != 0 && seq != f.seq && wanted(f.channel)) return true;
  }
  return false;
}

void ExportModel::step(const ecs::Registry& reg, const StepContext& ctx,
                       const std::function<bool(std::uint32_t)>& wanted,
                       const std::function<void(Message&&)>& sink) {
  Impl& m = *impl_;
  // Time going back is a reset: the registry was restored, everything is sent again.
  if (ctx.sim_time < m.last_time) {
    for (auto& cam : m.cameras) {
      cam.image.seq = cam.info.seq = cam.depth.seq = cam.points.seq = cam.labels.seq = 0;
    }
    for (auto& lidar : m.lidars) lidar.scan.seq = lidar.points.seq = 0;
    for (auto& f : m.json) {
      f.seq = 0;
      f.last.clear();
    }
    m.epoch = ~0ull;
    m.scene_count = ~std::size_t{0};
    m.sent.clear();
    for (const auto& ch : channels_) m.forced.insert(ch.id);
  }
  m.last_time = ctx.sim_time;
  m.refresh_structure(reg);
  // A channel sent whatever changed (a new reader, a reset); empty nearly always.
  auto unforce = [&](std::uint32_t ch) { return !m.forced.empty() && m.forced.erase(ch) > 0; };
  auto due = [&](std::uint32_t ch, bool changed) {
    if (!wanted(ch)) return false;
    return changed || unforce(ch);
  };
  // Whether a link moved is looked at only when the transforms are wanted (wanted() once: a
  // reader's may count the call); they stay pending until then (`sent`: the poses last sent).
  if (wanted(m.tf)) {
    if (!m.tf_changed) m.tf_changed = m.links_moved(reg);
    if (m.tf_changed || unforce(m.tf)) {
      sink(Message{m.tf, ctx.sim_time, m.transforms(reg, ctx.sim_time)});
      m.tf_changed = false;
    }
  }
  // The scene is built when it changed even if nobody reads it now: last() hands it to the
  // next reader.
  if (m.scene_changed) {
    m.last_scene = Message{m.scene, ctx.sim_time, m.scene_update(reg, ctx.sim_time)};
    m.scene_changed = false;
    m.forced.insert(m.scene);
  }
  if (due(m.scene, false)) sink(Message(m.last_scene));
  // A sensor's channel: a message of its new reading, stamped with the sample's time.
  auto feed = [&](Impl::Feed& f, std::uint64_t seq, Duration t, const auto& make) {
    if (!f.channel || !due(f.channel, seq != f.seq)) return;
    sink(Message{f.channel, t, make()});
    f.seq = seq;
  };
  for (auto& cam : m.cameras) {
    const auto* r = reg.try_get<c::CameraReading>(cam.entity);
    if (!r || r->sequence == 0) continue;
    feed(cam.image, r->sequence, r->stamp, [&] { return raw_image(*r, r->image); });
    feed(cam.info, r->sequence, r->stamp, [&] { return calibration(*r); });
    feed(cam.depth, r->sequence, r->stamp, [&] { return raw_image(*r, r->depth); });
    feed(cam.points, r->sequence, r->stamp, [&] { return camera_cloud(*r); });
    feed(cam.labels, r->sequence, r->stamp, [&] { return raw_image(*r, r->labels); });
  }
  for (auto& lidar : m.lidars) {
    const auto* r = reg.try_get<c::LidarReading>(lidar.entity);
    if (!r || r->sequence == 0) continue;
    feed(lidar.scan, r->sequence, r->stamp, [&] { return laser_scan(*r); });
    feed(lidar.points, r->sequence, r->stamp, [&] { return lidar_cloud(*r); });
  }
  // Sensors: a message per new reading; state: when its text changed.
  for (auto& f : m.json) {
    if (!wanted(f.channel)) continue;
    Duration t = ctx.sim_time;
    const std::uint64_t seq = f.sequence_at ? (f.reading ? f.sequence_at(f.reading, t) : 0)
                              : f.sequence  ? f.sequence(reg, f.entity, t)
                                            : 0;
    const bool forced = !m.forced.empty() && m.forced.count(f.channel) > 0;
    if (f.sequence && (seq == 0 || (seq == f.seq && !forced))) continue;
    std::string text;
    text.reserve(std::max<std::size_t>(256, f.last.size() + 16));  // one allocation
    if (f.text) {
      detail::JsonText out{text, m.raw_numbers};
      if (!f.text(reg, f.entity, out)) continue;
    } else {
      nlohmann::json j = nlohmann::json::object();
      if (!f.make(reg, f.entity, j)) continue;
      text = j.dump();
    }
    if (!f.sequence && text == f.last && !forced) continue;
    unforce(f.channel);
    f.seq = seq;
    if (!f.sequence) f.last = text;  // what the next text is compared with
    sink(Message{f.channel, t, std::move(text)});
  }
  // Stats and clock change every step and a recorder takes every step: written directly (every
  // value a finite number, an integer or a bool), without building a JSON tree each time.
  if (due(m.stats, true)) {
    sink(Message{
        m.stats, ctx.sim_time,
        fmt::format(FMT_COMPILE(R"({{"sim_time":{},"real_time":{},"rtf":{},"iterations":{},)"
                                R"("paused":{},"clients":{},"dropped":{},"refused":{}}})"),
                    to_seconds(ctx.sim_time), to_seconds(ctx.stats.real_time),
                    std::isfinite(ctx.stats.rtf) ? ctx.stats.rtf : 0.0, ctx.stats.iterations,
                    ctx.stats.paused, ctx.clients, ctx.dropped, ctx.refused)});
  }
  if (due(m.clock, true)) {
    const std::int64_t ns = ctx.sim_time.count();
    sink(Message{m.clock, ctx.sim_time,
                 fmt::format(FMT_COMPILE(R"({{"sim_time":{},"sec":{},"nsec":{}}})"),
                             to_seconds(ctx.sim_time),
                             ns / 1'000'000'000, ns % 1'000'000'000)});
  }
}

}  // namespace kestrel::exports
