#pragma once
// DiffDrive: Gazebo's differential-drive controller and odometry (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-diff-drive-system` / `gz::sim::systems::DiffDrive`.
std::unique_ptr<System> make_diff_drive();

}  // namespace kestrel::systems
