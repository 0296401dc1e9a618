#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-apply-link-wrench-system` / ApplyLinkWrench. See README.md.
std::unique_ptr<System> make_apply_link_wrench();

}  // namespace kestrel::systems
