#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-wheel-slip-system` / WheelSlip. See README.md.
std::unique_ptr<System> make_wheel_slip();

}  // namespace kestrel::systems
