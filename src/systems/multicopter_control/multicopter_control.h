#pragma once
/// @file Multicopter flight control: MulticopterVelocityControl (Gazebo's, a Lee geometric
/// controller on a body-heading velocity command) and MulticopterMission (take off, waypoints,
/// hold, land on top of it). See README.md in this folder.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// gz::sim::systems::MulticopterVelocityControl (priority −129: before the motor models).
std::unique_ptr<System> make_multicopter_velocity_control();

/// kestrel::systems::MulticopterMission (priority −130: before the velocity controller).
std::unique_ptr<System> make_multicopter_mission();

}  // namespace kestrel::systems
