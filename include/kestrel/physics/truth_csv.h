#pragma once
/// @file Ground-truth CSV writer (`kestrel run --truth-csv FILE [--truth-rate HZ]`).
///
/// A PostUpdate system writing, per sample, one row per moving (non-static) model directly under
/// the world. Columns (src/physics/README.md, "Truth CSV", has the full description):
/// `sim_time,model,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz` then `rotor_0 … rotor_{N-1}` for the
/// largest number of rotors a model has when the first row is written (none without rotors).
/// Fields are quoted as RFC 4180 says when they hold a comma, a double quote or a line break
/// (model names). Every write is checked (core/output.h): a failed write stops the run with an
/// Error saying how many rows the file holds, and the file ends on its last complete row. The
/// file is flushed and checked when the run ends (sim::RunEnded).

#include <memory>
#include <string>

#include "kestrel/core/time.h"
#include "kestrel/system.h"

namespace kestrel::physics {

/// The default sample rate [Hz of sim time]: 100 Hz resolves vehicle motion (a multicopter's
/// attitude dynamics are below ~20 Hz) five times over and keeps files small: a 20-vehicle swarm
/// writes ~2,000 rows (~0.4 MB) per second of sim time, where one row per 1 ms step wrote
/// 20,000 (159 MB after 23 s).
inline constexpr double kDefaultTruthRateHz = 100;

struct TruthCsvOptions {
  std::string path;                      ///< output file (created or truncated)
  double rate_hz = kDefaultTruthRateHz;  ///< samples per second of sim time; 0 = every step
};

/// @throws Error if the file cannot be opened or rate_hz is negative or not finite.
std::unique_ptr<System> make_truth_csv_system(const TruthCsvOptions& options);

/// `field` as an RFC 4180 CSV field: as is, or in double quotes (inner quotes doubled) when it
/// holds a comma, a double quote, CR or LF.
std::string csv_field(const std::string& field);

}  // namespace kestrel::physics
