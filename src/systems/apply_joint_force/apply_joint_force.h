#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-apply-joint-force-system` / ApplyJointForce. See README.md.
std::unique_ptr<System> make_apply_joint_force();

}  // namespace kestrel::systems
