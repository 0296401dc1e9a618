#pragma once
/// @file MulticopterMotorModel: one rotor of a multicopter (Gazebo's
/// gz::sim::systems::MulticopterMotorModel, same SDF parameters). See README.md in this folder.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Creates an unconfigured motor model (one instance per rotor, attached to the model).
std::unique_ptr<System> make_multicopter_motor_model();

}  // namespace kestrel::systems
