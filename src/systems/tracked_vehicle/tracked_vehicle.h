#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-tracked-vehicle-system` / TrackedVehicle. See README.md.
std::unique_ptr<System> make_tracked_vehicle();

}  // namespace kestrel::systems
