#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-joint-state-publisher-system` / JointStatePublisher. See README.md.
std::unique_ptr<System> make_joint_state_publisher();

}  // namespace kestrel::systems
