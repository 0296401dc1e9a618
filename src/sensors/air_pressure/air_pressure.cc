// Barometer: static pressure of the standard atmosphere at the sensor's world z, with noise in
// pascal. <reference_altitude> is ignored, as gz-sensors ignores it (a warning says so), unless
// <kestrel:use_reference_altitude>true</kestrel:use_reference_altitude> adds it to z.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;

// Kestrel's opt-in: add <reference_altitude> to the sensor's z (gz-sensors never reads it).
constexpr const char* kUseReference = "kestrel:use_reference_altitude";

struct BaroInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  double reference_altitude = 0;
  Noise noise;
};

class AirPressure final : public SensorSystem<BaroInstance, c::AirPressureReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "air_pressure"; }

  BaroInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    BaroInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* el = sensor_type_element(*ctx.sensor->element, "air_pressure");
    if (el) {
      const double reference = el->get_or<double>("reference_altitude", 0.0);
      if (el->get_or<bool>(kUseReference, false)) {
        inst.reference_altitude = reference;
      } else if (const Element* ref = el->child("reference_altitude"); ref && reference != 0) {
        spdlog::warn(
            "{}: [{}] <reference_altitude>{}</reference_altitude> is ignored, as Gazebo ignores "
            "it: the pressure is that of the sensor's world z; <{}>true</{}> in <air_pressure> "
            "adds it",
            ref->where(), ctx.scoped_name, ref->text(), kUseReference, kUseReference);
      }
      inst.noise = Noise(parse_axis_noise(el->child("pressure")),
                         derive_seed(ctx.world_seed, ctx.scoped_name, "pressure"));
      reject_unread(*el, fmt::format("expected <reference_altitude>, <pressure>, <{}>",
                                     kUseReference));
    }
    r.set<c::SensorTopic>(ctx.entity,
                          {resolve_topic(r, ctx.entity, *ctx.sensor, "air_pressure")});
    c::AirPressureReading reading;
    reading.variance = inst.noise.variance();
    r.set<c::AirPressureReading>(ctx.entity, reading);
    return inst;
  }

  void sample(BaroInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::AirPressureReading& out) override {
    const auto* wp = r.try_get<c::WorldPose>(inst.link);
    if (!wp) throw Error(r.describe(inst.link), "air_pressure link has no WorldPose");
    const double z = compose(wp->value, inst.X_LS).Pos().Z();
    const auto* atm = r.try_get<c::Atmosphere>(world());
    double p;
    try {
      p = standard_atmosphere(inst.reference_altitude + z, atm ? *atm : c::Atmosphere{}).pressure;
    } catch (const Error& e) {
      throw Error(r.describe(inst.entity), e.what());
    }
    out.pressure = inst.noise.apply(p, step);
  }

  void add_bias(BaroInstance&, const ignition::math::Vector3d& bias,
                c::AirPressureReading& out) override {
    out.pressure += bias.X();
  }
};

}  // namespace

std::unique_ptr<System> make_air_pressure_system() { return std::make_unique<AirPressure>(); }

}  // namespace kestrel::sensors
