#pragma once
// Test support for the ground-vehicle systems: Gazebo's test vehicle (gz-sim's
// test/worlds/diff_drive.sdf and diff_drive_skid.sdf: a 1.14 kg box chassis on two 0.3 m
// sphere wheels 1.25 m apart and a ball-jointed caster, or on four wheels), written here from
// its published numbers, in a world with a ground plane and a 1 ms step.

#include <string>

namespace kestrel::systems::testing {

// The vehicle's numbers (Gazebo's test world).
inline constexpr double kWheelRadius = 0.3;       // [m]
inline constexpr double kWheelSeparation = 1.25;  // [m] (the wheels are 1.250058 m apart)
inline constexpr double kVehicleZ = 0.325;        // model frame height [m]

struct VehicleOptions {
  std::string name = "vehicle";
  std::string pose = "0 0 0.325 0 0 0";
  bool skid = false;          ///< four wheels (diff_drive_skid.sdf) instead of two and a caster
  std::string wheel_surface;  ///< extra XML inside every wheel <collision> (e.g. <surface>)
  /// The four wheels (with `skid`) get gz-sim's mecanum_drive.sdf rollers: μ 1 along fdir1
  /// (±45° in the chassis frame), μ2 0 across it.
  bool mecanum_rollers = false;
  std::string plugins;        ///< XML inside the model, after the joints
};

/// The vehicle model (no <sdf>/<world>).
std::string vehicle_model(const VehicleOptions& o);
/// A world "w" with a ground plane, `models` and `extra` (plugins) inside <world>.
std::string ground_world(const std::string& models, const std::string& extra = "",
                         double step = 0.001);

}  // namespace kestrel::systems::testing
