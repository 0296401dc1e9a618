#pragma once
// MecanumDrive: Gazebo's mecanum-wheel drive (README.md).

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-mecanum-drive-system` / `gz::sim::systems::MecanumDrive`.
std::unique_ptr<System> make_mecanum_drive();

}  // namespace kestrel::systems
