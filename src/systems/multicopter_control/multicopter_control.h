#pragma once
/// @file Multicopter flight control: MulticopterVelocityControl (Gazebo's, a Lee geometric
/// controller on a body-heading velocity command) and MulticopterMission (take off, waypoints,
/// hold, land on top of it), plus the battery and fault injection that act on them.
/// See README.md in each system's folder.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// gz::sim::systems::MulticopterVelocityControl (priority −129: before the motor models).
std::unique_ptr<System> make_multicopter_velocity_control();

/// kestrel::systems::MulticopterMission (priority −130: before the velocity controller).
std::unique_ptr<System> make_multicopter_mission();

/// gz::sim::systems::LinearBattery with Kestrel's rotor load (priority −127: after the
/// motors); see src/systems/linear_battery/README.md.
std::unique_ptr<System> make_linear_battery();

/// kestrel::systems::FaultInjection: faults scheduled in the world SDF (priority −131); see
/// src/systems/fault_injection/README.md.
std::unique_ptr<System> make_fault_injection();

}  // namespace kestrel::systems
