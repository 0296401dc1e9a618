// The one explicit list of systems compiled into Kestrel. Add a system here (one line) when it
// exists; keep the order stable (it is the order `kestrel check` lists them in).

#include "kestrel/systems/builtin.h"

#include "kestrel/physics/physics.h"
#include "multicopter_control/multicopter_control.h"
#include "multicopter_motor_model/multicopter_motor_model.h"

namespace kestrel::systems {

std::span<const BuiltinSystem> builtin_systems() {
  static const BuiltinSystem kSystems[] = {
      // name       factory                          default  serves sensors
      {"Physics", &physics::make_physics_system, true, ""},
      {"MulticopterMotorModel", &make_multicopter_motor_model, false, ""},
      {"MulticopterVelocityControl", &make_multicopter_velocity_control, false, ""},
      {"MulticopterMission", &make_multicopter_mission, false, ""},
      {"LinearBattery", &make_linear_battery, false, ""},
      {"FaultInjection", &make_fault_injection, false, ""},
  };
  return kSystems;
}

}  // namespace kestrel::systems
