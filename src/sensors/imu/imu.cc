// IMU: specific force at the sensor origin (lever arm included), angular velocity and
// orientation relative to the chosen reference frame, with per-axis noise.

#include <numbers>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

struct ImuInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  Quaterniond q_RW;  // world → orientation reference frame
  bool orientation = true;
  Noise gyro[3], accel[3];
};

// Reads <x><noise>..</x> <y>.. <z>.. of a vector block into three noise channels.
void parse_vector_noise(const Element* block, const std::string& scoped, std::uint64_t seed,
                        const char* channel, Noise out[3]) {
  static constexpr const char* kAxes[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    const NoiseParams p = parse_axis_noise(block ? block->child(kAxes[i]) : nullptr);
    out[i] = Noise(p, derive_seed(seed, scoped, std::string(channel) + "/" + kAxes[i]));
  }
  if (block) reject_unread(*block, "expected <x>, <y>, <z>");
}

// q_WR: orientation of the reference frame in the world.
Quaterniond reference_frame(const Element* ref, const ecs::Registry& r, ecs::Entity world) {
  Quaterniond q_WE;  // ENU frame in world axes
  if (const auto* sc = r.try_get<c::SphericalCoordinates>(world)) {
    q_WE = world_to_enu(*sc).Inverse();
  }
  if (!ref) return q_WE;
  const std::string loc = ref->get_or<std::string>("localization", "ENU");
  Quaterniond q;
  if (loc == "ENU") {
    q = q_WE;
  } else if (loc == "NED") {
    q = q_WE * Quaterniond(std::numbers::pi, 0, std::numbers::pi / 2);
  } else if (loc == "NWU") {
    q = q_WE * Quaterniond(0, 0, std::numbers::pi / 2);
  } else if (loc == "CUSTOM") {
    const Element* rpy = ref->child("custom_rpy");
    if (!rpy) {
      throw Error(ref->where(), "<localization>CUSTOM</localization> needs <custom_rpy>");
    }
    const std::string parent = rpy->attribute("parent_frame").value_or("");
    if (!parent.empty() && parent != "world") {
      throw Error(rpy->where(), "<custom_rpy parent_frame=\"" + parent +
                                    "\">: only the world frame (empty or \"world\") is supported");
    }
    const Vector3d v = rpy->value<Vector3d>();
    q = Quaterniond(v.X(), v.Y(), v.Z());
  } else {
    throw Error(ref->where(),
                "<localization> expected ENU, NED, NWU or CUSTOM, found '" + loc + "'");
  }
  if (loc != "CUSTOM" && ref->has("custom_rpy")) {
    throw Error(ref->child("custom_rpy")->where(),
                "<custom_rpy> only applies with <localization>CUSTOM</localization>");
  }
  if (const Element* g = ref->child("grav_dir_x")) {
    if (g->value<Vector3d>() != Vector3d(1, 0, 0)) {
      throw Error(g->where(), "<grav_dir_x> other than 1 0 0 is not supported by Kestrel");
    }
  }
  reject_unread(*ref, "expected <localization>, <custom_rpy>, <grav_dir_x>");
  return q;
}

class Imu final : public SensorSystem<ImuInstance, c::ImuReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "imu"; }

  ImuInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    ImuInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* imu = sensor_type_element(*ctx.sensor->element, "imu");
    const Element* ref = imu ? imu->child("orientation_reference_frame") : nullptr;
    if (ref) {
      inst.q_RW = reference_frame(ref, r, ctx.world).Inverse();
    } else {
      // As Gazebo: without <orientation_reference_frame> the orientation is relative to the
      // sensor's own orientation when it was created.
      const auto* X_WL = r.try_get<c::WorldPose>(ctx.parent);
      inst.q_RW = ((X_WL ? X_WL->value.Rot() : Quaterniond::Identity) * ctx.X_PS.Rot()).Inverse();
    }
    if (imu) {
      inst.orientation = imu->get_or<bool>("enable_orientation", true);
      if (imu->has("topic")) {
        throw Error(imu->child("topic")->where(),
                    "<imu><topic> is deprecated and not supported: use the sensor's <topic>");
      }
    }
    parse_vector_noise(imu ? imu->child("angular_velocity") : nullptr, ctx.scoped_name,
                       ctx.world_seed, "angular_velocity", inst.gyro);
    parse_vector_noise(imu ? imu->child("linear_acceleration") : nullptr, ctx.scoped_name,
                       ctx.world_seed, "linear_acceleration", inst.accel);
    if (imu) {
      reject_unread(*imu,
                    "expected <orientation_reference_frame>, <angular_velocity>, "
                    "<linear_acceleration>, <enable_orientation>");
    }
    r.set<c::SensorTopic>(ctx.entity, {resolve_topic(r, ctx.entity, *ctx.sensor, "imu")});
    c::ImuReading reading;
    reading.has_orientation = inst.orientation;
    for (int i = 0; i < 3; ++i) {
      reading.angular_velocity_variance[i] = inst.gyro[i].variance();
      reading.linear_acceleration_variance[i] = inst.accel[i].variance();
    }
    r.set<c::ImuReading>(ctx.entity, reading);
    return inst;
  }

  void sample(ImuInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::ImuReading& out) override {
    const FrameState s = frame_state(r, inst.link, inst.X_LS);
    const auto* g = r.try_get<c::Gravity>(world());
    const Vector3d gravity = g ? g->value : c::Gravity{}.value;
    const Quaterniond q_SW = s.X_WS.Rot().Inverse();
    const Vector3d f_S = q_SW.RotateVector(s.a_W - gravity);
    const Vector3d w_S = q_SW.RotateVector(s.w_W);
    for (int i = 0; i < 3; ++i) {
      out.linear_acceleration[i] = inst.accel[i].apply(f_S[i], step);
      out.angular_velocity[i] = inst.gyro[i].apply(w_S[i], step);
    }
    out.orientation = inst.orientation ? inst.q_RW * s.X_WS.Rot() : Quaterniond::Identity;
  }

  void add_bias(ImuInstance&, const Vector3d& bias, c::ImuReading& out) override {
    out.linear_acceleration += bias;
  }
};

}  // namespace

std::unique_ptr<System> make_imu_system() { return std::make_unique<Imu>(); }

}  // namespace kestrel::sensors
