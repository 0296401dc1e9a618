#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-hydrodynamics-system` / Hydrodynamics: Fossen's added mass, Coriolis and
/// linear and quadratic damping of an underwater vehicle, in a current. See README.md.
std::unique_ptr<System> make_hydrodynamics();

}  // namespace kestrel::systems
