// LogicalCamera (gz::sim::systems::LogicalCamera): the models whose origin lies in a sensor's
// frustum, with their poses in the sensor frame (src/sensors/logical_camera/README.md).

#include <cmath>

#include "kestrel/components/camera.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

struct LogicalInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  Pose3d X_LS;
  double near = 0, far = 1, tan_half_h = 0, tan_half_v = 0;
};

double positive(const Element& e, const char* name, double fallback) {
  const double v = e.get_or<double>(name, fallback);
  if (!(v > 0) || !std::isfinite(v)) {
    throw Error(e.child(name) ? e.child(name)->where() : e.where(),
                std::string("<") + name + "> must be positive, found " + std::to_string(v));
  }
  return v;
}

// X_WM of a model: from its first link's physics pose (models' own WorldPose is the loaded one).
Pose3d model_pose(const ecs::Registry& r, ecs::Entity m) {
  for (ecs::Entity ch : r.children(m)) {
    if (!r.has<c::Link>(ch)) continue;
    const auto* X_WL = r.try_get<c::WorldPose>(ch);
    const auto* X_ML = r.try_get<c::Pose>(ch);
    if (!X_WL) break;
    const Pose3d L_inv = X_ML ? X_ML->value.Inverse() : Pose3d::Zero;
    return compose(X_WL->value, L_inv);
  }
  const auto* wp = r.try_get<c::WorldPose>(m);
  return wp ? wp->value : Pose3d::Zero;
}

class LogicalCamera final : public SensorSystem<LogicalInstance, c::LogicalCameraReading> {
 protected:
  bool serves(std::string_view t) const override { return t == "logical_camera"; }

  LogicalInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    LogicalInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* e = sensor_type_element(*ctx.sensor->element, "logical_camera");
    if (!e) throw Error(ctx.sensor->element->where(), "logical_camera needs <logical_camera>");
    inst.near = positive(*e, "near", 0.55);
    inst.far = positive(*e, "far", 2.5);
    const double hfov = positive(*e, "horizontal_fov", 1.05);
    const double aspect = positive(*e, "aspect_ratio", 1.778);
    reject_unread(*e, "expected <near>, <far>, <horizontal_fov>, <aspect_ratio>");
    if (inst.near >= inst.far) throw Error(e->where(), "<near> must be less than <far>");
    inst.tan_half_h = std::tan(hfov / 2);
    inst.tan_half_v = inst.tan_half_h / aspect;  // frustum height = width / aspect ratio
    r.set<c::SensorTopic>(ctx.entity,
                          {resolve_topic(r, ctx.entity, *ctx.sensor, "logical_camera")});
    c::LogicalCameraReading reading;
    reading.frame_id = without_world(ctx.scoped_name);
    r.set<c::LogicalCameraReading>(ctx.entity, reading);
    return inst;
  }

  void sample(LogicalInstance& inst, Duration, NoiseStep, const ecs::Registry& r,
              c::LogicalCameraReading& out) override {
    const Pose3d X_WS = compose(r.get<c::WorldPose>(inst.link).value, inst.X_LS);
    out.pose = X_WS;
    out.models.clear();
    const Pose3d X_SW = X_WS.Inverse();
    r.each<c::Model>([&](ecs::Entity m, const c::Model&) {
      if (r.removal_pending(m)) return;
      const Pose3d X_WM = model_pose(r, m);
      const Pose3d X_SM = compose(X_SW, X_WM);
      const Vector3d p = X_SM.Pos();
      if (p.X() < inst.near || p.X() > inst.far || std::abs(p.Y()) > p.X() * inst.tan_half_h ||
          std::abs(p.Z()) > p.X() * inst.tan_half_v) {
        return;
      }
      out.models.push_back({without_world(r.scoped_name(m)), X_SM});
    });
  }
};

}  // namespace

std::unique_ptr<System> make_logical_camera_system() { return std::make_unique<LogicalCamera>(); }

}  // namespace kestrel::sensors
