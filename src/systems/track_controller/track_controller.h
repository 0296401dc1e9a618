#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-track-controller-system` / TrackController. See README.md.
std::unique_ptr<System> make_track_controller();

}  // namespace kestrel::systems
