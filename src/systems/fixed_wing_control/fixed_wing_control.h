#pragma once
/// @file Fixed-wing flight control: FixedWingControl (total energy control of airspeed and
/// altitude, course by bank angle, inner loops to the control surfaces) and FixedWingMission
/// (take-off run, climb, waypoint circuit, approach, flare, roll-out) on top of it. See README.md.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// kestrel::systems::FixedWingControl (priority −129: after the mission, before the motor
/// models and the JointPositionControllers).
std::unique_ptr<System> make_fixed_wing_control();

/// kestrel::systems::FixedWingMission (priority −130: before the controller).
std::unique_ptr<System> make_fixed_wing_mission();

}  // namespace kestrel::systems
