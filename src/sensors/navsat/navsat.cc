// NavSat (GNSS): WGS84 latitude, longitude and altitude of the sensor from the world's
// spherical coordinates (GeographicLib local tangent plane at the world origin), ENU velocity.
// Noise (and a fault's bias) is applied in metres east, north and up before the conversion to
// degrees, never in degrees.

#include <GeographicLib/LocalCartesian.hpp>

#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

struct NavSatInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  GeographicLib::LocalCartesian origin;
  Quaterniond q_EW;  // world → ENU
  Noise east, north, up, v_east, v_north, v_up;
  Vector3d p_E;  // the last sample's noisy position east, north, up [m]
};

// <horizontal>/<vertical> blocks of a sensing element: noise params.
void sensing(const Element* block, NoiseParams& horizontal, NoiseParams& vertical) {
  if (!block) return;
  horizontal = parse_axis_noise(block->child("horizontal"));
  vertical = parse_axis_noise(block->child("vertical"));
  reject_unread(*block, "expected <horizontal>, <vertical>");
}

class NavSat final : public SensorSystem<NavSatInstance, c::NavSatReading> {
 protected:
  bool serves(std::string_view type) const override { return type == "navsat" || type == "gps"; }

  NavSatInstance make(const SensorContext& ctx, ecs::Registry& r) override {
    NavSatInstance inst;
    inst.link = ctx.parent;
    inst.X_LS = ctx.X_PS;
    const auto* sc = r.try_get<c::SphericalCoordinates>(ctx.world);
    if (!sc) {
      throw Error(ctx.sensor->element->where(),
                  "navsat sensor '" + ctx.scoped_name +
                      "' needs the world's <spherical_coordinates> (its geodetic origin); the "
                      "world has none");
    }
    if (sc->surface_model != "EARTH_WGS84" || sc->world_frame_orientation != "ENU") {
      throw Error(ctx.sensor->element->where(),
                  "navsat: only surface_model EARTH_WGS84 with world_frame_orientation ENU is "
                  "supported, found " + sc->surface_model + " / " + sc->world_frame_orientation);
    }
    inst.origin.Reset(sc->latitude_deg, sc->longitude_deg, sc->elevation);
    inst.q_EW = world_to_enu(*sc);
    const std::string type = ctx.sensor->type;
    const Element* el = sensor_type_element(*ctx.sensor->element, type);
    NoiseParams ph, pv, vh, vv;
    if (el) {
      sensing(el->child("position_sensing"), ph, pv);
      sensing(el->child("velocity_sensing"), vh, vv);
      reject_unread(*el, "expected <position_sensing>, <velocity_sensing>");
    }
    const auto seed = [&](const char* ch) {
      return derive_seed(ctx.world_seed, ctx.scoped_name, ch);
    };
    inst.east = Noise(ph, seed("position/east"));
    inst.north = Noise(ph, seed("position/north"));
    inst.up = Noise(pv, seed("position/up"));
    inst.v_east = Noise(vh, seed("velocity/east"));
    inst.v_north = Noise(vh, seed("velocity/north"));
    inst.v_up = Noise(vv, seed("velocity/up"));
    r.set<c::SensorTopic>(ctx.entity, {resolve_topic(r, ctx.entity, *ctx.sensor, "navsat")});
    r.set<c::NavSatReading>(ctx.entity, {});
    return inst;
  }

  void sample(NavSatInstance& inst, Duration, NoiseStep step, const ecs::Registry& r,
              c::NavSatReading& out) override {
    const FrameState s = frame_state(r, inst.link, inst.X_LS);
    const Vector3d p = inst.q_EW.RotateVector(s.X_WS.Pos());
    const Vector3d v = inst.q_EW.RotateVector(s.v_W);
    const double e = inst.east.apply(p.X(), step);
    const double n = inst.north.apply(p.Y(), step);
    const double u = inst.up.apply(p.Z(), step);
    inst.p_E.Set(e, n, u);
    geodetic(inst, out);
    out.velocity_enu.Set(inst.v_east.apply(v.X(), step), inst.v_north.apply(v.Y(), step),
                         inst.v_up.apply(v.Z(), step));
    out.true_position_world = s.X_WS.Pos();
  }

  void add_bias(NavSatInstance& inst, const Vector3d& bias, c::NavSatReading& out) override {
    inst.p_E += bias;
    geodetic(inst, out);
  }

 private:
  static void geodetic(NavSatInstance& inst, c::NavSatReading& out) {
    inst.origin.Reverse(inst.p_E.X(), inst.p_E.Y(), inst.p_E.Z(), out.latitude_deg,
                        out.longitude_deg, out.altitude);
  }
};

}  // namespace

std::unique_ptr<System> make_navsat_system() { return std::make_unique<NavSat>(); }

}  // namespace kestrel::sensors
