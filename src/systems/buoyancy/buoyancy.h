#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-buoyancy-system` / Buoyancy: the fluid's upthrust on every enabled link from
/// its collision shapes' volume, uniform or in graded density layers. See README.md.
std::unique_ptr<System> make_buoyancy();

}  // namespace kestrel::systems
