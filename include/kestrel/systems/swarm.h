#pragma once
/// @file `kestrel make-swarm N [-o FILE]`: a world of N X3-class quadcopters, each flying its
/// own pattern (a square, a triangle, a hexagon or an out-and-back line, with its own size,
/// altitude and heading), written for Kestrel. The vehicle is generated once as a template and
/// instantiated N times by name and pattern only (no re-parsing, no per-vehicle files).

#include <cstdint>
#include <string>

namespace kestrel::systems {

struct SwarmOptions {
  int count = 10;        ///< number of vehicles (1..100000)
  double spacing = 4.0;  ///< grid spacing of the take-off positions [m]
  bool sensors = false;  ///< give each vehicle IMU, magnetometer, barometer and GNSS
  double wind = 0.0;     ///< wind speed from the west (+x) [m/s]
};

/// The SDF text of the swarm world. @throws Error if count is out of range.
std::string make_swarm_world(const SwarmOptions& options);

/// Writes make_swarm_world(options) to `output` ("" or "-": stdout). Returns the exit code.
/// @throws Error if the file cannot be written.
int run_make_swarm_command(const SwarmOptions& options, const std::string& output);

}  // namespace kestrel::systems
