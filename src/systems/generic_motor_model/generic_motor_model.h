#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// PX4's Gazebo plugin `GenericMotorModel` (`gz::sim::systems::GenericMotorModel`, the bluerov2's
/// thrusters): a rotor with a speed model or thrust from a polynomial of its command. See
/// README.md.
std::unique_ptr<System> make_generic_motor_model();

}  // namespace kestrel::systems
