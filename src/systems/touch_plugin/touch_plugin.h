#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-touchplugin-system` / TouchPlugin. See README.md.
std::unique_ptr<System> make_touch_plugin();

}  // namespace kestrel::systems
