// Force-torque: the wrench transmitted through the sensor's joint (physics'
// JointTransmittedWrench), as the child's action on the parent or the reverse
// (measure_direction), expressed in the child, parent or sensor frame, about the sensor origin
// (as gz-sim computes it).

#include "kestrel/components/physics.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

Pose3d inverse(const Pose3d& X) {
  const Quaterniond q = X.Rot().Inverse();
  return Pose3d(-q.RotateVector(X.Pos()), q);
}

struct FtInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity joint = ecs::kNullEntity, parent = ecs::kNullEntity, child = ecs::kNullEntity;
  Quaterniond q_CJ;  // joint frame in the child link (rigid)
  Quaterniond q_JS;  // sensor frame in the joint frame
  Vector3d p_JS;     // sensor origin in the joint frame
  c::WrenchFrame frame = c::WrenchFrame::kChild;
  bool parent_to_child = false;
  Noise force[3], torque[3];
};

class ForceTorque final : public SensorSystem<FtInstance, c::ForceTorqueReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "force_torque"; }

  FtInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    FtInstance inst;
    inst.joint = ctx.parent;
    const auto* jd = r.try_get<c::JointData>(inst.joint);
    if (!jd) {
      throw Error(ctx.sensor->element->where(), "force_torque sensor '" + ctx.scoped_name +
                                                    "' must be declared inside a <joint>");
    }
    inst.parent = jd->parent;
    inst.child = jd->child;
    inst.q_JS = ctx.X_PS.Rot();
    inst.p_JS = ctx.X_PS.Pos();
    // X_CJ from the load-time world poses (rigid in the child link).
    const Pose3d X_WJ = r.get<c::WorldPose>(inst.joint).value;
    const Pose3d X_WC = r.get<c::WorldPose>(inst.child).value;
    inst.q_CJ = compose(inverse(X_WC), X_WJ).Rot();

    const Element* el = sensor_type_element(*ctx.sensor->element, "force_torque");
    if (el) {
      const std::string frame = el->get_or<std::string>("frame", "child");
      if (frame == "child") {
        inst.frame = c::WrenchFrame::kChild;
      } else if (frame == "parent") {
        inst.frame = c::WrenchFrame::kParent;
      } else if (frame == "sensor") {
        inst.frame = c::WrenchFrame::kSensor;
      } else {
        throw Error(el->child("frame")->where(),
                    "<frame> expected child, parent or sensor, found '" + frame + "'");
      }
      const std::string dir = el->get_or<std::string>("measure_direction", "child_to_parent");
      if (dir != "child_to_parent" && dir != "parent_to_child") {
        throw Error(el->child("measure_direction")->where(),
                    "<measure_direction> expected child_to_parent or parent_to_child, found '" +
                        dir + "'");
      }
      inst.parent_to_child = dir == "parent_to_child";
    }
    static constexpr const char* kAxes[] = {"x", "y", "z"};
    for (const char* block : {"force", "torque"}) {
      const Element* b = el ? el->child(block) : nullptr;
      Noise* out = std::string_view(block) == "force" ? inst.force : inst.torque;
      for (int i = 0; i < 3; ++i) {
        out[i] = Noise(parse_axis_noise(b ? b->child(kAxes[i]) : nullptr),
                       derive_seed(ctx.world_seed, ctx.scoped_name,
                                   std::string(block) + "/" + kAxes[i]));
      }
      if (b) reject_unread(*b, "expected <x>, <y>, <z>");
    }
    if (el) {
      reject_unread(*el, "expected <frame>, <measure_direction>, <force>, <torque>");
    }
    r.set<c::SensorTopic>(ctx.entity,
                          {resolve_topic(r, ctx.entity, *ctx.sensor, "forcetorque")});
    c::ForceTorqueReading reading;
    reading.frame = inst.frame;
    r.set<c::ForceTorqueReading>(ctx.entity, reading);
    return inst;
  }

  void sample(FtInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::ForceTorqueReading& out) override {
    const auto* w = r.try_get<c::JointTransmittedWrench>(inst.joint);
    if (!w) {
      throw Error(r.describe(inst.joint),
                  "force_torque sensor: the joint has no JointTransmittedWrench (is it simulated?)");
    }
    // Physics gives the parent's wrench on the child in the joint frame, about the joint origin.
    // As gz-sim's ForceTorque: into the sensor frame, the torque moved to the sensor's origin
    // with its position in the joint frame (τ_S = R_JSᵀτ_J − p_JS × F_S), then rotated into the
    // reporting frame and negated for child_to_parent, as gz-sensors does.
    const double sign = inst.parent_to_child ? 1.0 : -1.0;
    Vector3d f = inst.q_JS.RotateVectorReverse(w->force);
    Vector3d tau = inst.q_JS.RotateVectorReverse(w->torque) - inst.p_JS.Cross(f);
    Quaterniond q;  // sensor frame → reporting frame
    switch (inst.frame) {
      case c::WrenchFrame::kChild:
        q = inst.q_CJ * inst.q_JS;
        break;
      case c::WrenchFrame::kSensor:
        break;
      case c::WrenchFrame::kParent: {
        const Quaterniond q_WC = r.get<c::WorldPose>(inst.child).value.Rot();
        const Quaterniond q_WP = inst.parent == ecs::kNullEntity
                                     ? Quaterniond::Identity
                                     : r.get<c::WorldPose>(inst.parent).value.Rot();
        q = q_WP.Inverse() * q_WC * inst.q_CJ * inst.q_JS;
        break;
      }
    }
    f = q.RotateVector(f) * sign;
    tau = q.RotateVector(tau) * sign;
    for (int i = 0; i < 3; ++i) {
      out.force[i] = inst.force[i].apply(f[i], step);
      out.torque[i] = inst.torque[i].apply(tau[i], step);
    }
  }

  void add_bias(FtInstance&, const Vector3d& bias, c::ForceTorqueReading& out) override {
    out.force += bias;
  }
};

}  // namespace

std::unique_ptr<System> make_force_torque_system() { return std::make_unique<ForceTorque>(); }

}  // namespace kestrel::sensors
