#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-joint-position-controller-system` / JointPositionController. See README.md.
std::unique_ptr<System> make_joint_position_controller();

}  // namespace kestrel::systems
