#pragma once
/// @file World-level components: what the world is and the environment it defines.
/// Frames: world frame is ENU (x east, y north, z up), as SDF defines. SI units throughout.

#include <cstdint>
#include <string>

#include <ignition/math/Vector3.hh>

#include "kestrel/core/time.h"

namespace kestrel::components {

/// Marks the world entity (the root of each world's entity tree).
struct World {};

/// The world seed (Runner::Options::seed, CLI `--seed`), on the world entity; set by the Runner.
/// Systems derive their random streams from it and an entity's scoped name (so runs are bit-identical for a seed).
struct WorldSeed {
  std::uint64_t value = 0;
};

/// Physics settings of the world (SDF <physics>).
struct PhysicsParams {
  Duration max_step_size{1'000'000};  ///< step size [ns] (SDF max_step_size, default 1 ms)
  double real_time_factor = 1.0;      ///< target sim/real speed ratio; 0 = as fast as possible
  std::string engine = "mujoco";      ///< engine Kestrel uses (SDF `type` is recorded below)
  std::string sdf_type;               ///< SDF <physics type=...> as written ("ode", "dart"...)
};

/// Gravitational acceleration in the world frame [m/s²] (SDF <gravity>, default 0 0 -9.8).
struct Gravity {
  ignition::math::Vector3d value{0, 0, -9.8};
};

/// Uniform magnetic field in the world frame [T] (SDF <magnetic_field>).
struct MagneticField {
  ignition::math::Vector3d value{5.5645e-6, 22.8758e-6, -42.3884e-6};
};

/// Atmosphere model (SDF <atmosphere type="adiabatic">): values at sea level (altitude 0 m).
struct Atmosphere {
  double temperature = 288.15;          ///< [K]
  double pressure = 101325.0;           ///< [Pa]
  double temperature_gradient = -0.0065;  ///< [K/m]
};

/// Geodetic origin of the world frame (SDF <spherical_coordinates>).
struct SphericalCoordinates {
  std::string surface_model = "EARTH_WGS84";
  std::string world_frame_orientation = "ENU";
  double latitude_deg = 0;   ///< of the world origin [deg]
  double longitude_deg = 0;  ///< of the world origin [deg]
  double elevation = 0;      ///< of the world origin above the ellipsoid [m]
  double heading_deg = 0;    ///< rotation of the world frame about up [deg]
};

/// Scene settings, kept as data for viewers (SDF <scene>).
struct Scene {
  ignition::math::Vector3d ambient{0.4, 0.4, 0.4};     ///< RGB 0..1
  ignition::math::Vector3d background{0.7, 0.7, 0.7};  ///< RGB 0..1
  bool shadows = true;
  bool grid = true;
};

/// Global wind (SDF <wind>): velocity of the air in the world frame [m/s]. Links with
/// EnableWind are pushed by a wind system; this is data only.
struct Wind {
  ignition::math::Vector3d linear_velocity;
};

/// Extra air velocity of a gust, world frame [m/s], on the world entity; written by the
/// FaultInjection system (`wind_gust` faults). Every reader of the air velocity adds it to Wind:
/// the motor model (rotor drag), WindEffects (the push on links with <enable_wind>), the
/// AirSpeed sensor and the PX4 bridge's true airspeed.
struct WindGust {
  ignition::math::Vector3d linear_velocity;
};

}  // namespace kestrel::components
