#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-thruster-system` / Thruster: a propeller's thrust from Fossen's thrust
/// coefficient model, commanded in newtons on a topic. See README.md.
std::unique_ptr<System> make_thruster();

}  // namespace kestrel::systems
