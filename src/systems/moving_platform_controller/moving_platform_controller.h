#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// PX4's Gazebo plugin `MovingPlatformController` (`custom::MovingPlatformController`,
/// libMovingPlatformController.so, PX4's moving_platform model): drives a heavy platform at a
/// set speed and heading with a PD wrench and low-pass filtered noise. See README.md.
std::unique_ptr<System> make_moving_platform_controller();

}  // namespace kestrel::systems
