// Magnetometer: the world's magnetic field rotated into the sensor frame, in tesla. The field is
// the world's <magnetic_field>, or, when the world has <spherical_coordinates>, the World
// Magnetic Model (5° table) at the sensor's latitude and longitude.

#include <cmath>
#include <numbers>

#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

struct MagInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  Noise noise[3];
};

class Magnetometer final : public SensorSystem<MagInstance, c::MagnetometerReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "magnetometer"; }

  MagInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    MagInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const Element* mag = sensor_type_element(*ctx.sensor->element, "magnetometer");
    static constexpr const char* kAxes[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
      inst.noise[i] = Noise(parse_axis_noise(mag ? mag->child(kAxes[i]) : nullptr),
                            derive_seed(ctx.world_seed, ctx.scoped_name, kAxes[i]));
    }
    if (mag) reject_unread(*mag, "expected <x>, <y>, <z>");
    r.set<c::SensorTopic>(ctx.entity,
                          {resolve_topic(r, ctx.entity, *ctx.sensor, "magnetometer")});
    c::MagnetometerReading reading;
    for (int i = 0; i < 3; ++i) reading.variance[i] = inst.noise[i].variance();
    r.set<c::MagnetometerReading>(ctx.entity, reading);
    return inst;
  }

  void sample(MagInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::MagnetometerReading& out) override {
    const auto* wp = r.try_get<c::WorldPose>(inst.link);
    if (!wp) throw Error(r.describe(inst.link), "magnetometer link has no WorldPose");
    const ignition::math::Pose3d X_WS = compose(wp->value, inst.X_LS);
    const Vector3d B_W = world_field(r, X_WS.Pos());
    const Vector3d B_S = X_WS.Rot().Inverse().RotateVector(B_W);
    for (int i = 0; i < 3; ++i) out.field[i] = inst.noise[i].apply(B_S[i], step);
  }

  void add_bias(MagInstance&, const Vector3d& bias, c::MagnetometerReading& out) override {
    out.field += bias;
  }

 private:
  Vector3d world_field(const ecs::Registry& r, const Vector3d& p_W) const {
    const auto* sc = r.try_get<c::SphericalCoordinates>(world());
    if (!sc) {
      const auto* m = r.try_get<c::MagneticField>(world());
      return m ? m->value : c::MagneticField{}.value;
    }
    // Latitude/longitude of the sensor: the origin's plus the local offset on the ellipsoid's
    // radii of curvature (ample for a 5° table).
    const Quaterniond q_EW = world_to_enu(*sc);
    const Vector3d p_E = q_EW.RotateVector(p_W);
    constexpr double kA = 6378137.0, kE2 = 6.69437999014e-3, kDeg = std::numbers::pi / 180;
    const double s = std::sin(sc->latitude_deg * kDeg);
    const double w = std::sqrt(1 - kE2 * s * s);
    const double rn = kA / w, rm = kA * (1 - kE2) / (w * w * w);
    const double lat = sc->latitude_deg + p_E.Y() / rm / kDeg;
    const double lon =
        sc->longitude_deg + p_E.X() / (rn * std::max(std::cos(sc->latitude_deg * kDeg), 1e-6)) / kDeg;
    return q_EW.Inverse().RotateVector(wmm_table(lat, lon).enu());
  }
};

}  // namespace

std::unique_ptr<System> make_magnetometer_system() { return std::make_unique<Magnetometer>(); }

}  // namespace kestrel::sensors
