#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-joint-trajectory-controller-system` / JointTrajectoryController. See
/// README.md.
std::unique_ptr<System> make_joint_trajectory_controller();

}  // namespace kestrel::systems
