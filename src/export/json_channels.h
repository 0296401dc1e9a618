#pragma once
// The export model's JSON channels of sensors and vehicle state (src/export/README.md,
// "Channels"): one per IMU, magnetometer, air pressure, altimeter, navsat, air speed and
// force/torque sensor on its SensorTopic, and per model its battery, mission, rotor speeds and
// actuator commands on their Gazebo topics; the world's applied faults. Each a JSON object with
// a JSON Schema, which Foxglove's Plot panel reads by field path (`/imu.linear_acceleration.z`).

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::exports::detail {

/// What a text feed writes into: JSON text, or, when `raw_numbers`, JSON text whose numbers are
/// still doubles (kRawNumber, then the double's 8 bytes), for finish_json (export.h) to write on
/// another thread.
struct JsonText {
  std::string& text;
  bool raw_numbers = false;
};
/// The byte before a raw number: a control character, which JSON text never holds unescaped.
inline constexpr char kRawNumber = '\x01';

/// A JSON channel fed by one component of one entity.
struct JsonFeed {
  std::uint32_t channel = 0;
  ecs::Entity entity = ecs::kNullEntity;
  /// Sensors: the reading's sequence (0: none yet) and its stamp; the fault log: its number of
  /// events + 1 (append-only). Empty for the other state components, whose message is sent
  /// when its text differs from the last one sent.
  std::function<std::uint64_t(const ecs::Registry&, ecs::Entity, Duration&)> sequence;
  /// Sensors: the same without a registry lookup each step — `locate` finds the reading (or
  /// nullptr) when the registry's layout changed (Registry::layout_epoch: the pointer stays valid
  /// until then), `sequence_at` reads its sequence and stamp there. Null for the others.
  const void* (*locate)(const ecs::Registry&, ecs::Entity) = nullptr;
  std::uint64_t (*sequence_at)(const void* reading, Duration& stamp) = nullptr;
  const void* reading = nullptr;  ///< where `locate` found it
  /// Writes the message; false when the entity has no such component (now).
  std::function<bool(const ecs::Registry&, ecs::Entity, nlohmann::json&)> make;
  /// Or writes its text directly, without a JSON tree (the state feeds that change every
  /// step: battery, mission, rotor speeds and commands; the fixed-shape sensor samples: IMU,
  /// magnetometer, barometer, altimeter, GNSS, air speed); `make` is then empty.
  std::function<bool(const ecs::Registry&, ecs::Entity, JsonText&)> text;
  std::uint64_t seq = 0;  ///< sensors: the sequence last sent (0: none)
  std::string last;       ///< state: the text last sent (empty: none)
};

/// Writes the JSON text of a finite double at `out` (at most 24 characters) and returns its
/// end: the shortest decimal text that reads back as `v`, exactly as fmt's "{}" writes it
/// (fmt's Dragonbox finds the digits; they are laid out here, for half of what fmt's own float
/// writer costs), with ".0" after an integral value as nlohmann's dump writes it (a float stays
/// a float for readers such as Python's json).
char* json_number(char* out, double v);

/// Makes a channel: (topic, schema name, JSON Schema text) → its id.
using AddJsonChannel =
    std::function<std::uint32_t(const std::string&, const std::string&, const std::string&)>;

/// The JSON feeds of the sensors and state the registry holds (after configure), their channels
/// made with `add` in a fixed order (sensors, then models, then the world's faults on
/// `/world/<world_name>/faults`).
std::vector<JsonFeed> json_feeds(const ecs::Registry& reg, const std::string& world_name,
                                 const AddJsonChannel& add);

}  // namespace kestrel::exports::detail
