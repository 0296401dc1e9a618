#pragma once
/// @file SITL components (src/sitl).

#include <optional>

namespace kestrel::components {

/// On the world entity: wall-clock limits for every SITL bridge of the run, written by
/// `kestrel run --sitl-connect-timeout SEC / --sitl-answer-timeout SEC` before configure and
/// read by the PX4 and ArduPilot bridges at configure, where each set value overrides the
/// bridge's <connect_timeout> / <answer_timeout>. Unset (the default): the bridge's parameter,
/// and without one the bridge waits as long as it takes (src/sitl/README.md, "Lockstep").
struct SitlTimeouts {
  std::optional<double> connect_s;  ///< [s, wall clock] bound on waiting for a (re)connection
  std::optional<double> answer_s;   ///< [s, wall clock] no answer in this time: run on without
};

}  // namespace kestrel::components
