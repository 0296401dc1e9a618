#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-advanced-lift-drag-system` / AdvancedLiftDrag (gz-sim main): a whole
/// aircraft's forces and moments from stability, rate and control derivatives. See README.md.
std::unique_ptr<System> make_advanced_lift_drag();

}  // namespace kestrel::systems
