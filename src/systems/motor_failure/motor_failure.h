#pragma once
// MotorFailureSystem: PX4's motor-failure plugin for Gazebo (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// PX4's `MotorFailurePlugin` / `gz::sim::systems::MotorFailureSystem` (PX4's x500 declares it).
std::unique_ptr<System> make_motor_failure();

}  // namespace kestrel::systems
