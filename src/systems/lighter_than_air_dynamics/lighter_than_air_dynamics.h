#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// gz-sim's `LighterThanAirDynamics` (`gz::sim::systems::LighterThanAirDynamics`): an airship
/// hull's viscous and inviscid (Munk) aerodynamics, its added mass's Coriolis terms and its
/// axial drag. See README.md.
std::unique_ptr<System> make_lighter_than_air_dynamics();

}  // namespace kestrel::systems
