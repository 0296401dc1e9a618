// Sensor readings (components/sensors.h) -> their SensorTopic, with Gazebo's message types,
// whenever a reading's sequence advances (see bridges.h); a stopped sensor's does not
// (components::SensorFault), and a NavSat sample without a fix is not published.
// AirSpeedReading is not published: ignition-msgs 8 has no air speed message.
#include <ignition/msgs/altimeter.pb.h>
#include <ignition/msgs/annotated_axis_aligned_2d_box_v.pb.h>
#include <ignition/msgs/annotated_oriented_3d_box_v.pb.h>
#include <ignition/msgs/camera_info.pb.h>
#include <ignition/msgs/contacts.pb.h>
#include <ignition/msgs/fluid_pressure.pb.h>
#include <ignition/msgs/image.pb.h>
#include <ignition/msgs/imu.pb.h>
#include <ignition/msgs/laserscan.pb.h>
#include <ignition/msgs/logical_camera_image.pb.h>
#include <ignition/msgs/magnetometer.pb.h>
#include <ignition/msgs/navsat.pb.h>
#include <ignition/msgs/pointcloud_packed.pb.h>
#include <ignition/msgs/wrench.pb.h>

#include <cmath>
#include <cstring>
#include <ignition/msgs/Utility.hh>
#include <unordered_map>

#include "kestrel/components/camera.h"
#include "kestrel/components/sensors.h"
#include "transport/bridges.h"
#include "transport/outbox.h"

namespace kestrel::transport::detail {

namespace c = kestrel::components;
namespace msgs = ignition::msgs;

namespace {

void vec(const ignition::math::Vector3d& v, msgs::Vector3d* m) {
  m->set_x(v.X());
  m->set_y(v.Y());
  m->set_z(v.Z());
}

void pose(const ignition::math::Pose3d& p, msgs::Pose* m) {
  vec(p.Pos(), m->mutable_position());
  auto* q = m->mutable_orientation();
  q->set_w(p.Rot().W());
  q->set_x(p.Rot().X());
  q->set_y(p.Rot().Y());
  q->set_z(p.Rot().Z());
}

void header(msgs::Header* h, Duration t, const std::string& frame_id) {
  stamp(h, t);
  auto* frame = h->add_data();
  frame->set_key("frame_id");
  frame->add_value(frame_id);
}

msgs::PixelFormatType pixel_format(c::PixelFormat f) {
  switch (f) {
    case c::PixelFormat::kRgbInt8:
      return msgs::PixelFormatType::RGB_INT8;
    case c::PixelFormat::kLInt8:
      return msgs::PixelFormatType::L_INT8;
    case c::PixelFormat::kLInt16:
      return msgs::PixelFormatType::L_INT16;
    case c::PixelFormat::kRFloat32:
      return msgs::PixelFormatType::R_FLOAT32;
  }
  return msgs::PixelFormatType::UNKNOWN_PIXEL_FORMAT;
}

std::unique_ptr<msgs::Image> image_msg(const c::Image& img, Duration t, const std::string& frame) {
  auto m = std::make_unique<msgs::Image>();
  header(m->mutable_header(), t, frame);
  m->set_width(img.width);
  m->set_height(img.height);
  m->set_step(img.width * c::bytes_per_pixel(img.format));
  m->set_pixel_format_type(pixel_format(img.format));
  m->set_data(img.data.data(), img.data.size());
  return m;
}

// gz-sensors' CameraSensor::PopulateInfo layout: plumb-bob k = (k1, k2, p1, p2, k3), K and P
// row-major, identity rectification.
std::unique_ptr<msgs::CameraInfo> info_msg(const c::CameraInfo& i, Duration t,
                                           const std::string& frame) {
  auto m = std::make_unique<msgs::CameraInfo>();
  header(m->mutable_header(), t, frame);
  m->set_width(i.width);
  m->set_height(i.height);
  auto* d = m->mutable_distortion();
  d->set_model(msgs::CameraInfo::Distortion::PLUMB_BOB);
  for (double k : {i.k1, i.k2, i.p1, i.p2, i.k3}) d->add_k(k);
  auto* k = m->mutable_intrinsics();
  for (double v : {i.fx, i.skew, i.cx, 0.0, i.fy, i.cy, 0.0, 0.0, 1.0}) k->add_k(v);
  auto* p = m->mutable_projection();
  for (double v : {i.projection_fx, 0.0, i.projection_cx, i.tx, 0.0, i.projection_fy,
                   i.projection_cy, i.ty, 0.0, 0.0, 1.0, 0.0}) {
    p->add_p(v);
  }
  for (double v : {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0}) m->add_rectification_matrix(v);
  return m;
}

// Camera points: xyz + rgb (memory-aligned fields, as gz-sensors), colour bytes B G R.
std::unique_ptr<msgs::PointCloudPacked> points_msg(const c::CameraReading& x) {
  auto m = std::make_unique<msgs::PointCloudPacked>();
  msgs::InitPointCloudPacked(*m, x.frame_id, true,
                             {{"xyz", msgs::PointCloudPacked::Field::FLOAT32},
                              {"rgb", msgs::PointCloudPacked::Field::FLOAT32}});
  stamp(m->mutable_header(), x.stamp);
  const std::uint32_t w = x.depth.width ? x.depth.width : x.image.width;
  const std::uint32_t h = x.depth.width ? x.depth.height : x.image.height;
  m->set_width(w);
  m->set_height(h);
  m->set_row_step(m->point_step() * w);
  m->set_is_dense(true);
  std::string* data = m->mutable_data();
  data->resize(std::size_t(m->row_step()) * h);
  const std::uint32_t ox = m->field(0).offset(), oy = m->field(1).offset(),
                      oz = m->field(2).offset(), oc = m->field(3).offset();
  const std::size_t n = std::min<std::size_t>(std::size_t(w) * h, x.points.size() / 3);
  for (std::size_t i = 0; i < n; ++i) {
    char* p = data->data() + i * m->point_step();
    std::memcpy(p + ox, &x.points[3 * i], 4);
    std::memcpy(p + oy, &x.points[3 * i + 1], 4);
    std::memcpy(p + oz, &x.points[3 * i + 2], 4);
    p[oc] = static_cast<char>(x.point_rgb[3 * i + 2]);
    p[oc + 1] = static_cast<char>(x.point_rgb[3 * i + 1]);
    p[oc + 2] = static_cast<char>(x.point_rgb[3 * i]);
  }
  return m;
}

// gz-sensors' BoundingBoxCameraSensor: corners in pixels; 3D boxes in the camera's view frame.
std::unique_ptr<msgs::AnnotatedAxisAligned2DBox_V> boxes_2d_msg(const c::CameraReading& x) {
  auto m = std::make_unique<msgs::AnnotatedAxisAligned2DBox_V>();
  header(m->mutable_header(), x.stamp, x.frame_id);
  for (const auto& b : x.boxes_2d) {
    auto* a = m->add_annotated_box();
    a->set_label(static_cast<std::uint32_t>(b.label));
    a->mutable_box()->mutable_min_corner()->set_x(b.min_x);
    a->mutable_box()->mutable_min_corner()->set_y(b.min_y);
    a->mutable_box()->mutable_max_corner()->set_x(b.max_x);
    a->mutable_box()->mutable_max_corner()->set_y(b.max_y);
  }
  return m;
}

std::unique_ptr<msgs::AnnotatedOriented3DBox_V> boxes_3d_msg(const c::CameraReading& x) {
  auto m = std::make_unique<msgs::AnnotatedOriented3DBox_V>();
  header(m->mutable_header(), x.stamp, x.frame_id);
  for (const auto& b : x.boxes_3d) {
    auto* a = m->add_annotated_box();
    a->set_label(static_cast<std::uint32_t>(b.label));
    vec(b.center, a->mutable_box()->mutable_center());
    vec(b.size, a->mutable_box()->mutable_boxsize());
    auto* q = a->mutable_box()->mutable_orientation();
    q->set_w(b.orientation.W());
    q->set_x(b.orientation.X());
    q->set_y(b.orientation.Y());
    q->set_z(b.orientation.Z());
  }
  return m;
}

std::unique_ptr<msgs::LaserScan> scan_msg(const c::LidarReading& x) {
  auto m = std::make_unique<msgs::LaserScan>();
  header(m->mutable_header(), x.stamp, x.frame_id);
  m->set_frame(x.frame_id);
  pose(x.world_pose, m->mutable_world_pose());
  m->set_angle_min(x.angle_min);
  m->set_angle_max(x.angle_max);
  m->set_angle_step(x.angle_step);
  m->set_range_min(x.range_min);
  m->set_range_max(x.range_max);
  m->set_count(x.count);
  m->set_vertical_angle_min(x.vertical_angle_min);
  m->set_vertical_angle_max(x.vertical_angle_max);
  m->set_vertical_angle_step(x.vertical_angle_step);
  m->set_vertical_count(x.vertical_count);
  m->mutable_ranges()->Add(x.ranges.begin(), x.ranges.end());
  m->mutable_intensities()->Add(x.intensities.begin(), x.intensities.end());
  return m;
}

// Lidar points: xyz, intensity, ring (uint16), from each range along its ray (gz-sensors'
// GpuLidarSensor layout); dense only when every range is finite.
std::unique_ptr<msgs::PointCloudPacked> lidar_points_msg(const c::LidarReading& x) {
  auto m = std::make_unique<msgs::PointCloudPacked>();
  msgs::InitPointCloudPacked(*m, x.frame_id, true,
                             {{"xyz", msgs::PointCloudPacked::Field::FLOAT32},
                              {"intensity", msgs::PointCloudPacked::Field::FLOAT32},
                              {"ring", msgs::PointCloudPacked::Field::UINT16}});
  stamp(m->mutable_header(), x.stamp);
  m->set_width(x.count);
  m->set_height(x.vertical_count);
  m->set_row_step(m->point_step() * x.count);
  std::string* data = m->mutable_data();
  data->resize(std::size_t(m->row_step()) * x.vertical_count);
  bool dense = true;
  for (std::uint32_t j = 0; j < x.vertical_count; ++j) {
    const double el = x.vertical_angle_min + j * x.vertical_angle_step;
    for (std::uint32_t i = 0; i < x.count; ++i) {
      const std::size_t k = std::size_t(j) * x.count + i;
      const double az = x.angle_min + i * x.angle_step;
      const double r = x.ranges[k];
      dense = dense && std::isfinite(r);
      const float v[4] = {static_cast<float>(r * std::cos(el) * std::cos(az)),
                          static_cast<float>(r * std::cos(el) * std::sin(az)),
                          static_cast<float>(r * std::sin(el)),
                          static_cast<float>(x.intensities[k])};
      const auto ring = static_cast<std::uint16_t>(j);
      char* p = data->data() + k * m->point_step();
      for (int f = 0; f < 4; ++f) std::memcpy(p + m->field(f).offset(), &v[f], 4);
      std::memcpy(p + m->field(4).offset(), &ring, 2);
    }
  }
  m->set_is_dense(dense);
  return m;
}

}  // namespace

struct SensorPublisher::Impl {
  Outbox& outbox;
  struct Seen {
    std::uint64_t sequence = 0;
    Outbox::Channel* channel = nullptr;
  };
  std::unordered_map<ecs::Entity, Seen> seen;
  // Rendering sensors publish on several topics each.
  struct SeenMany {
    std::uint64_t sequence = 0;
    Outbox::Channel* ch[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  };
  std::unordered_map<ecs::Entity, SeenMany> seen_many;

  Outbox::Channel* open(const std::string& topic, const std::string& type) {
    return topic.empty() ? nullptr : outbox.channel(topic, type);
  }
  static bool listening(const Outbox::Channel* ch) { return ch && ch->connected; }

  void rendering(const ecs::Registry& r) {
    r.each<c::CameraReading, c::CameraTopics>(
        [&](ecs::Entity e, const c::CameraReading& x, const c::CameraTopics& t) {
          auto& s = seen_many[e];
          if (!s.ch[0]) {
            s.ch[0] = open(t.image, msgs::Image().GetTypeName());
            s.ch[1] = open(t.camera_info, msgs::CameraInfo().GetTypeName());
            s.ch[2] = open(t.depth_image, msgs::Image().GetTypeName());
            s.ch[3] = open(t.points, msgs::PointCloudPacked().GetTypeName());
            s.ch[4] = open(t.labels_map, msgs::Image().GetTypeName());
            s.ch[5] = open(t.boxes, t.boxes_3d ? msgs::AnnotatedOriented3DBox_V().GetTypeName()
                                               : msgs::AnnotatedAxisAligned2DBox_V().GetTypeName());
          }
          if (x.sequence == s.sequence) return;
          s.sequence = x.sequence;
          if (listening(s.ch[0])) outbox.send(s.ch[0], image_msg(x.image, x.stamp, x.frame_id));
          if (listening(s.ch[1])) outbox.send(s.ch[1], info_msg(x.info, x.stamp, x.frame_id));
          if (listening(s.ch[2])) outbox.send(s.ch[2], image_msg(x.depth, x.stamp, x.frame_id));
          if (listening(s.ch[3])) outbox.send(s.ch[3], points_msg(x));
          if (listening(s.ch[4])) outbox.send(s.ch[4], image_msg(x.labels, x.stamp, x.frame_id));
          if (listening(s.ch[5])) {
            if (t.boxes_3d) {
              outbox.send(s.ch[5], boxes_3d_msg(x));
            } else {
              outbox.send(s.ch[5], boxes_2d_msg(x));
            }
          }
        });
    r.each<c::LidarReading, c::LidarTopics>(
        [&](ecs::Entity e, const c::LidarReading& x, const c::LidarTopics& t) {
          auto& s = seen_many[e];
          if (!s.ch[0]) {
            s.ch[0] = open(t.scan, msgs::LaserScan().GetTypeName());
            s.ch[1] = open(t.points, msgs::PointCloudPacked().GetTypeName());
          }
          if (x.sequence == s.sequence) return;
          s.sequence = x.sequence;
          if (listening(s.ch[0])) outbox.send(s.ch[0], scan_msg(x));
          if (listening(s.ch[1])) outbox.send(s.ch[1], lidar_points_msg(x));
        });
  }

  // Calls fill(reading, msg) and sends when e's reading is new and someone listens.
  template <class R, class M, class Fill>
  void each(const ecs::Registry& r, Fill fill) {
    r.each<R, c::SensorTopic>([&](ecs::Entity e, const R& reading, const c::SensorTopic& t) {
      auto& s = seen[e];
      if (!s.channel) s.channel = outbox.channel(t.topic, M().GetTypeName());
      if (reading.sequence == s.sequence) return;
      s.sequence = reading.sequence;
      if (!s.channel->connected) return;
      // A GNSS sample without a fix (SensorFault::no_fix) has no position to publish:
      // ignition::msgs::NavSat has no fix status.
      if constexpr (requires { reading.fix; }) {
        if (!reading.fix) return;
      }
      auto m = std::make_unique<M>();
      stamp(m->mutable_header(), reading.stamp);
      auto* frame = m->mutable_header()->add_data();
      frame->set_key("frame_id");
      frame->add_value(r.scoped_name(e));
      fill(e, reading, *m);
      outbox.send(s.channel, std::move(m));
    });
  }
};

SensorPublisher::SensorPublisher(Outbox& outbox)
    : impl_(std::make_unique<Impl>(Impl{outbox, {}, {}})) {}
SensorPublisher::~SensorPublisher() = default;

void SensorPublisher::post_update(const ecs::Registry& r) {
  auto& p = *impl_;
  p.rendering(r);
  p.each<c::LogicalCameraReading, msgs::LogicalCameraImage>(
      r, [](ecs::Entity, const c::LogicalCameraReading& x, msgs::LogicalCameraImage& m) {
        m.mutable_header()->mutable_data(0)->set_value(0, x.frame_id);
        pose(x.pose, m.mutable_pose());
        for (const auto& model : x.models) {
          auto* mm = m.add_model();
          mm->set_name(model.name);
          pose(model.pose, mm->mutable_pose());
        }
      });
  p.each<c::ImuReading, msgs::IMU>(r, [&](ecs::Entity e, const c::ImuReading& x, msgs::IMU& m) {
    m.set_entity_name(r.scoped_name(e));
    if (x.has_orientation) {
      auto* q = m.mutable_orientation();
      q->set_w(x.orientation.W());
      q->set_x(x.orientation.X());
      q->set_y(x.orientation.Y());
      q->set_z(x.orientation.Z());
    }
    vec(x.angular_velocity, m.mutable_angular_velocity());
    vec(x.linear_acceleration, m.mutable_linear_acceleration());
  });
  p.each<c::MagnetometerReading, msgs::Magnetometer>(
      r, [](ecs::Entity, const c::MagnetometerReading& x, msgs::Magnetometer& m) {
        vec(x.field, m.mutable_field_tesla());
      });
  p.each<c::AirPressureReading, msgs::FluidPressure>(
      r, [](ecs::Entity, const c::AirPressureReading& x, msgs::FluidPressure& m) {
        m.set_pressure(x.pressure);
        m.set_variance(x.variance);
      });
  p.each<c::AltimeterReading, msgs::Altimeter>(
      r, [](ecs::Entity, const c::AltimeterReading& x, msgs::Altimeter& m) {
        m.set_vertical_position(x.vertical_position);
        m.set_vertical_velocity(x.vertical_velocity);
        m.set_vertical_reference(x.vertical_reference);
      });
  p.each<c::NavSatReading, msgs::NavSat>(
      r, [&](ecs::Entity e, const c::NavSatReading& x, msgs::NavSat& m) {
        m.set_latitude_deg(x.latitude_deg);
        m.set_longitude_deg(x.longitude_deg);
        m.set_altitude(x.altitude);
        m.set_velocity_east(x.velocity_enu.X());
        m.set_velocity_north(x.velocity_enu.Y());
        m.set_velocity_up(x.velocity_enu.Z());
        m.set_frame_id(r.scoped_name(e));
      });
  p.each<c::ForceTorqueReading, msgs::Wrench>(
      r, [](ecs::Entity, const c::ForceTorqueReading& x, msgs::Wrench& m) {
        vec(x.force, m.mutable_force());
        vec(x.torque, m.mutable_torque());
      });
  p.each<c::ContactReading, msgs::Contacts>(
      r, [](ecs::Entity, const c::ContactReading& x, msgs::Contacts& m) {
        for (const auto& k : x.contacts) {
          auto* cm = m.add_contact();
          cm->mutable_collision1()->set_name(k.collision_name);
          cm->mutable_collision1()->set_id(k.collision);
          cm->mutable_collision1()->set_type(msgs::Entity::COLLISION);
          cm->mutable_collision2()->set_name(k.other_name);
          cm->mutable_collision2()->set_id(k.other);
          cm->mutable_collision2()->set_type(msgs::Entity::COLLISION);
          for (const auto& v : k.positions) vec(v, cm->add_position());
          for (const auto& v : k.normals) vec(v, cm->add_normal());
          for (double d : k.depths) cm->add_depth(d);
          for (const auto& f : k.forces) {
            auto* w = cm->add_wrench();
            w->set_body_1_name(k.collision_name);
            w->set_body_2_name(k.other_name);
            vec(f, w->mutable_body_1_wrench()->mutable_force());
            vec(-f, w->mutable_body_2_wrench()->mutable_force());
          }
        }
      });
}

}  // namespace kestrel::transport::detail
