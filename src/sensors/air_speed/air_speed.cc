// Airspeed (pitot-static): differential pressure ½·ρ·u·|u| from the air-relative velocity along
// the sensor's x axis (world wind from components::Wind), density and temperature of the
// standard atmosphere at the sensor's world z.

#include <cmath>

#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Vector3d;

struct AirSpeedInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  Noise noise;
};

class AirSpeed final : public SensorSystem<AirSpeedInstance, c::AirSpeedReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "air_speed"; }

  AirSpeedInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    AirSpeedInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* el = sensor_type_element(*ctx.sensor->element, "air_speed");
    if (el) {
      inst.noise = Noise(parse_axis_noise(el->child("pressure")),
                         derive_seed(ctx.world_seed, ctx.scoped_name, "pressure"));
      reject_unread(*el, "expected <pressure>");
    }
    r.set<c::SensorTopic>(ctx.entity, {resolve_topic(r, ctx.entity, *ctx.sensor, "air_speed")});
    c::AirSpeedReading reading;
    reading.variance = inst.noise.variance();
    r.set<c::AirSpeedReading>(ctx.entity, reading);
    return inst;
  }

  void sample(AirSpeedInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::AirSpeedReading& out) override {
    const FrameState s = frame_state(r, inst.link, inst.X_LS);
    Vector3d air_W;  // the air's velocity: the wind plus a fault's gust
    if (const auto* wind = r.try_get<c::Wind>(world())) air_W += wind->linear_velocity;
    if (const auto* gust = r.try_get<c::WindGust>(world())) air_W += gust->linear_velocity;
    const Vector3d v_air_W = s.v_W - air_W;
    const double u = s.X_WS.Rot().Inverse().RotateVector(v_air_W).X();
    const auto* atm = r.try_get<c::Atmosphere>(world());
    AirState air;
    try {
      air = standard_atmosphere(s.X_WS.Pos().Z(), atm ? *atm : c::Atmosphere{});
    } catch (const Error& e) {
      throw Error(r.describe(inst.entity), e.what());
    }
    out.diff_pressure = inst.noise.apply(0.5 * air.density * u * std::abs(u), step);
    out.temperature = air.temperature;
    out.density = air.density;
  }

  void add_bias(AirSpeedInstance&, const Vector3d& bias, c::AirSpeedReading& out) override {
    out.diff_pressure += bias.X();
  }
};

}  // namespace

std::unique_ptr<System> make_air_speed_system() { return std::make_unique<AirSpeed>(); }

}  // namespace kestrel::sensors
