#pragma once
// Pose composition with the usual convention (ignition-math 6's operator* composes in the
// reverse order, so Kestrel's physics code spells it out): X_AC = compose(X_AB, X_BC).
// Rotation: v' = v + (w·t + u × t) / |q|² with t = 2 u × v — about a third of the instructions
// of ignition's RotateVector (two quaternion products and an inverse), and like it independent
// of the quaternion's scale (an SDF quat_xyzw pose need not be normalised).

#include <ignition/math/Pose3.hh>

namespace kestrel::physics {

inline ignition::math::Vector3d rotate(const ignition::math::Quaterniond& q,
                                       const ignition::math::Vector3d& v) {
  const ignition::math::Vector3d u(q.X(), q.Y(), q.Z());
  const ignition::math::Vector3d t = 2.0 * u.Cross(v);
  const double n2 = q.W() * q.W() + u.SquaredLength();
  return v + (q.W() * t + u.Cross(t)) / n2;
}

inline ignition::math::Pose3d compose(const ignition::math::Pose3d& X_AB,
                                      const ignition::math::Pose3d& X_BC) {
  return ignition::math::Pose3d(X_AB.Pos() + rotate(X_AB.Rot(), X_BC.Pos()),
                                X_AB.Rot() * X_BC.Rot());
}

inline ignition::math::Pose3d inverse(const ignition::math::Pose3d& X_AB) {
  const auto& q = X_AB.Rot();
  const ignition::math::Quaterniond q_inv(q.W(), -q.X(), -q.Y(), -q.Z());
  return ignition::math::Pose3d(-rotate(q_inv, X_AB.Pos()), q_inv);
}

}  // namespace kestrel::physics
