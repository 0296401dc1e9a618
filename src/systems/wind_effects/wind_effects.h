#pragma once
// WindEffects: the world's current wind (components::Wind) and the force it exerts on links
// with <enable_wind>.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-wind-effects-system` / `gz::sim::systems::WindEffects`. See README.md.
std::unique_ptr<System> make_wind_effects_system();

}  // namespace kestrel::systems
