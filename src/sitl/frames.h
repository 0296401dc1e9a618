#pragma once
/// @file The one place where Kestrel's frames meet the autopilots': world ENU / body FLU inside, NED / FRD on the wire.
///
/// Kestrel: world ENU (x east, y north, z up), body FLU (x forward, y left, z up).
/// PX4 and ArduPilot: local NED (x north, y east, z down), body FRD (x forward, y right, z down).
/// Names follow Drake: q_NED_FRD is the orientation of the FRD body frame in the NED frame (it
/// maps vectors expressed in FRD to the same vectors expressed in NED).
/// ENU here is true east-north-up: a world <spherical_coordinates><heading_deg> is taken out
/// before these conversions (SensorReader::truth gives X_EB and v_WB_E in that frame).

#include <ignition/math/Quaternion.hh>
#include <ignition/math/Vector3.hh>

namespace kestrel::sitl {

using ignition::math::Quaterniond;
using ignition::math::Vector3d;

/// A vector expressed in ENU, expressed in NED: (n, e, d) = (y, x, −z).
Vector3d enu_to_ned(const Vector3d& v_enu);
/// A vector expressed in NED, expressed in ENU: (x, y, z) = (e, n, −d).
Vector3d ned_to_enu(const Vector3d& v_ned);
/// A vector expressed in body FLU, expressed in body FRD: (x, −y, −z). Self-inverse.
Vector3d flu_to_frd(const Vector3d& v_flu);
/// A vector expressed in body FRD, expressed in body FLU: (x, −y, −z).
Vector3d frd_to_flu(const Vector3d& v_frd);

/// Orientation of the body in the world, Kestrel's convention (q_ENU_FLU, e.g. a link's
/// WorldPose rotation) → the autopilots' (q_NED_FRD). Result has w ≥ 0.
Quaterniond enu_flu_to_ned_frd(const Quaterniond& q_ENU_FLU);
/// The inverse of enu_flu_to_ned_frd.
Quaterniond ned_frd_to_enu_flu(const Quaterniond& q_NED_FRD);

/// Roll, pitch, yaw [rad] of the body FRD frame in NED (z-y-x Tait-Bryan angles, the aerospace
/// convention: yaw 0 = nose north, +π/2 = nose east) from Kestrel's q_ENU_FLU.
Vector3d euler_ned_frd(const Quaterniond& q_ENU_FLU);
/// A yaw rate about NED's down axis (positive: nose turns clockwise seen from above) as a rate
/// about ENU's up axis: −r.
double yaw_rate_ned_to_enu(double r_NED);

}  // namespace kestrel::sitl
