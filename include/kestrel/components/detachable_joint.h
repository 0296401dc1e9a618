#pragma once
/// @file A detachable fixed joint: a command component Physics consumes (see
/// kestrel/components/physics.h for the others), in its own header so that the many files that
/// include physics.h do not depend on it.

#include <ignition/math/Pose3.hh>

#include "kestrel/ecs/entity.h"

namespace kestrel::components {

/// A detachable fixed joint between two links (Gazebo's DetachableJoint component, written by
/// the DetachableJoint system on an entity of its own). While `attached`, Physics holds the child
/// link at the pose relative to the parent link it had when the joint attached (`X_PC`, which
/// Physics writes at that moment); clearing `attached` releases it at once, re-setting it
/// attaches again at the links' relative pose of that step. Physics simulates it as a MuJoCo
/// weld equality constraint that it switches on and off (src/physics/README.md, "Detachable
/// joints"); creating or removing the entity rebuilds the model, toggling `attached` does not.
struct DetachableJoint {
  ecs::Entity parent_link = ecs::kNullEntity;
  ecs::Entity child_link = ecs::kNullEntity;
  bool attached = true;
  bool pose_set = false;        ///< Physics has written X_PC for the current attachment
  ignition::math::Pose3d X_PC;  ///< child link frame in the parent link frame [m, rad]
};

}  // namespace kestrel::components
