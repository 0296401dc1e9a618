#include "sitl/vehicle.h"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/core/error.h"
#include "kestrel/sensors/environment.h"

namespace kestrel::sitl {
namespace {

constexpr double kGasConstant = 287.053;  // specific gas constant of dry air [J/(kg·K)]
constexpr double kG0 = 9.80665;           // standard gravity in the barometric formula [m/s²]
// The WMM changes by a few nT per km: re-evaluating it every 100 m keeps the stand-in within
// ~1 nT of the model without evaluating degree-12 harmonics at every sample.
constexpr double kFieldRefresh = 100.0;  // [m]

ecs::Entity find_world(const ecs::Registry& reg, ecs::Entity e) {
  while (e != ecs::kNullEntity && !reg.has<components::World>(e)) e = reg.parent(e);
  return e;
}

const std::string& name_of(const ecs::Registry& reg, ecs::Entity e) {
  static const std::string kNone;
  const auto* n = reg.try_get<components::Name>(e);
  return n ? n->value : kNone;
}

}  // namespace

Vehicle find_vehicle(const ecs::Registry& reg, ecs::Entity model, const std::string& link_name,
                     const std::string& who) {
  Vehicle v;
  v.model = model;
  v.world = find_world(reg, model);
  v.name = reg.scoped_name(model);
  if (!reg.has<components::Model>(model)) {
    throw Error(v.name, who + ": must be attached to a model (found an entity that is not one)");
  }
  std::vector<ecs::Entity> links;
  for (ecs::Entity c : reg.children(model)) {
    if (reg.has<components::Link>(c)) links.push_back(c);
  }
  if (!link_name.empty()) {
    for (ecs::Entity l : links) {
      if (name_of(reg, l) == link_name) v.link = l;
    }
    if (v.link == ecs::kNullEntity) {
      std::string names;
      for (ecs::Entity l : links) names += (names.empty() ? "" : ", ") + name_of(reg, l);
      throw Error(v.name, who + ": <link> '" + link_name +
                              "' is not a link of the model (its links: " +
                              (names.empty() ? "none" : names) + ")");
    }
  } else {
    for (ecs::Entity l : links) {
      if (name_of(reg, l) == "base_link") v.link = l;
    }
    if (v.link == ecs::kNullEntity && !links.empty()) v.link = links.front();
  }
  if (v.link == ecs::kNullEntity) throw Error(v.name, who + ": the model has no link to fly");

  for (ecs::Entity e : reg.descendants(model)) {
    const auto* s = reg.try_get<components::Sensor>(e);
    if (!s) continue;
    auto pick = [&](ecs::Entity& slot) {
      if (slot == ecs::kNullEntity) slot = e;
    };
    if (s->type == "imu") pick(v.imu);
    if (s->type == "magnetometer") pick(v.magnetometer);
    if (s->type == "air_pressure") pick(v.air_pressure);
    if (s->type == "navsat" || s->type == "gps") pick(v.navsat);
    if (s->type == "air_speed") pick(v.air_speed);
    if (s->type == "altimeter") pick(v.altimeter);
  }
  if (v.imu == ecs::kNullEntity) v.stand_ins.push_back("imu");
  if (v.magnetometer == ecs::kNullEntity) v.stand_ins.push_back("magnetometer");
  if (v.air_pressure == ecs::kNullEntity) v.stand_ins.push_back("air_pressure");
  if (v.navsat == ecs::kNullEntity) v.stand_ins.push_back("navsat");
  return v;
}

double sensor_rate(const ecs::Registry& reg, ecs::Entity sensor) {
  if (sensor == ecs::kNullEntity) return 0;
  const auto* s = reg.try_get<components::Sensor>(sensor);
  return s ? s->update_rate : 0;
}

void atmosphere_at(double h, double p0, double t0, double lapse, double& p, double& t) {
  t = t0 + lapse * h;
  if (lapse == 0) {
    p = p0 * std::exp(-kG0 * h / (kGasConstant * t0));
  } else {
    p = p0 * std::pow(t / t0, -kG0 / (lapse * kGasConstant));
  }
}

double altitude_of_pressure(double p, double p0, double t0, double lapse) {
  if (p <= 0) return 0;
  if (lapse == 0) return -kGasConstant * t0 / kG0 * std::log(p / p0);
  return t0 / lapse * (std::pow(p / p0, -lapse * kGasConstant / kG0) - 1.0);
}

bool magnetic_fields_disagree(const Vector3d& world_field, const Vector3d& wmm_field,
                              std::string& why) {
  const double a = world_field.Length(), b = wmm_field.Length();
  const double cos_angle = a > 0 && b > 0 ? world_field.Dot(wmm_field) / (a * b) : -1.0;
  const double angle_deg = std::acos(std::clamp(cos_angle, -1.0, 1.0)) * 180.0 / M_PI;
  const double strength = b > 0 ? std::abs(a - b) / b : 1.0;
  why = fmt::format("differs by {:.1f} deg in direction and {:.0f} % in strength from", angle_deg,
                    strength * 100.0);
  return angle_deg > kMagneticNoteAngleDeg || strength > kMagneticNoteStrength;
}

void SensorReader::bind(const ecs::Registry& reg, const Vehicle& v, const std::string& who) {
  v_ = &v;
  if (const auto* g = reg.try_get<components::Gravity>(v.world)) gravity_ = g->value;
  const auto* m = reg.try_get<components::MagneticField>(v.world);
  const Vector3d world_field = m ? m->value : components::MagneticField{}.value;
  field_W_ = world_field;
  if (const auto* a = reg.try_get<components::Atmosphere>(v.world)) {
    p0_ = a->pressure;
    t0_ = a->temperature;
    lapse_ = a->temperature_gradient;
  }
  const auto* sc_in = reg.try_get<components::SphericalCoordinates>(v.world);
  const components::SphericalCoordinates sc = sc_in ? *sc_in : components::SphericalCoordinates{};
  elevation_ = sc.elevation;
  q_EW_ = sensors::world_to_enu(sc);
  // Positions are rotated into E before the conversion, so the geodetic frame has no heading.
  geo_.emplace(ignition::math::SphericalCoordinates::EARTH_WGS84,
               ignition::math::Angle(sc.latitude_deg * M_PI / 180.0),
               ignition::math::Angle(sc.longitude_deg * M_PI / 180.0), sc.elevation,
               ignition::math::Angle(0.0));
  use_wmm_ = sc_in != nullptr;
  if (use_wmm_ && v.magnetometer == ecs::kNullEntity && !who.empty()) {
    const Vector3d wmm_W = q_EW_.RotateVectorReverse(
        sensors::wmm_model(sc.latitude_deg, sc.longitude_deg, sc.elevation).enu());
    std::string why;
    if (magnetic_fields_disagree(world_field, wmm_W, why)) {
      spdlog::info(
          "{}: the world's <magnetic_field> ({:.3g} {:.3g} {:.3g} T) {} "
          "the World Magnetic Model at <spherical_coordinates> ({:.3g} {:.3g} {:.3g} T); "
          "the magnetometer stand-in uses the WMM",
          who, world_field.X(), world_field.Y(), world_field.Z(), why, wmm_W.X(), wmm_W.Y(),
          wmm_W.Z());
    }
  }
  imu_ = mount_of(reg, v.imu);
  mag_ = mount_of(reg, v.magnetometer);
  reset();
}

SensorReader::Mount SensorReader::mount_of(const ecs::Registry& reg, ecs::Entity sensor) {
  Mount m;
  if (sensor == ecs::kNullEntity) return m;
  m.link = reg.parent(sensor);
  if (const auto* p = reg.try_get<components::Pose>(sensor)) m.q_LS = p->value.Rot();
  return m;
}

Quaterniond SensorReader::q_BS(const ecs::Registry& reg, const Truth& t, const Mount& m) const {
  if (m.link == v_->link) return m.q_LS;
  const auto* wp = reg.try_get<components::WorldPose>(m.link);
  if (!wp) throw Error(reg.describe(m.link), "the sensor's link has no WorldPose");
  return t.X_WB.Rot().Inverse() * wp->value.Rot() * m.q_LS;
}

void SensorReader::update_field(const Truth& t) {
  if (!use_wmm_) return;  // the world's <magnetic_field>, as bound
  if (field_valid_ && (t.X_EB.Pos() - field_at_E_).Length() <= kFieldRefresh) return;
  const Vector3d b_E = sensors::wmm_model(t.latitude_deg, t.longitude_deg, t.altitude).enu();
  field_W_ = q_EW_.RotateVectorReverse(b_E);
  field_at_E_ = t.X_EB.Pos();
  field_valid_ = true;
}

void SensorReader::reset() {
  seen_imu_ = seen_mag_ = seen_baro_ = seen_gnss_ = seen_air_ = seen_range_ = 0;
  field_valid_ = false;  // a reset run evaluates the field where a fresh run would
}

Truth SensorReader::truth(const ecs::Registry& reg) const {
  Truth t;
  const ecs::Entity l = v_->link;
  if (const auto* p = reg.try_get<components::WorldPose>(l)) t.X_WB = p->value;
  if (const auto* v = reg.try_get<components::WorldLinearVelocity>(l)) t.v_WB_W = v->value;
  if (const auto* w = reg.try_get<components::AngularVelocity>(l)) t.w_WB_B = w->value;
  Vector3d a_B;  // kinematic acceleration, body
  if (const auto* a = reg.try_get<components::LinearAcceleration>(l)) a_B = a->value;
  t.specific_force_B = a_B - t.X_WB.Rot().RotateVectorReverse(gravity_);
  t.X_EB = Pose3d(q_EW_.RotateVector(t.X_WB.Pos()), q_EW_ * t.X_WB.Rot());
  t.v_WB_E = q_EW_.RotateVector(t.v_WB_W);
  const Vector3d geo =
      geo_->PositionTransform(t.X_EB.Pos(), ignition::math::SphericalCoordinates::LOCAL2,
                              ignition::math::SphericalCoordinates::SPHERICAL);
  t.latitude_deg = geo.X() * 180.0 / M_PI;
  t.longitude_deg = geo.Y() * 180.0 / M_PI;
  t.altitude = geo.Z();
  return t;
}

SensorSample SensorReader::read(const ecs::Registry& reg, const Truth& t) {
  SensorSample s;
  const auto* imu =
      v_->imu != ecs::kNullEntity ? reg.try_get<components::ImuReading>(v_->imu) : nullptr;
  if (imu && imu->sequence > 0) {
    const Quaterniond q = q_BS(reg, t, imu_);
    s.accel = q.RotateVector(imu->linear_acceleration);
    s.gyro = q.RotateVector(imu->angular_velocity);
    s.imu_new = imu->sequence != seen_imu_;
    seen_imu_ = imu->sequence;
  } else if (v_->imu == ecs::kNullEntity) {
    s.accel = t.specific_force_B;
    s.gyro = t.w_WB_B;
    s.imu_new = true;
  }
  const auto* mag = v_->magnetometer != ecs::kNullEntity
                        ? reg.try_get<components::MagnetometerReading>(v_->magnetometer)
                        : nullptr;
  if (mag && mag->sequence > 0) {
    s.mag = q_BS(reg, t, mag_).RotateVector(mag->field);
    s.mag_new = mag->sequence != seen_mag_;
    seen_mag_ = mag->sequence;
  } else if (v_->magnetometer == ecs::kNullEntity) {
    update_field(t);
    s.mag = t.X_WB.Rot().RotateVectorReverse(field_W_);
    s.mag_new = true;
  }
  const double h_true = t.X_WB.Pos().Z() + elevation_;
  double p_true = 0, temp = 0;
  atmosphere_at(h_true, p0_, t0_, lapse_, p_true, temp);
  const auto* baro = v_->air_pressure != ecs::kNullEntity
                         ? reg.try_get<components::AirPressureReading>(v_->air_pressure)
                         : nullptr;
  if (baro && baro->sequence > 0) {
    s.pressure = baro->pressure;
    s.baro_new = baro->sequence != seen_baro_;
    seen_baro_ = baro->sequence;
  } else if (v_->air_pressure == ecs::kNullEntity) {
    s.pressure = p_true;
    s.baro_new = true;
  }
  s.temperature = temp;
  s.pressure_alt = altitude_of_pressure(s.pressure, p0_, t0_, lapse_);
  const ecs::Entity air_entity = air_speed_source(reg);
  const auto* air = air_entity != ecs::kNullEntity
                        ? reg.try_get<components::AirSpeedReading>(air_entity)
                        : nullptr;
  if (air && air->sequence > 0) {
    s.diff_pressure = air->diff_pressure;
    s.airspeed_new = air->sequence != seen_air_;
    seen_air_ = air->sequence;
  }
  return s;
}

ecs::Entity SensorReader::air_speed_source(const ecs::Registry& reg) {
  if (v_->air_speed != ecs::kNullEntity) return v_->air_speed;
  if (!air_searched_) {
    air_searched_ = true;
    for (ecs::Entity e : reg.descendants(v_->model)) {
      if (reg.has<components::Link>(e) && reg.has<components::AirSpeedReading>(e)) {
        air_plugin_ = e;
        break;
      }
    }
  }
  return air_plugin_;
}

RangeSample SensorReader::read_range(const ecs::Registry& reg, const Truth& t) {
  RangeSample r;
  if (v_->altimeter == ecs::kNullEntity) return r;
  const auto* a = reg.try_get<components::AltimeterReading>(v_->altimeter);
  if (!a || a->sequence == 0) return r;
  // Cosine of the tilt: the body's up axis against the world's.
  const double cos_tilt = t.X_WB.Rot().RotateVector(Vector3d::UnitZ).Z();
  const double height = a->vertical_reference + a->vertical_position;
  r.distance = cos_tilt > 0.1 ? height / cos_tilt : std::numeric_limits<double>::infinity();
  r.variance = a->vertical_position_variance;
  r.fresh = a->sequence != seen_range_;
  seen_range_ = a->sequence;
  return r;
}

GnssSample SensorReader::read_gnss(const ecs::Registry& reg, const Truth& t) {
  GnssSample g;
  if (v_->navsat != ecs::kNullEntity) {
    if (const auto* n = reg.try_get<components::NavSatReading>(v_->navsat); n && n->sequence > 0) {
      g.fix = n->fix;
      g.latitude_deg = n->latitude_deg;
      g.longitude_deg = n->longitude_deg;
      g.altitude = n->altitude;
      g.velocity_enu = n->velocity_enu;
      g.fresh = n->sequence != seen_gnss_;
      seen_gnss_ = n->sequence;
    }
    return g;
  }
  g.latitude_deg = t.latitude_deg;
  g.longitude_deg = t.longitude_deg;
  g.altitude = t.altitude;
  g.velocity_enu = t.v_WB_E;
  g.fresh = true;
  return g;
}

}  // namespace kestrel::sitl
