#pragma once
// PosePublisher: Gazebo's publisher of a model's link, visual, collision and sensor poses
// (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-pose-publisher-system` / `gz::sim::systems::PosePublisher`.
std::unique_ptr<System> make_pose_publisher();

}  // namespace kestrel::systems
