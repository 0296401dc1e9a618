#pragma once
/// @file The environment sensors measure: standard atmosphere, the geomagnetic field (World
/// Magnetic Model) and the geodetic frame of the world. Pure functions, usable by any system
/// (rotor drag, airspeed...). Frames: world ENU; SI units unless a name says otherwise.

#include <ignition/math/Quaternion.hh>
#include <ignition/math/Vector3.hh>

#include "kestrel/components/world.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::sensors {

/// Air at one altitude.
struct AirState {
  double temperature = 0;  ///< [K]
  double pressure = 0;     ///< [Pa]
  double density = 0;      ///< [kg/m³]
};

/// U.S. Standard Atmosphere 1976 / ISA at a geometric altitude above mean sea level [m]
/// (converted to geopotential altitude), layers up to 86 km. The troposphere (below 11 km
/// geopotential) uses `sea_level` (SDF <atmosphere>: temperature, pressure, lapse rate); the
/// layers above use the standard lapse rates starting from the resulting tropopause.
/// @throws Error outside [-5 km, 86 km].
AirState standard_atmosphere(double altitude_m, const components::Atmosphere& sea_level = {});

/// The geomagnetic field at a place, from the World Magnetic Model.
struct GeomagneticField {
  double declination_deg = 0;  ///< angle from true north to the field's horizontal part, east +
  double inclination_deg = 0;  ///< dip below the horizontal, down + (north hemisphere > 0)
  double strength = 0;         ///< total intensity [T]
  /// The field as an ENU vector [T] (east, north, up).
  ignition::math::Vector3d enu() const;
};

/// WMM2025 (epoch 2025.0, no secular variation) evaluated from its degree-12 spherical-harmonic
/// coefficients at geodetic latitude/longitude [deg] and height above the WGS84 ellipsoid [m].
GeomagneticField wmm_model(double latitude_deg, double longitude_deg, double height_m = 0);

/// The same, from a 5° × 5° table of declination, inclination and strength computed once from
/// wmm_model at height 0, bilinearly interpolated (declination across the ±180° seam
/// unwrapped). See src/sensors/magnetometer/README.md for the accuracy.
GeomagneticField wmm_table(double latitude_deg, double longitude_deg);

/// Rotation of the world frame relative to local ENU at the origin (q_EW: v_ENU = q_EW · v_W)
/// from spherical coordinates: heading_deg is the angle from the ENU axes to the world axes,
/// positive from north towards east (about the downward vector), as SDF defines it.
ignition::math::Quaterniond world_to_enu(const components::SphericalCoordinates& sc);

}  // namespace kestrel::sensors
