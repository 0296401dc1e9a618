#pragma once
/// @file Software-in-the-loop bridges to real autopilots (src/sitl, the only code that speaks
/// MAVLink or ArduPilot's JSON protocol).
///
/// - Px4Bridge: Kestrel is the TCP server PX4's simulator_mavlink module connects to
///   (127.0.0.1:4560 + instance). Sends HIL_SENSOR, HIL_GPS and HIL_STATE_QUATERNION from the
///   vehicle's sensors and truth; turns HIL_ACTUATOR_CONTROLS into ActuatorCommands. True
///   lockstep: once PX4 has answered once, physics does not advance past a sensor message
///   until PX4 answers it.
/// - ArduPilotBridge: Kestrel listens on UDP 127.0.0.1:9002 + 10·instance for ArduPilot's SITL
///   JSON backend; every servo packet is answered with one JSON state and advances physics by
///   the packet's step (lockstep by construction).
///
/// Both are systems attached to a vehicle model (a <plugin> in the model, or `kestrel run
/// --px4 MODEL[:INSTANCE]` / `--ardupilot MODEL[:INSTANCE]`). Parameters: src/sitl/README.md.

#include <memory>
#include <string>

#include "kestrel/system.h"

namespace kestrel::sim {
class Runner;
}

namespace kestrel::sitl {

/// A fresh PX4 bridge system (configure it through a <plugin> element).
std::unique_ptr<System> make_px4_bridge_system();
/// A fresh ArduPilot JSON bridge system.
std::unique_ptr<System> make_ardupilot_bridge_system();
/// A fresh RflySim (CopterSim UDP structs) bridge system (src/sitl/rflysim/README.md).
std::unique_ptr<System> make_rflysim_bridge_system();

/// A `--px4` / `--ardupilot` argument the world cannot take (a malformed MODEL[:INSTANCE], a
/// model that is missing, static, has no rotors, is already flown or controlled, or a port
/// another bridge uses): a command-line usage error.
class AttachError : public Error {
 public:
  using Error::Error;
};

/// Which autopilot a command-line attachment is for.
enum class Autopilot { kPx4, kArduPilot };

/// The port a bridge listens on by default: PX4 TCP 4560 + instance, ArduPilot UDP
/// 9002 + 10·instance (the autopilots' own SITL conventions).
int default_port(Autopilot autopilot, unsigned instance);

/// "MODEL[:INSTANCE]" as given to --px4 / --ardupilot.
struct AttachSpec {
  std::string model;      ///< a top-level model name (or a scoped name "world::model")
  unsigned instance = 0;  ///< PX4: port 4560 + instance; ArduPilot: port 9002 + 10·instance
};

/// Parses "MODEL[:INSTANCE]". @throws AttachError naming the flag and the text on a bad spec
/// (no model name, an empty or non-numeric INSTANCE after ':', INSTANCE above 1000).
AttachSpec parse_attach_spec(const std::string& text, const std::string& flag);

/// Adds a bridge with default parameters (and instance from `spec`) to the model named in
/// `spec`, as if the model had declared the plugin. Call after the world is loaded and before
/// runner.configure(), once per argument (the checks see the systems added so far).
/// @throws AttachError if the world has no such model; if the model is static or has no
///         MulticopterMotorModel of its own (the bridge's rotor commands would drive nothing); if
///         it already has a bridge (the same argument twice, two autopilots on one model, or a
///         bridge its <plugin> declares); if a MulticopterVelocityControl or MulticopterMission
///         of the model would drive the same rotors (named by FILE:LINE); or if another bridge
///         of the same autopilot listens on the same port.
void attach_bridge(sim::Runner& runner, Autopilot autopilot, const AttachSpec& spec);

/// Adds an RflySim bridge to the model named by "MODEL[:ID]" (`--rflysim`; ID 1 when absent,
/// RflySim's CopterIDs start at 1), as if the model declared the plugin with <copter_id>ID.
/// Call after the world is loaded and before runner.configure().
/// @throws AttachError on a malformed argument, an ID of 0, a missing or static model, a model
///         without a MulticopterMotorModel of its own, or a model or CopterID already given an
///         RflySim bridge.
void attach_rflysim(sim::Runner& runner, const std::string& text);

/// Gives each PX4 bridge without <channel> and <surface> children PX4's Gazebo layout of its
/// model (src/sitl/README.md): output a drives the motor with actuator_number a at that motor's
/// maxRotVelocity (or the bridge's <max_rotor_velocity>), output M + k the JointPositionController
/// on /model/<model>/servo_k at ±45° (M = highest actuator_number + 1), and says so in one line
/// with the PX4 parameters that give that layout. Then refuses a bridge whose channel map does not
/// drive every motor of its model (each MulticopterMotorModel's actuator_number must be some
/// channel's rotor), naming the model, its motors and the map. Call after every bridge is added
/// (SDF and command line), before runner.configure(). @throws AttachError for a bridge attached
/// from the command line, Error (with the <plugin>'s FILE:LINE) for one the world declares.
void check_channel_maps(sim::Runner& runner);

}  // namespace kestrel::sitl
