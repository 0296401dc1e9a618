#pragma once
// VelocityControl: Gazebo's velocity control of a model and its free links (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-velocity-control-system` / `gz::sim::systems::VelocityControl`.
std::unique_ptr<System> make_velocity_control();

}  // namespace kestrel::systems
