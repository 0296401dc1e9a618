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
#include "kestrel/ecs/registry.h"

namespace kestrel::sitl {

struct ChannelMap {
  struct Channel {
    int index = 0;      ///< autopilot output channel (0-based)
    int rotor = 0;      ///< actuator_number of the rotor it drives
    double scale = 0;   ///< rotor speed at full output [rad/s]
    double offset = 0;  ///< added to the normalised output before clamping
    std::string where;  ///< FILE:LINE of the <channel> (empty for a default map)
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
  /// Writes rotor speeds into `out` (resized to rotor_count()); a non-finite input (a channel
  /// that outputs nothing) gives its rotor 0.
  void apply(std::span<const double> inputs, bool active, std::vector<double>& out) const;
};

/// Autopilot output channels → control surface positions (planes, VTOLs): each <surface> channel
/// c commands position = scale · clamp(s_c, −1, 1) + offset [rad] on `topic`, the command topic
/// of a JointPositionController of the model (an ignition.msgs.Double topic, or with <actuator>
/// the `position[actuator]` of an Actuators topic), written into the model's TopicInputs entries
/// as if the message had arrived. s_c is the channel's bipolar output: PX4's controls (−1..1),
/// ArduPilot's 2·(pwm − pwm_min)/(pwm_max − pwm_min) − 1. Inactive: the surfaces get `offset`,
/// and so does a surface whose input is not finite (a channel that outputs nothing).
struct SurfaceMap {
  struct Surface {
    int index = 0;       ///< autopilot output channel (0-based)
    std::string topic;   ///< JointPositionController command topic
    int actuator = -1;   ///< position index in an Actuators topic; −1: a Double topic
    double scale = 0.5;  ///< position at full output [rad]
    double offset = 0;   ///< position at zero output [rad]
    std::string where;   ///< FILE:LINE of the <surface>
    std::vector<std::size_t> entries;  ///< the TopicInputs entries on `topic` (resolve())
  };
  std::vector<Surface> surfaces;

  /// The <surface> children of `config` (<index>, <topic>, optional <actuator>, <scale> (0.5),
  /// <offset> (0)). @throws Error on an index out of range or also mapped to a rotor (in
  /// `rotors`), a duplicate index, an empty topic, a negative actuator, a non-finite number, an
  /// unknown child.
  static SurfaceMap parse(const Element& config, const ChannelMap& rotors, int max_channels,
                          const std::string& who);
  /// Finds each surface's entries on the model. @throws Error at the <surface>'s FILE:LINE
  /// when no JointPositionController of the model listens on its topic (the channel would
  /// move nothing).
  void resolve(const ecs::Registry& r, ecs::Entity model, const std::string& who);
  /// Writes the positions (resolve() first). `unipolar`: inputs in 0..1 (ArduPilot's).
  void apply(std::span<const double> inputs, bool unipolar, bool active, ecs::Registry& r,
             ecs::Entity model) const;
};

}  // namespace kestrel::sitl
