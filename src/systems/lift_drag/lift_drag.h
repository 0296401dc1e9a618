#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-lift-drag-system` / LiftDrag: lift, drag and pitching moment of one lifting
/// surface. See README.md.
std::unique_ptr<System> make_lift_drag();

}  // namespace kestrel::systems
