#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-buoyancy-engine-system` / BuoyancyEngine: a variable-volume bladder on a
/// link, commanded in m³, inflating at a limited rate. See README.md.
std::unique_ptr<System> make_buoyancy_engine();

}  // namespace kestrel::systems
