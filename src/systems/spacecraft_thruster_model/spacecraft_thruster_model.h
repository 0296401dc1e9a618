#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's and PX4's `SpacecraftThrusterModel` (`gz::sim::systems::SpacecraftThrusterModel`):
/// a cold-gas thruster behind a solenoid valve, full thrust or none in a duty cycle of its
/// command. See README.md.
std::unique_ptr<System> make_spacecraft_thruster_model();

}  // namespace kestrel::systems
