#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// PX4's Gazebo plugin `ParachuteSystem` (`gz::sim::systems::ParachuteSystem`, the
/// advanced_plane's): canopy drag and angular damping once a servo output deploys it. See
/// README.md.
std::unique_ptr<System> make_parachute();

}  // namespace kestrel::systems
