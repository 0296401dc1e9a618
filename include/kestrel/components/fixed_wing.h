#pragma once
/// @file Fixed-wing flight control components (on the model entity). FixedWingMission writes
/// FixedWingSetpoint every step; FixedWingControl reads it and drives the control surfaces (an
/// ignition.msgs.Actuators entry of the model's TopicInputs that JointPositionControllers read),
/// the propeller (ActuatorCommands, read by MulticopterMotorModel) and the wheel brakes.
/// See src/systems/fixed_wing_control/README.md.

#include <cstdint>

namespace kestrel::components {

/// What the fixed-wing controller is asked to do this step. World ENU; angles in radians.
struct FixedWingSetpoint {
  enum class Mode : std::uint8_t {
    kOff,  ///< throttle 0, surfaces neutral, brakes off (the controller commands nothing else)
    kGroundRun,  ///< on the runway: full throttle, wings level, rudder to `course`, elevator to
                 ///< `pitch` (nose-up pitch attitude) — the take-off run and rotation
    kFly,        ///< airborne: total energy control of `airspeed` and `altitude`, bank for `course`
    kRollout,    ///< on the runway after touchdown: throttle 0, brakes on, rudder to `course`
  };
  Mode mode = Mode::kOff;
  double airspeed = 0;    ///< demanded true airspeed [m/s] (kFly)
  double altitude = 0;    ///< demanded altitude, world z [m] (kFly)
  double climb_rate = 0;  ///< feed-forward vertical speed of the altitude demand [m/s] (kFly)
  double course = 0;      ///< demanded course over ground, from +x (east) counter-clockwise [rad]
  double pitch = 0;       ///< nose-up pitch attitude [rad] (kGroundRun)
  bool flare = false;     ///< kFly: throttle idle, pitch controls the sink rate alone
};

}  // namespace kestrel::components
