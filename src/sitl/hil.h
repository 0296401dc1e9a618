#pragma once
/// @file HIL_SENSOR's and HIL_GPS's fields from a vehicle's sensor samples: the one place where
/// Kestrel's sensor values (vehicle.h: body FLU, world ENU, SI) become MAVLink's HIL frames and
/// units (body FRD, NED, gauss, hPa, °C, degE7, mm, cm/s, cdeg). The PX4 bridge narrows these
/// doubles into HIL_SENSOR / HIL_GPS (floats and integers); the RflySim bridge sends them as
/// they are in HILSensor30d / HILGPS30d (src/sitl/rflysim/README.md).

#include <cstdint>
#include <ignition/math/Vector3.hh>

namespace kestrel::sitl {

using ignition::math::Vector3d;
struct SensorSample;  // sitl/vehicle.h
struct GnssSample;

/// HIL_SENSOR's fields (time_usec and id aside).
struct HilSensorValues {
  Vector3d acc_frd;   ///< xacc, yacc, zacc: specific force, body FRD [m/s²] (at rest: 0, 0, −g)
  Vector3d gyro_frd;  ///< xgyro, ygyro, zgyro: body FRD [rad/s]
  Vector3d mag_frd;   ///< xmag, ymag, zmag: body FRD [gauss]
  double abs_pressure = 0;           ///< [hPa]
  double diff_pressure = 0;          ///< [hPa]
  double pressure_alt = 0;           ///< altitude from pressure in the world's atmosphere [m]
  double temperature = 0;            ///< [°C]
  std::uint32_t fields_updated = 0;  ///< HIL_SENSOR_UPDATED_FLAGS of the new samples
};

HilSensorValues hil_sensor_values(const SensorSample& s);

/// What a GNSS receiver reports besides its position: accuracies and satellites (the bridges'
/// <gps_eph>, <gps_epv>, <gps_satellites>).
struct GpsReport {
  double eph_cm = 30, epv_cm = 40;
  int satellites = 10;
};

/// HIL_GPS's fields (time_usec aside), unrounded. Without a fix (GnssSample::fix false):
/// fix_type 0, satellites 0, eph, epv, vel, cog 65535 (MAVLink's "unknown"), the rest 0.
struct HilGpsValues {
  int fix_type = 0;               ///< 3 (3D fix) or 0
  double lat_e7 = 0, lon_e7 = 0;  ///< [degE7]
  double alt_mm = 0;              ///< above the WGS84 ellipsoid [mm]
  double eph = 0, epv = 0;        ///< [cm]
  double vel = 0;                 ///< ground speed [cm/s]
  Vector3d v_ned_cm;              ///< vn, ve, vd [cm/s]
  double cog = 0;                 ///< course over ground [cdeg], 0 ≤ cog < 36000
  int satellites = 0;
};

HilGpsValues hil_gps_values(const GnssSample& g, const GpsReport& report);

}  // namespace kestrel::sitl
