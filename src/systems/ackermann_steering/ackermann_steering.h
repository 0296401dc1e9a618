#pragma once
// AckermannSteering: Gazebo's Ackermann steering (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-ackermann-steering-system` / `gz::sim::systems::AckermannSteering`.
std::unique_ptr<System> make_ackermann_steering();

}  // namespace kestrel::systems
