#pragma once
// TrajectoryFollower: Gazebo's waypoint follower (forces and torques on a link) (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-trajectory-follower-system` / `gz::sim::systems::TrajectoryFollower`.
std::unique_ptr<System> make_trajectory_follower();

}  // namespace kestrel::systems
