#pragma once
/// @file The transport door (ignition-transport 11 / ignition-msgs 8), seen from outside.
///
/// Nothing here includes ignition headers. Topic, service and message names are Gazebo's; see
/// src/transport/README.md for the full list.
///
/// Wiring (what `kestrel run` does):
///   transport::configure_network(ip);                        // before any node exists
///   runner.add_system(transport::make_world_transport_system(runner), ...);
///   runner.configure();
/// The default systems UserCommands and SceneBroadcaster (world/builtin.h) offer their
/// services only in a world that has the world transport system; without it (`--no-transport`)
/// they do nothing.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/sim/runner.h"
#include "kestrel/system.h"

namespace kestrel::transport {

/// Options of the world transport system.
struct Options {
  /// WorldStatistics publication rate on /world/W/stats and /stats [Hz of wall time].
  double stats_rate_hz = 10;
  /// How long a service waits for the step thread to carry out a request before answering
  /// false (the world stopped or is stuck) [ms of wall time].
  std::chrono::milliseconds request_timeout{3000};
};

/// Chooses the address ignition-transport binds to and announces itself on, by setting IGN_IP:
/// `ip` if given (`--transport-ip`), else the user's IGN_IP if set, else 127.0.0.1 so that
/// nothing leaves the machine. Must run before any transport node exists in the process. When
/// the address is a loopback one, it also restricts discovery to the loopback device
/// (restrict_discovery_to_loopback). @returns the address in force. @throws Error if `ip` is
/// not a dotted IPv4 address.
std::string configure_network(const std::optional<std::string>& ip);

/// Binds ignition-transport's discovery sockets (which it binds to 0.0.0.0 whatever IGN_IP
/// says) to the loopback device, so that no other host can send discovery messages to this
/// process or make it a relay of its own discovery. Creates the process-wide transport state if
/// it does not exist yet. Logs a warning if it cannot restrict both. @returns how many sockets it
/// restricted (2: messages and services).
int restrict_discovery_to_loopback();

/// The descriptors of this process's ignition-transport discovery sockets (UDP, bound to the
/// discovery ports); empty before the process-wide transport state exists.
std::vector<int> discovery_sockets();

/// The world transport system (priority kDefault, attached to the world): /world/W/control,
/// /world/W/stats and /stats, /world/W/clock and /clock, /world/W/set_physics, /gazebo/worlds,
/// and the sensor/actuator bridges of docs contracts. Service callbacks never touch the
/// registry: they queue work on `runner` (Runner::post and its control calls).
/// @pre `runner` outlives the system (the Runner owns it).
std::unique_ptr<System> make_world_transport_system(sim::Runner& runner, Options options = {});

/// Gazebo's UserCommands (priority −16384): /world/W/create, /create_multiple, /remove,
/// /set_pose, /set_pose_vector and their /blocking variants.
std::unique_ptr<System> make_user_commands_system();

/// Gazebo's SceneBroadcaster: /world/W/pose/info and /world/W/dynamic_pose/info (Pose_V),
/// /world/W/scene/info (Scene service), /world/W/state (SerializedStepMap service).
std::unique_ptr<System> make_scene_broadcaster_system();

/// Gazebo's TriggeredPublisher: publishes its <output> messages when a message on its <input>
/// topic matches (src/transport/triggered_publisher/README.md).
std::unique_ptr<System> make_triggered_publisher_system();

}  // namespace kestrel::transport
