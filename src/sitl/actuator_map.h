#pragma once
// Autopilot output channels → rotor speed commands (components::ActuatorCommands), shared by the
// PX4 and ArduPilot bridges.
//
// Each mapped channel c drives rotor (actuator_number) r:  ω_r = scale · clamp(u_c + offset, 0, 1)
// where u_c is the channel's normalised output (PX4: HIL_ACTUATOR_CONTROLS.controls, motors in
// 0..1; ArduPilot: (pwm − pwm_min) / (pwm_max − pwm_min)). Disarmed, stalled or disconnected:
// every mapped rotor gets 0.

#include <span>
#include <string>
#include <vector>

#include "kestrel/core/element.h"

namespace kestrel::sitl {

struct ChannelMap {
  struct Channel {
    int index = 0;        ///< autopilot output channel (0-based)
    int rotor = 0;        ///< actuator_number of the rotor it drives
    double scale = 0;     ///< rotor speed at full output [rad/s]
    double offset = 0;    ///< added to the normalised output before clamping
  };
  std::vector<Channel> channels;

  /// Channel i → rotor i for i < count, all with `scale`.
  static ChannelMap identity(int count, double scale);
  /// The <channel> children of `config` (each: <index>, <rotor>, optional <scale> (default
  /// `default_scale`) and <offset> (0)); `fallback` when there are none.
  /// @throws Error on a duplicate index, an index ≥ max_channels, a negative rotor, a non-finite
  /// or negative scale, or an unknown child inside <channel>.
  static ChannelMap parse(const Element& config, const ChannelMap& fallback, int max_channels,
                          double default_scale, const std::string& who);

  /// Number of rotors the map writes (highest rotor + 1).
  std::size_t rotor_count() const;
  /// Writes rotor speeds into `out` (resized to rotor_count()); non-finite inputs count as 0.
  void apply(std::span<const double> inputs, bool active, std::vector<double>& out) const;
};

}  // namespace kestrel::sitl
