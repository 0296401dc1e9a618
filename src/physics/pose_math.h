#pragma once
// Pose composition with the usual convention (ignition-math 6's operator* composes in the
// reverse order, so Kestrel's physics code spells it out): X_AC = compose(X_AB, X_BC).

#include <ignition/math/Pose3.hh>

namespace kestrel::physics {

inline ignition::math::Pose3d compose(const ignition::math::Pose3d& X_AB,
                                      const ignition::math::Pose3d& X_BC) {
  return ignition::math::Pose3d(X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()),
                                X_AB.Rot() * X_BC.Rot());
}

inline ignition::math::Pose3d inverse(const ignition::math::Pose3d& X_AB) {
  const auto q = X_AB.Rot().Inverse();
  return ignition::math::Pose3d(-q.RotateVector(X_AB.Pos()), q);
}

}  // namespace kestrel::physics
