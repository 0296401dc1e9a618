// Sensor readings (components/sensors.h) -> their SensorTopic, with Gazebo's message types,
// whenever a reading's sequence advances (see bridges.h); a stopped sensor's does not
// (components::SensorFault), and a NavSat sample without a fix is not published.
// AirSpeedReading is not published: ignition-msgs 8 has no air speed message.
#include <ignition/msgs/altimeter.pb.h>
#include <ignition/msgs/contacts.pb.h>
#include <ignition/msgs/fluid_pressure.pb.h>
#include <ignition/msgs/imu.pb.h>
#include <ignition/msgs/magnetometer.pb.h>
#include <ignition/msgs/navsat.pb.h>
#include <ignition/msgs/wrench.pb.h>

#include <unordered_map>

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

}  // namespace

struct SensorPublisher::Impl {
  Outbox& outbox;
  struct Seen {
    std::uint64_t sequence = 0;
    Outbox::Channel* channel = nullptr;
  };
  std::unordered_map<ecs::Entity, Seen> seen;

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
    : impl_(std::make_unique<Impl>(Impl{outbox, {}})) {}
SensorPublisher::~SensorPublisher() = default;

void SensorPublisher::post_update(const ecs::Registry& r) {
  auto& p = *impl_;
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
