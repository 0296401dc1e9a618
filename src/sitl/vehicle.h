#pragma once
// What the SITL bridges read from a vehicle: its sensors (the model's own sensor readings, or
// noise-free stand-ins computed from the truth at the base link when the model lacks one) and
// its ground truth. Everything here is in Kestrel's frames (world ENU, body FLU) and SI units;
// conversion to NED/FRD happens in frames.h, in the message builders.

#include <ignition/math/Pose3.hh>
#include <ignition/math/Quaternion.hh>
#include <ignition/math/SphericalCoordinates.hh>
#include <ignition/math/Vector3.hh>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::sitl {

using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

/// The entities a bridge serves, found at configure.
struct Vehicle {
  ecs::Entity world = ecs::kNullEntity;
  ecs::Entity model = ecs::kNullEntity;
  ecs::Entity link = ecs::kNullEntity;  ///< base link: body frame of the autopilot
  std::string name;                     ///< scoped model name, for messages
  // Sensor entities of the model (kNullEntity: a noise-free stand-in at the base link).
  ecs::Entity imu = ecs::kNullEntity;
  ecs::Entity magnetometer = ecs::kNullEntity;
  ecs::Entity air_pressure = ecs::kNullEntity;
  ecs::Entity navsat = ecs::kNullEntity;
  ecs::Entity air_speed = ecs::kNullEntity;
  ecs::Entity altimeter = ecs::kNullEntity;  ///< optional: no stand-in (DISTANCE_SENSOR source)
  /// Names of the stand-ins in use ("imu", "magnetometer", ...), for the one-line note.
  std::vector<std::string> stand_ins;
};

/// Finds the model `model` and its base link: `link_name` if given (a direct child link), else
/// a link named "base_link", else the model's first link. Then the first IMU, magnetometer,
/// air_pressure, navsat/gps and air_speed sensor anywhere in the model (on any of its links,
/// nested models included; SensorReader expresses their vectors in the base link's frame).
/// Without an air_speed sensor SensorReader reads the AirSpeedReading a link of the model
/// carries itself (PX4's px4::AirSpeed plugin, src/systems/px4_airspeed).
/// @param who the bridge, for messages ("PX4 bridge (instance 0)").
/// @throws Error if the model has no link or the named link does not exist.
Vehicle find_vehicle(const ecs::Registry& reg, ecs::Entity model, const std::string& link_name,
                     const std::string& who);

/// The update rate of a sensor entity [Hz] (0 = every step; stand-in: 0).
double sensor_rate(const ecs::Registry& reg, ecs::Entity sensor);

/// One set of sensor values, body FLU / world ENU, SI. `*_new` say whether the value is a new
/// sample since the previous call of SensorReader::read (stand-ins are always new); a sensor
/// that is not new (stopped by a fault, or slower than the bridge) keeps its last sample.
struct SensorSample {
  Vector3d accel;  ///< specific force at the IMU, body FLU [m/s²] (level at rest: (0, 0, +g))
  Vector3d gyro;   ///< angular velocity w.r.t. the world, body FLU [rad/s]
  bool imu_new = false;
  Vector3d mag;  ///< magnetic flux density, body FLU [T]
  bool mag_new = false;
  double pressure = 0;      ///< static pressure [Pa]
  double temperature = 0;   ///< air temperature [K]
  double pressure_alt = 0;  ///< altitude from pressure in the world's atmosphere [m]
  bool baro_new = false;
  double diff_pressure = 0;  ///< dynamic pressure [Pa]
  bool airspeed_new = false;
};

/// A GNSS sample.
struct GnssSample {
  bool fix = true;  ///< false: the receiver lost its fix (no position; NavSatReading::fix)
  double latitude_deg = 0;
  double longitude_deg = 0;
  double altitude = 0;    ///< above the ellipsoid [m]
  Vector3d velocity_enu;  ///< [m/s]
  bool fresh = false;     ///< a new sample since the previous read_gnss
};

/// The model's altimeter read as a downward rangefinder over flat ground at world z = 0: the
/// sensor's height (AltimeterReading: vertical_reference + vertical_position, its noise
/// included) divided by the cosine of the base link's tilt, as a beam along the body's down
/// axis would measure it.
struct RangeSample {
  double distance = 0;  ///< along the body down axis [m]; +inf when tilted more than ~84°
  double variance = 0;  ///< of the altimeter's position noise [m²]
  bool fresh = false;   ///< a new sample since the previous read_range
};

/// Ground truth of the base link. The world frame W is Kestrel's (x, y, z as the world file
/// writes them); E is the local east-north-up frame at the world origin, which differs from W
/// by the world's heading (<spherical_coordinates><heading_deg>, sensors::world_to_enu). The
/// autopilots' NED is E with axes swapped, so everything sent to them starts from the E values.
struct Truth {
  Pose3d X_WB;      ///< pose of the base link in the world frame W
  Vector3d v_WB_W;  ///< velocity of the base link origin, expressed in W [m/s]
  Pose3d X_EB;      ///< pose of the base link in E: position [m] from the origin, q_ENU_FLU
  Vector3d v_WB_E;  ///< velocity of the base link origin, expressed in E [m/s]
  Vector3d w_WB_B;  ///< angular velocity, body FLU [rad/s]
  Vector3d specific_force_B;                                 ///< a − g, body FLU [m/s²]
  double latitude_deg = 0, longitude_deg = 0, altitude = 0;  ///< of the base link origin
};

/// Reads a Vehicle's sensors, remembering which samples it has already seen.
class SensorReader {
 public:
  SensorReader() = default;
  /// Binds to a vehicle and reads the world's environment. With <spherical_coordinates> the
  /// magnetometer stand-in uses the World Magnetic Model at the vehicle's position (PX4
  /// checks the field against it); `who` names the bridge in the one-line note printed when
  /// the world's <magnetic_field> disagrees with the WMM at the origin (kMagneticNoteAngleDeg,
  /// kMagneticNoteStrength).
  void bind(const ecs::Registry& reg, const Vehicle& v, const std::string& who);
  /// The vehicle's truth now.
  Truth truth(const ecs::Registry& reg) const;
  /// The sensor values now (stand-ins computed from `truth`).
  SensorSample read(const ecs::Registry& reg, const Truth& truth);
  /// The GNSS value now: the model's sensor if it has one (fresh when its sequence advanced;
  /// without a fix when its reading has none), else the truth (fresh every call).
  GnssSample read_gnss(const ecs::Registry& reg, const Truth& truth);
  /// The model's altimeter as a rangefinder (fresh = false when it has none or no new sample).
  RangeSample read_range(const ecs::Registry& reg, const Truth& truth);
  /// Forget seen sequences (reset).
  void reset();

 private:
  const Vehicle* v_ = nullptr;
  // The stand-in magnetometer's field, world frame [T]: the world's <magnetic_field>, or the
  // WMM evaluated at field_at_E_ (re-evaluated once the vehicle is kFieldRefresh away).
  void update_field(const Truth& t);
  Vector3d gravity_{0, 0, -9.8};
  Vector3d field_W_;
  bool use_wmm_ = false;
  Vector3d field_at_E_;
  bool field_valid_ = false;
  Quaterniond q_EW_;  // world frame W → local ENU at the origin (heading)
  double p0_ = 101325, t0_ = 288.15, lapse_ = -0.0065, elevation_ = 0;
  std::optional<ignition::math::SphericalCoordinates> geo_;
  // Where a sensor sits: its link and its orientation in that link (its <pose>).
  struct Mount {
    ecs::Entity link = ecs::kNullEntity;
    Quaterniond q_LS;
  };
  static Mount mount_of(const ecs::Registry& reg, ecs::Entity sensor);
  // The sensor's orientation in the base link B now, q_BS = q_BW · q_WL · q_LS, from the links'
  // current world poses: a sensor on another link (moving or not) is expressed in body axes.
  Quaterniond q_BS(const ecs::Registry& reg, const Truth& t, const Mount& m) const;
  Mount imu_, mag_;
  // Without an air_speed sensor: the link of the model that carries an AirSpeedReading of its
  // own (PX4's px4::AirSpeed plugin writes one), found at the first read (plugins configure
  // after the bridge).
  ecs::Entity air_speed_source(const ecs::Registry& reg);
  ecs::Entity air_plugin_ = ecs::kNullEntity;
  bool air_searched_ = false;
  std::uint64_t seen_imu_ = 0, seen_mag_ = 0, seen_baro_ = 0, seen_gnss_ = 0, seen_air_ = 0,
                seen_range_ = 0;
};

/// The world's <magnetic_field> "disagrees" with the WMM at the origin (one-line note) when the
/// angle between them exceeds this [deg] ...
inline constexpr double kMagneticNoteAngleDeg = 5.0;
/// ... or their strengths differ by more than this fraction of the WMM's.
inline constexpr double kMagneticNoteStrength = 0.1;

/// Whether `world_field` [T, world frame] disagrees with `wmm_field` [T, world frame] by the
/// thresholds above; `why` receives a description of the difference.
bool magnetic_fields_disagree(const Vector3d& world_field, const Vector3d& wmm_field,
                              std::string& why);

/// Pressure [Pa] and temperature [K] at altitude h [m] in an atmosphere with sea-level values
/// p0, t0 and lapse rate [K/m] (the standard barometric formula).
void atmosphere_at(double h, double p0, double t0, double lapse, double& p, double& t);
/// The altitude [m] at which that atmosphere has pressure p.
double altitude_of_pressure(double p, double p0, double t0, double lapse);

}  // namespace kestrel::sitl
