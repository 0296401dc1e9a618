#pragma once
// OdometryPublisher: Gazebo's odometry of a model from its true pose (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-odometry-publisher-system` / `gz::sim::systems::OdometryPublisher`.
std::unique_ptr<System> make_odometry_publisher();

}  // namespace kestrel::systems
