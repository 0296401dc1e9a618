#pragma once
/// @file `kestrel make-swarm N [-o FILE]`: a world of N X3-class quadcopters, each flying its
/// own pattern (a square, a triangle, a hexagon or an out-and-back line, with its own size,
/// altitude and heading), written for Kestrel. The vehicle model is written once, to its own file,
/// and included N times; Kestrel's loader parses it once (no re-parsing, no per-vehicle files).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kestrel::systems {

struct SwarmOptions {
  int count = 10;  ///< number of vehicles (1..100000)
  /// A third of the take-off grid's pitch [m]: neighbouring vehicles take off 3 × spacing apart
  /// (12 m by default; each flight pattern stays within about 10 m of its take-off point's cell).
  double spacing = 4.0;
  bool sensors = false;  ///< give each vehicle IMU, magnetometer, barometer and GNSS
  double wind = 0.0;     ///< wind speed from the west (+x) [m/s]
  /// Physics islands (`<kestrel:physics_islands/>`; false: the element's off form): vehicles
  /// near each other share an island and collide; N is not bounded by MuJoCo 2.2's 2 GiB data
  /// limit (~600 X3s in one model), but at 100 vehicles each vehicle-step costs more (see
  /// docs/performance.md). Unset: islands above kIslandsAbove vehicles (no element).
  std::optional<bool> islands;
  static constexpr int kIslandsAbove = 500;
};

/// The two files of a swarm: the vehicle model (written once) and the world that includes it
/// once per vehicle, each include giving the vehicle's name, pose, velocity controller (its topic
/// namespace) and mission.
struct SwarmFiles {
  std::string world;    ///< SDF text of the world
  std::string vehicle;  ///< SDF text of the vehicle model
};

/// The swarm's files; the world's <include>s name the vehicle file as `vehicle_uri` (a path
/// relative to the world file, an absolute path or a model:// URI).
/// @throws Error if count or spacing is out of range or the URI is empty.
SwarmFiles make_swarm(const SwarmOptions& options, const std::string& vehicle_uri);

/// The vehicle file written next to a swarm world: WORLD_STEM.vehicle.sdf.
std::filesystem::path vehicle_file_for(const std::filesystem::path& world_file);

/// Writes the world to `output` ("": swarm_N.sdf in the current directory) and the vehicle
/// model to vehicle_file_for(output). Returns the exit code.
/// @throws Error if a file cannot be written (the CLI refuses "-": two files cannot go to stdout).
int run_make_swarm_command(const SwarmOptions& options, const std::string& output);

}  // namespace kestrel::systems
