// Altimeter: vertical position of the sensor relative to where it started, and its vertical
// velocity, each with noise.

#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;

struct AltInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  double reference = 0;  // world z of the sensor at start [m]
  Noise position, velocity;
};

class Altimeter final : public SensorSystem<AltInstance, c::AltimeterReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "altimeter"; }

  AltInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    AltInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* el = sensor_type_element(*ctx.sensor->element, "altimeter");
    if (el) {
      inst.position = Noise(parse_axis_noise(el->child("vertical_position")),
                            derive_seed(ctx.world_seed, ctx.scoped_name, "vertical_position"));
      inst.velocity = Noise(parse_axis_noise(el->child("vertical_velocity")),
                            derive_seed(ctx.world_seed, ctx.scoped_name, "vertical_velocity"));
      reject_unread(*el, "expected <vertical_position>, <vertical_velocity>");
    }
    inst.reference = frame_state(r, inst.link, inst.X_LS).X_WS.Pos().Z();
    r.set<c::SensorTopic>(ctx.entity, {resolve_topic(r, ctx.entity, *ctx.sensor, "altimeter")});
    c::AltimeterReading reading;
    reading.vertical_reference = inst.reference;
    reading.vertical_position_variance = inst.position.variance();
    r.set<c::AltimeterReading>(ctx.entity, reading);
    return inst;
  }

  void sample(AltInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::AltimeterReading& out) override {
    const FrameState s = frame_state(r, inst.link, inst.X_LS);
    out.vertical_position = inst.position.apply(s.X_WS.Pos().Z() - inst.reference, step);
    out.vertical_velocity = inst.velocity.apply(s.v_W.Z(), step);
  }

  void add_bias(AltInstance&, const ignition::math::Vector3d& bias,
                c::AltimeterReading& out) override {
    out.vertical_position += bias.X();
  }
};

}  // namespace

std::unique_ptr<System> make_altimeter_system() { return std::make_unique<Altimeter>(); }

}  // namespace kestrel::sensors
