#pragma once
/// @file The systems compiled into Kestrel: one explicit list (src/world/builtin.cc), no
/// static-initialisation registration. Adding a system is one line in that list.

#include <memory>
#include <span>
#include <string_view>

#include "kestrel/system.h"

namespace kestrel::world {

/// A system compiled into Kestrel.
struct BuiltinSystem {
  /// Kestrel's name, which is also Gazebo's class name without namespace ("Physics"). A
  /// `<plugin>` resolves to it by `name` (gz::sim::systems::Physics, ignition::gazebo::systems::
  /// Physics, kestrel::systems::Physics, Physics) or by `filename` (gz-sim-physics-system,
  /// libignition-gazebo6-physics-system.so, kestrel-physics-system, ...), compared without case,
  /// '-' or '_'.
  std::string_view name;
  /// Creates a fresh instance (configure is called later by the Runner).
  std::unique_ptr<System> (*make)();
  /// One of Gazebo's default systems (Physics, UserCommands, SceneBroadcaster): added to every
  /// world that does not declare it, unless the world has <kestrel:no_default_systems/>.
  bool is_default = false;
  /// SDF sensor types this system serves, space separated ("imu"), for `kestrel check`.
  std::string_view serves_sensors = {};
};

/// Every built-in system, in a fixed order.
std::span<const BuiltinSystem> builtin_systems();

}  // namespace kestrel::world
