#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-detachable-joint-system` / DetachableJoint. See README.md.
std::unique_ptr<System> make_detachable_joint();

}  // namespace kestrel::systems
