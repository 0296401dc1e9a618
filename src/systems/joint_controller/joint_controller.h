#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-joint-controller-system` / JointController. See README.md.
std::unique_ptr<System> make_joint_controller();

}  // namespace kestrel::systems
