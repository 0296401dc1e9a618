#include "sitl/frames.h"

#include <cmath>

namespace kestrel::sitl {
namespace {

// R_NED_ENU swaps x and y and flips z: a rotation by π about (1, 1, 0)/√2.
const Quaterniond kQ_NED_ENU(0.0, M_SQRT1_2, M_SQRT1_2, 0.0);
// R_FLU_FRD flips y and z: a rotation by π about x.
const Quaterniond kQ_FLU_FRD(0.0, 1.0, 0.0, 0.0);

Quaterniond canonical(Quaterniond q) {
  q.Normalize();
  if (q.W() < 0) q = Quaterniond(-q.W(), -q.X(), -q.Y(), -q.Z());
  return q;
}

}  // namespace

Vector3d enu_to_ned(const Vector3d& v) { return {v.Y(), v.X(), -v.Z()}; }
Vector3d ned_to_enu(const Vector3d& v) { return {v.Y(), v.X(), -v.Z()}; }
Vector3d flu_to_frd(const Vector3d& v) { return {v.X(), -v.Y(), -v.Z()}; }
Vector3d frd_to_flu(const Vector3d& v) { return {v.X(), -v.Y(), -v.Z()}; }

Quaterniond enu_flu_to_ned_frd(const Quaterniond& q_ENU_FLU) {
  return canonical(kQ_NED_ENU * q_ENU_FLU * kQ_FLU_FRD);
}

Quaterniond ned_frd_to_enu_flu(const Quaterniond& q_NED_FRD) {
  // q_ENU_FLU = q_ENU_NED · q_NED_FRD · q_FRD_FLU; both fixed rotations are their own inverse.
  return canonical(kQ_NED_ENU.Inverse() * q_NED_FRD * kQ_FLU_FRD.Inverse());
}

Vector3d euler_ned_frd(const Quaterniond& q_ENU_FLU) {
  return enu_flu_to_ned_frd(q_ENU_FLU).Euler();
}

double yaw_rate_ned_to_enu(double r_NED) { return -r_NED; }

}  // namespace kestrel::sitl
