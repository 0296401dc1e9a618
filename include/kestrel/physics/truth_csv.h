#pragma once
/// @file Ground-truth CSV writer (`kestrel run --truth-csv FILE [--truth-rate HZ]`).
///
/// A PostUpdate system writing, per sample, one row per moving (non-static) model directly under
/// the world, with the header
/// `sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,rotor_0,…,rotor_7`:
/// sim_time [s] of the state (end of the step); model: its name; x y z: world ENU position of
/// the model frame [m]; qw qx qy qz: its orientation (X_WM rotation); vx vy vz: world-frame
/// linear velocity of the model frame origin [m/s]; wx wy wz: angular velocity in the model
/// (body) frame [rad/s]. Velocities come from the model's canonical link (first link).
/// rotor_0 … rotor_7: rotor speeds [rad/s] by actuator number from the model's
/// components::RotorVelocities (multicopters); empty cells for models without rotors.
/// Numbers are written in shortest round-trip form. The file is flushed when the system is
/// destroyed (normal exit, SIGINT/SIGTERM via the Server's clean stop) and on flush().

#include <cstdio>
#include <memory>
#include <string>

#include "kestrel/core/time.h"
#include "kestrel/system.h"

namespace kestrel::physics {

struct TruthCsvOptions {
  std::string path;    ///< output file (created or truncated)
  double rate_hz = 0;  ///< samples per second of sim time; 0 = every step
};

/// @throws Error if the file cannot be opened or rate_hz is negative or not finite.
std::unique_ptr<System> make_truth_csv_system(const TruthCsvOptions& options);

}  // namespace kestrel::physics
