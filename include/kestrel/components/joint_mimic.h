#pragma once
/// @file Mimic constraints between joint axes, in their own header so that the many files that
/// include model.h do not depend on them (as detachable_joint.h).

#include <vector>

#include "kestrel/ecs/entity.h"

namespace kestrel::components {

/// One axis of this joint follows another joint's axis (SDF 1.11 `<axis><mimic>`): the
/// follower's position is held at `multiplier · (leader position − reference) + offset`
/// [rad or m]. Physics makes it a MuJoCo joint equality constraint (src/physics/README.md,
/// "Mimic joints").
struct JointMimic {
  unsigned axis = 0;                      ///< the follower axis of this joint: 0 <axis>, 1 <axis2>
  ecs::Entity leader = ecs::kNullEntity;  ///< the leader joint (same model or a nested one)
  unsigned leader_axis = 0;               ///< 0: its <axis>, 1: its <axis2>
  double multiplier = 1, offset = 0, reference = 0;
};

/// The mimic constraints of a follower joint (written by the SDF loader).
struct JointMimics {
  std::vector<JointMimic> data;
};

}  // namespace kestrel::components
