#include "sitl/hil.h"

#include <cmath>

#include "sitl/frames.h"
#include "sitl/mavlink/messages.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {

HilSensorValues hil_sensor_values(const SensorSample& s) {
  namespace f = mavlink::hil_sensor_updated_flags;
  HilSensorValues v;
  v.acc_frd = flu_to_frd(s.accel);
  v.gyro_frd = flu_to_frd(s.gyro);
  v.mag_frd = flu_to_frd(s.mag) * 1e4;  // T → gauss
  v.abs_pressure = s.pressure / 100.0;  // Pa → hPa
  v.diff_pressure = s.diff_pressure / 100.0;
  v.pressure_alt = s.pressure_alt;
  v.temperature = s.temperature - 273.15;  // K → °C
  std::uint64_t bits = 0;
  if (s.imu_new) bits |= f::kXacc | f::kYacc | f::kZacc | f::kXgyro | f::kYgyro | f::kZgyro;
  if (s.mag_new) bits |= f::kXmag | f::kYmag | f::kZmag;
  if (s.baro_new) bits |= f::kAbsPressure | f::kPressureAlt | f::kTemperature;
  if (s.airspeed_new) bits |= f::kDiffPressure;
  v.fields_updated = static_cast<std::uint32_t>(bits);
  return v;
}

HilGpsValues hil_gps_values(const GnssSample& g, const GpsReport& report) {
  HilGpsValues v;
  if (!g.fix) {  // GNSS loss: no fix, every "unknown" value MAVLink defines, no satellites
    v.eph = v.epv = v.vel = v.cog = 65535;
    return v;
  }
  v.fix_type = 3;
  v.lat_e7 = g.latitude_deg * 1e7;
  v.lon_e7 = g.longitude_deg * 1e7;
  v.alt_mm = g.altitude * 1000.0;
  v.eph = report.eph_cm;
  v.epv = report.epv_cm;
  const Vector3d ned = enu_to_ned(g.velocity_enu);
  v.vel = std::hypot(ned.X(), ned.Y()) * 100.0;
  v.v_ned_cm = {ned.X() * 100.0, ned.Y() * 100.0, ned.Z() * 100.0};
  double cog = std::atan2(ned.Y(), ned.X()) * 180.0 / M_PI;
  if (cog < 0) cog += 360.0;
  v.cog = cog * 100.0;
  v.satellites = report.satellites;
  return v;
}

}  // namespace kestrel::sitl
