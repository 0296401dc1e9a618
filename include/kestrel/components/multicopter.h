#pragma once
/// @file Multicopter components: rotor commands and speeds, velocity commands, battery, mission
/// progress, rotor faults and the fault schedule's log and commands (written and read by the
/// systems in src/systems: multicopter_motor_model, multicopter_control, linear_battery,
/// fault_injection). Injected sensor faults are components::SensorFault (sensors.h), gusts
/// components::WindGust (world.h).
///
/// Frames: world ENU, body FLU (the vehicle's base link frame). SI units. Rotor arrays are
/// indexed by `actuator_number` (Gazebo's Actuators.velocity index).
///
/// Writers and readers:
/// - ActuatorCommands: written by transport (Actuators on ActuatorCommandTopic), by
///   MulticopterVelocityControl, or by a SITL bridge; read by MulticopterMotorModel.
/// - RotorVelocities: written by MulticopterMotorModel; read by the truth CSV, transport
///   (RotorVelocityTopic), the battery and the SITL bridges.
/// - TwistCommand / VelocityControlEnable: written by transport or the mission layer; read by
///   MulticopterVelocityControl.
/// - Battery: written by the LinearBattery system; read by the motor model (empty = no thrust).
/// - BatteryRecharge, BatteryDrainCommand: written by transport (and LinearBattery); read by
///   LinearBattery.
/// - RotorFaults: written by the FaultInjection system; read by the motor model.
/// - FaultLog, FaultCommand: the FaultInjection system's log and run-time commands (transport
///   writes FaultCommand from FaultCommandTopic).

#include <cstdint>
#include <ignition/math/Vector3.hh>
#include <string>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/entity.h"

namespace kestrel::components {

// ---- rotors (on the model entity) ---------------------------------------------------------------

/// Commanded rotor speeds [rad/s], indexed by actuator_number (ignition::msgs::Actuators
/// `velocity`). Empty means "no command yet" (every rotor 0 rad/s); once non-empty it must cover
/// every motor of the model: a motor whose actuator_number is beyond it is an error naming the
/// motor's <plugin> FILE:LINE (as Gazebo's out-of-range error, but stopping the run). The motor
/// model limits each to at most maxRotVelocity (as Gazebo, no lower limit: a negative command
/// turns the rotor backwards; the spin direction comes from its `turningDirection`); a NaN or
/// infinite command is an error naming the model.
struct ActuatorCommands {
  std::vector<double> velocity;  ///< [rad/s] by actuator_number
  Duration stamp{0};             ///< sim time the command was written [ns]
};

/// The topic the model's motors listen on, resolved by the motor model at configure:
/// "/" + robotNamespace + "/" + commandSubTopic ("/X3/gazebo/command/motor_speed"). Transport
/// subscribes ignition::msgs::Actuators on it into ActuatorCommands.
struct ActuatorCommandTopic {
  std::string topic;
};

/// Rotor speeds [rad/s] by actuator_number after the motor dynamics (Gazebo's filtered
/// reference: the speed the rotor joint is commanded, times rotorVelocitySlowdownSim; >= 0 for
/// non-negative commands; the spin direction is the motor's turning direction). Written every
/// step by the motor model.
struct RotorVelocities {
  std::vector<double> velocity;  ///< [rad/s] by actuator_number
};

/// Where transport publishes RotorVelocities, set by the motor model at configure.
struct RotorVelocityTopic {
  /// ignition::msgs::Actuators with every rotor speed (velocity by actuator_number):
  /// "/" + robotNamespace + "/motor_speed".
  std::string topic;
  /// Each rotor's own `motorSpeedPubTopic` ("/X3/motor_speed/0"), by actuator_number;
  /// ignition::msgs::Double with that rotor's speed [rad/s]. Empty string: not published.
  std::vector<std::string> per_actuator;
};

/// Mechanical power each rotor absorbs [W] by actuator_number: drag torque × speed
/// (momentConstant · thrust · ω). Written every step by the motor model; read by the battery.
struct RotorShaftPower {
  std::vector<double> watts;
};

/// Per-rotor thrust efficiency, by actuator_number: 1 = healthy, 0 = failed (the motor is
/// unpowered and spins down), in between = loss of efficiency (thrust, and with it drag torque,
/// scale by it). Missing entries count as 1.
struct RotorFaults {
  std::vector<double> efficiency;
};

// ---- velocity control (on the model entity) -----------------------------------------------------

/// Velocity setpoint for MulticopterVelocityControl (ignition::msgs::Twist on
/// TwistCommandTopic), as Gazebo's controller reads it: `linear`: desired velocity of the com
/// link in its own (body) frame, x forward, y left, z up [m/s]; `angular.Z()`: desired yaw rate
/// [rad/s] (x, y limited but not tracked). `received` is false until a twist has been written:
/// the controller commands nothing before (Gazebo's waits for its first message), and a
/// disabled controller clears it (Gazebo forgets the last twist when disabled).
struct TwistCommand {
  ignition::math::Vector3d linear;   ///< [m/s], body FLU
  ignition::math::Vector3d angular;  ///< [rad/s], body FLU; only z is tracked
  bool received = false;
};

/// "/" + robotNamespace + "/" + commandSubTopic of the velocity controller ("/X3/gazebo/
/// command/twist"); transport subscribes ignition::msgs::Twist on it into TwistCommand.
struct TwistCommandTopic {
  std::string topic;
};

/// Whether MulticopterVelocityControl drives the motors (ignition::msgs::Boolean on
/// VelocityControlEnableTopic). Enabled at start, as Gazebo's. Disabled: it commands 0 rad/s to
/// every rotor and forgets the last twist.
struct VelocityControlEnable {
  bool value = true;
};

/// "/" + robotNamespace + "/" + enableSubTopic ("/X3/enable").
struct VelocityControlEnableTopic {
  std::string topic;
};

// ---- battery (on the model entity) --------------------------------------------------------------

/// State of a linear battery (written every step by the LinearBattery system; published as
/// ignition::msgs::BatteryState on BatteryTopic).
struct Battery {
  double voltage = 0;               ///< terminal voltage under load [V]
  double open_circuit_voltage = 0;  ///< [V], linear in state of charge
  double current = 0;               ///< drawn current [A], >= 0 when discharging
  double charge = 0;                ///< remaining charge [A·h]
  double capacity = 0;              ///< full charge [A·h]
  double percentage = 0;            ///< charge / capacity, 0..1
  double power = 0;                 ///< electrical power drawn in the last step [W]
  double energy_used = 0;           ///< energy drawn since start [J]
  bool empty = false;               ///< charge reached 0: motors produce no thrust
  /// The load is applied (Gazebo's startDraining): from the start with `start_draining`, else
  /// from the first joint command of the model or drain-start message; false after a
  /// stop-draining message until one of those again (then nothing is updated while not
  /// charging: charge and current stay as they were).
  bool draining = false;
  bool charging = false;  ///< a charging current was applied in the last step
};

/// "/model/<model>/battery/<battery_name>/state".
struct BatteryTopic {
  std::string topic;
  bool invert_current = false;    ///< `invert_current_sign`: publish −current
  double percentage_scale = 1.0;  ///< 100 with `fix_issue_225` true (Gazebo then sends 0..100)
};

/// Whether the battery is being recharged (Gazebo's `enable_recharge`), on the model entity.
/// Written by transport from ignition::msgs::Boolean on BatteryRechargeTopic (any message on
/// `start` sets true, on `stop` false) and by LinearBattery, which adds a charging current
/// capacity / charging_time while it is true, sets it false when the battery is full, and sets
/// it true when the state of charge falls below `soc_threshold`.
struct BatteryRecharge {
  bool charging = false;
};

/// The recharge topics, set by LinearBattery when `enable_recharge` is true:
/// "/model/<model>/battery/<battery_name>/recharge/start" and ".../recharge/stop".
struct BatteryRechargeTopic {
  std::string start;
  std::string stop;
};

/// A command to start or stop draining the battery (Gazebo's `power_draining_topic` and
/// `stop_power_draining_topic`), on the model entity. Written by transport (any message on a
/// BatteryDrainTopics topic); LinearBattery applies it at its next PreUpdate and sets it back to
/// kNone. kStart starts draining (also before start_on_motion saw any motion); kStop stops it
/// until the next kStart (motion alone does not restart it).
struct BatteryDrainCommand {
  enum class Action : std::uint8_t { kNone, kStart, kStop };
  Action action = Action::kNone;
};

/// The draining topics of a battery, set by LinearBattery from its `power_draining_topic` and
/// `stop_power_draining_topic` parameters (absolute: a leading '/' is added if missing). Transport
/// subscribes any message type on each: a message on `start` sets BatteryDrainCommand kStart, on
/// `stop` kStop. Names are unique across both lists.
struct BatteryDrainTopics {
  std::vector<std::string> start;
  std::vector<std::string> stop;
};

// ---- mission (on the model entity) --------------------------------------------------------------

enum class MissionPhase : std::uint8_t {
  kIdle,       ///< not started (waiting for its start time)
  kTakeoff,    ///< climbing to the take-off altitude
  kWaypoint,   ///< flying to `waypoint`
  kHold,       ///< holding at `waypoint` for its hold time
  kLand,       ///< descending
  kCompleted,  ///< landed after the last item
  kFailed,     ///< could not complete (timeout, crash, battery empty); see MissionState::reason
};

/// "idle", "takeoff", "waypoint", "hold", "land", "completed", "failed".
constexpr const char* mission_phase_name(MissionPhase p) {
  switch (p) {
    case MissionPhase::kIdle:
      return "idle";
    case MissionPhase::kTakeoff:
      return "takeoff";
    case MissionPhase::kWaypoint:
      return "waypoint";
    case MissionPhase::kHold:
      return "hold";
    case MissionPhase::kLand:
      return "land";
    case MissionPhase::kCompleted:
      return "completed";
    case MissionPhase::kFailed:
      return "failed";
  }
  return "?";
}

/// Progress of the mission layer (MulticopterMission system), updated every step.
struct MissionState {
  MissionPhase phase = MissionPhase::kIdle;
  int waypoint = -1;                ///< index of the current waypoint (-1 before the first)
  int waypoint_count = 0;           ///< waypoints in the mission
  ignition::math::Vector3d target;  ///< current target position, world ENU [m]
  double distance = 0;              ///< from the base link to the target [m]
  double tracking_error = 0;        ///< horizontal distance from the current leg's line [m]
  double max_tracking_error = 0;    ///< max tracking_error over waypoint legs so far [m]
  int item = -1;                    ///< index of the current mission item (-1 before start)
  double flight_time = 0;           ///< from take-off to completion (or to now) [s]
  Duration started{0};              ///< sim time the vehicle took off [ns]
  Duration finished{0};             ///< sim time it completed or failed [ns] (0 while running)
  std::string reason;               ///< why it failed (empty otherwise)
};

/// "/model/<model>/mission/state".
struct MissionStateTopic {
  std::string topic;
};

/// A mission sent at run time (ignition::msgs::StringMsg on MissionCommandTopic), on the model
/// entity. `text`: the mission items in the SDF plugin's syntax, e.g.
/// `<takeoff altitude="5"/><waypoint>10 0 5</waypoint><land/>` (optionally wrapped in
/// `<mission>...</mission>`). MulticopterMission consumes it at its next PreUpdate: a valid
/// mission replaces the current one (flown from the vehicle's current state); an invalid one is
/// rejected with one error log line and changes nothing. Either way the text is cleared.
struct MissionCommand {
  std::string text;
  std::string source;  ///< where it came from, for messages ("topic /model/x3/mission")
};

/// "/model/<model>/mission": transport subscribes ignition::msgs::StringMsg into MissionCommand.
struct MissionCommandTopic {
  std::string topic;
};

// ---- faults -------------------------------------------------------------------------------------

/// One fault that has been applied (FaultInjection keeps the list on the world entity).
struct FaultEvent {
  Duration time{0};         ///< sim time it was applied [ns]
  std::string description;  ///< "rotor 2 of X3 efficiency 0"
};

/// Every fault applied so far, in order (on the world entity).
struct FaultLog {
  std::vector<FaultEvent> events;
};

/// Faults commanded at run time (ignition::msgs::StringMsg on FaultCommandTopic), on the world
/// entity. `text`: one or more `<fault .../>` elements in the SDF schedule's syntax
/// (src/systems/fault_injection/README.md); `time` is optional (absent or in the past: applied
/// at the next step). FaultInjection consumes it at its next PreUpdate; a command with any
/// invalid fault (unknown type, model, sensor or rotor) is rejected whole with one error log
/// line. Either way the text is cleared.
struct FaultCommand {
  std::string text;
  std::string source;  ///< where it came from, for messages ("topic /world/w/fault")
};

/// "/world/<world>/fault": transport subscribes ignition::msgs::StringMsg into FaultCommand.
struct FaultCommandTopic {
  std::string topic;
};

}  // namespace kestrel::components
